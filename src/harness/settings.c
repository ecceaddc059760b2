/*
 * settings.c - what the harness changes in the loadgen settings before a test, and the
 * labels every output carries. A field is changed only when nothing the user gave set it
 * (its origin is the default or the rules file, never user.conf, audit.config or a flag),
 * and every change is recorded in the settings origins ("inferbench: ...") and run.json:
 *
 *   --quick            a wall-clock budget (quick_s, model build and warm-up included): what
 *                      is left after the warm-up, less a reserve for the logs, sets
 *                      max_duration, and min_duration is a third of it (at most 1 s);
 *                      min_query_count 1 for Offline (its one query is sized from the
 *                      warm-up rate, so a 13 s 3D U-Net volume is not run 64 times), else the
 *                      fewest early stopping accepts (SingleStream 64, Server 500 at p99,
 *                      MultiStream 662). A model too slow for those counts in the budget
 *                      ends INVALID, and says so; the run is labelled "not submittable" in
 *                      result.json, run.json and on the console;
 *   small datasets     performance_sample_count_override lowered to the dataset size when a
 *                      (synthetic) dataset holds fewer samples than the official count;
 *   warm-up targets    offline_expected_qps = twice the warm-up rate (the Offline query is
 *                      sized from it: too low and the run ends before min_duration; too high
 *                      only makes it longer), server_target_qps = half of it, single_stream_expected_latency_ns / multi_stream_expected_latency_ns
 *                      = the warm-up latencies, so that a run without a user.conf is sized to
 *                      this machine instead of the TestSettings defaults (1 QPS).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/strbuf.h"
#include "base/time.h"
#include "harness/run_internal.h"

/* True when the field kept its default or came from the rules file. */
static bool adjustable(const ib_harness_opts *o, const char *field)
{
    if (!o->origins)
        return true;
    const char *w = ib_lg_settings_origin_get(o->origins, field);
    if (!w)
        return true;
    size_t n = o->rules_origin ? strlen(o->rules_origin) : 0;
    return n && strncmp(w, o->rules_origin, n) == 0 && w[n] == ':';
}

static void note(const ib_harness_opts *o, run_ctx *c, const char *field, const char *why,
                 const char *fmt, ...) IB_PRINTF(5, 6);

static void note(const ib_harness_opts *o, run_ctx *c, const char *field, const char *why,
                 const char *fmt, ...)
{
    char val[96], where[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof val, fmt, ap);
    va_end(ap);
    snprintf(where, sizeof where, "inferbench: %s", why);
    if (o->origins)
        ib_lg_settings_origin_set(o->origins, field, where);
    size_t used = strlen(c->adjustments);
    snprintf(c->adjustments + used, sizeof c->adjustments - used, "%s=%s (%s)\n", field, val,
             why);
}

double ib_run_full_batch_s(int64_t batch, int workers, double rate)
{
    return batch >= 1 && workers >= 1 && rate > 0 ? (double)batch * workers / rate : 0.0;
}

int64_t ib_run_server_device_wait_ns(int64_t bound_ns, int64_t batch, int workers, double rate)
{
    if (bound_ns <= 0 || batch < 1 || workers < 1 || !(rate > 0))
        return -1;
    double w = (double)bound_ns / 2 - ib_run_full_batch_s(batch, workers, rate) * 1e9;
    return w > 0 ? (int64_t)w : 0;
}

size_t ib_run_performance_count(const ib_harness_opts *o, const run_ctx *c)
{
    uint64_t psc = o->settings.performance_sample_count_override
                       ? o->settings.performance_sample_count_override
                       : ib_bench_performance_sample_count(o->bench, &o->cfg);
    return (size_t)IB_MIN(psc, (uint64_t)c->total);
}

int ib_run_adjust_settings(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    ib_lg_settings *s = &c->settings;
    (void)err;
    if (o->quick) {
        double left = ib_run_quick_left_s(o, c);
        uint64_t md = (uint64_t)(IB_MIN(1.0, left / 3) * 1000);
        if (adjustable(o, "min_duration_ms")) {
            s->min_duration_ms = md;
            note(o, c, "min_duration_ms", "--quick", "%llu", (unsigned long long)md);
        }
        if (adjustable(o, "max_duration_ms")) {
            s->max_duration_ms = (uint64_t)(left * 1000);
            note(o, c, "max_duration_ms", "--quick: what the budget leaves after warm-up",
                 "%llu", (unsigned long long)s->max_duration_ms);
        }
        if (adjustable(o, "min_query_count")) {
            s->min_query_count = o->scenario == IB_LG_SCENARIO_SERVER         ? 500
                                 : o->scenario == IB_LG_SCENARIO_MULTI_STREAM ? 662
                                 : o->scenario == IB_LG_SCENARIO_OFFLINE      ? 1
                                                                              : 64;
            note(o, c, "min_query_count", "--quick", "%llu",
                 (unsigned long long)s->min_query_count);
        }
    }
    uint64_t official = ib_bench_performance_sample_count(o->bench, &o->cfg);
    uint64_t psc = s->performance_sample_count_override ? s->performance_sample_count_override
                                                        : official;
    if (psc > c->total && adjustable(o, "performance_sample_count_override")) {
        s->performance_sample_count_override = c->total;
        note(o, c, "performance_sample_count_override", "the dataset is smaller", "%zu",
             c->total);
    }
    double rate = c->res->warmup_samples_per_sec;
    int64_t lat = ib_run_sut_warmup_latency_ns(c);
    if (rate > 0) {
        switch (o->scenario) {
        case IB_LG_SCENARIO_OFFLINE:
            if (adjustable(o, "offline_expected_qps")) {
                s->offline_expected_qps = 2 * rate;
                note(o, c, "offline_expected_qps", "twice the warm-up rate", "%.6g", 2 * rate);
            }
            break;
        case IB_LG_SCENARIO_SERVER:
            if (adjustable(o, "server_target_qps")) {
                s->server_target_qps = rate / 2;
                note(o, c, "server_target_qps", "half the warm-up rate", "%.6g", rate / 2);
            }
            break;
        case IB_LG_SCENARIO_SINGLE_STREAM:
            if (lat > 0 && adjustable(o, "single_stream_expected_latency_ns")) {
                s->single_stream_expected_latency_ns = (double)lat;
                note(o, c, "single_stream_expected_latency_ns", "measured in warm-up", "%lld",
                     (long long)lat);
            }
            break;
        case IB_LG_SCENARIO_MULTI_STREAM:
            if (s->rules != IB_LG_RULES_V1_1 && adjustable(o, "multi_stream_expected_latency_ns")) {
                double l = 1e9 * (double)s->multi_stream_samples_per_query / rate;
                s->multi_stream_expected_latency_ns = l;
                note(o, c, "multi_stream_expected_latency_ns", "measured in warm-up", "%.0f", l);
            }
            break;
        }
    }
    return ib_lg_settings_validate(s, err);
}

bool ib_run_retry_offline(const ib_harness_opts *o, run_ctx *c, const ib_lg_result *r)
{
    /* only our own estimate is revised: a target the user (or user.conf) set stays */
    const char *w = o->origins ? ib_lg_settings_origin_get(o->origins, "offline_expected_qps")
                               : NULL;
    bool ours = w ? strncmp(w, "inferbench: ", 12) == 0 : false;
    if (o->scenario != IB_LG_SCENARIO_OFFLINE || r->valid || !ours ||
        r->failed_rules != IB_LG_RULE_MIN_DURATION || !(r->samples_per_second > 0) ||
        r->samples_per_second <= c->settings.offline_expected_qps / 1.1)
        return false;
    /* --quick: a second query of 1.1 x min_duration must still fit in the budget */
    if (o->quick && ib_run_quick_left_s(o, c) < 1.1 * (double)c->settings.min_duration_ms / 1e3)
        return false;
    /* the loadgen's advice: expected QPS >= the measured rate, so the single query holds
     * >= 1.1 x min_duration of work; 1.5 x leaves room for a faster second run */
    c->settings.offline_expected_qps = 1.5 * r->samples_per_second;
    note(o, c, "offline_expected_qps", "1.5 x the rate of a first run that ended short of "
         "min_duration", "%.6g", c->settings.offline_expected_qps);
    return true;
}

static int add_label(run_ctx *c, ib_err *err, const char *fmt, ...) IB_PRINTF(3, 4);

static int add_label(run_ctx *c, ib_err *err, const char *fmt, ...)
{
    (void)err;
    ib_harness_result *r = c->res;
    if (r->n_labels >= IB_HARNESS_MAX_LABELS)
        return IB_OK;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->labels[r->n_labels], sizeof r->labels[0], fmt, ap);
    va_end(ap);
    c->label_ptrs[r->n_labels] = r->labels[r->n_labels];
    r->n_labels++;
    return IB_OK;
}

int ib_run_make_labels(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    int rc = IB_OK;
    if (c->res->synthetic_model)
        rc = add_label(c, err,
                       "synthetic model: %s%s with random weights (seed %llu), built by "
                       "inferbench; accuracy is meaningless",
                       o->bench->id, o->cfg.tiny ? " tiny stand-in" : "",
                       (unsigned long long)o->cfg.seed);
    else
        rc = add_label(c, err, "model: %s", c->res->model_path);
    if (!rc && c->res->synthetic_data)
        rc = add_label(c, err, "synthetic data: %zu generated samples in the real format (seed "
                               "%llu)",
                       c->synth_samples, (unsigned long long)o->cfg.seed);
    if (!rc && o->quick)
        rc = add_label(c, err, "--quick: short run, not submittable");
    uint64_t psc = c->settings.performance_sample_count_override;
    if (!rc && psc && psc < ib_bench_performance_sample_count(o->bench, &o->cfg))
        rc = add_label(c, err,
                       "performance sample count %llu is below the official %llu (not "
                       "submittable)",
                       (unsigned long long)psc,
                       (unsigned long long)ib_bench_performance_sample_count(o->bench, &o->cfg));
    /* a model at another precision than the run's is said (RNN-T's decoder at int8) */
    const ib_harness_result *r = c->res;
    char per[64] = "";
    bool mixed = false;
    for (size_t m = 0, used = 0; m < r->n_model_precisions; m++) {
        mixed = mixed || r->model_precisions[m] != o->cfg.precision;
        ib_cbuf_join(per, sizeof per, &used, ib_precision_name(r->model_precisions[m]));
    }
    if (!rc && mixed)
        rc = add_label(c, err, "precision: %s, per model %s%s",
                       ib_precision_name(o->cfg.precision), per,
                       ib_precision_calibrated(o->cfg.precision)
                           ? " (only model 0 is calibrated)"
                           : "");
    else if (!rc && o->cfg.precision != IB_PRECISION_FP32)
        rc = add_label(c, err, "precision: %s", ib_precision_name(o->cfg.precision));
    if (!rc && r->products_at_precision < r->products)
        rc = add_label(c, err,
                       "precision use: %u of %u products compute at their model's precision "
                       "(%s); the others: %s",
                       r->products_at_precision, r->products, per[0] ? per : "fp32",
                       r->products_others);
    if (!rc && c->res->fallback_nodes)
        rc = add_label(c, err,
                       "fallback: %u of %u nodes run on the %s kernels on the host, not on %s "
                       "(%s); the figures include them",
                       c->res->fallback_nodes, c->res->nodes, c->res->fallback_backend,
                       o->backend, c->res->fallback_ops);
    if (!rc && o->n_endpoints)
        rc = add_label(c, err,
                       "network SUT: inference on %zu KServe v2 endpoint(s) (%s%s); latencies "
                       "include the network, and the model is the one those servers run",
                       o->n_endpoints, o->endpoints[0], o->n_endpoints > 1 ? ", ..." : "");
    return rc;
}

double ib_run_quick_left_s(const ib_harness_opts *o, const run_ctx *c)
{
    /* the logs, accuracy.txt and the move into the tree: 2 s and 5 % of the budget */
    double used = (double)(ib_time_ns() - c->t0_ns) / 1e9;
    double left = o->quick_s - used - 2 - 0.05 * o->quick_s;
    return left > 1 ? left : 1;
}

void ib_run_label_machine_load(run_ctx *c)
{
    const ib_harness_result *r = c->res;
    const ib_lg_result *lr = r->ran_performance ? &r->perf : &r->acc;
    char busy[200];
    if ((r->ran_performance || r->ran_accuracy) && ib_lg_busy_label(lr, busy, sizeof busy))
        add_label(c, NULL, "%s", busy);
}
