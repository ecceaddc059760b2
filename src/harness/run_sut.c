/*
 * run_sut.c - the run's system under test: the in-process SUT (sut.h: worker threads with
 * sessions) or, with --endpoint, the network SUT (nsut.h: KServe v2 requests), behind the
 * few calls run.c, settings.c and run_files.c make.
 */

#include <string.h>

#include "harness/run_internal.h"

static int create_network(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    int conc = o->concurrency > 0 ? o->concurrency : 2 * (int)o->n_endpoints;
    ib_harness_stage(o, "checking %zu endpoint(s) and warming up: %d request(s) in flight, up to %lld "
             "samples each",
          o->n_endpoints, conc, (long long)c->batch);
    ib_nsut_opts no = {
        .bench = c->bench,
        .cfg = &o->cfg,
        .state = c->state,
        .io = &c->io[0],
        .qsl = c->qsl,
        .total = c->total,
        .endpoints = o->endpoints,
        .n_endpoints = o->n_endpoints,
        .model_name = o->model_name,
        .concurrency = conc,
        .max_batch = c->batch,
        .max_wait_ns = c->max_wait_ns,
        .request_timeout_ms = o->request_timeout_ms,
        .json = o->json,
        .stop_flag = o->stop_flag,
    };
    return ib_nsut_create(&no, &c->nsut, err);
}

int ib_run_sut_create(const ib_harness_opts *o, run_ctx *c, ib_err *err)
{
    if (o->n_endpoints)
        return create_network(o, c, err);
    /* int8 holds its own chains between convolutions, as int8 (cuda_conv_i8.c); fp8 runs its
     * convolutions as fp16 */
    if (o->nhwc_fp16 && (!o->backend || strcmp(o->backend, "cuda") != 0 ||
                         (o->cfg.precision != IB_PRECISION_FP16 &&
                          o->cfg.precision != IB_PRECISION_FP8)))
        ib_harness_stage(o, "note: --nhwc-fp16 applies to --backend cuda at --precision fp16 or "
                            "fp8; it changes nothing here");
    if (o->half_chains && (!o->backend || strcmp(o->backend, "cuda") != 0 ||
                           o->cfg.precision == IB_PRECISION_FP32))
        ib_harness_stage(o, "note: --half-chains applies to --backend cuda at --precision fp16, "
                            "bf16, int8 or fp8; it changes nothing here");
    ib_harness_stage(o, "starting %d worker(s) x %d thread(s), batch %lld, %s %s: compiling%s and warming "
             "up",
          c->workers, c->tpw, (long long)c->batch, o->backend, ib_precision_name(o->cfg.precision),
          ib_precision_calibrated(o->cfg.precision) ? ", calibrating" : "");
    ib_hsut_opts so = {
        .bench = c->bench,
        .cfg = &o->cfg,
        .state = c->state,
        .io = c->io,
        .models = (const ib_model *const *)c->models,
        .n_models = c->n_models,
        .qsl = c->qsl,
        .total = c->total,
        .backend = o->backend,
        .precision = o->cfg.precision,
        .workers = c->workers,
        .threads_per_worker = c->tpw,
        .pin = o->pin,
        .nhwc_fp16 = o->nhwc_fp16,
        .half_chains = o->half_chains,
        .max_batch = c->batch,
        .max_wait_ns = c->max_wait_ns,
        .calib_samples = 0,
        .devices = c->devices.id,
        .n_devices = c->devices.n,
        .stop_flag = o->stop_flag,
        /* --quick: the warm-up may use 30 % of what the budget has left */
        .warmup_budget_ns = o->quick ? (int64_t)(0.3 * ib_run_quick_left_s(o, c) * 1e9) : 0,
    };
    return ib_hsut_create(&so, &c->sut, err);
}

void ib_run_sut_set_max_wait(run_ctx *c, int64_t ns)
{
    c->max_wait_ns = ns;
    if (c->sut)
        ib_hsut_set_max_wait(c->sut, ns);
}

void ib_run_sut_destroy(run_ctx *c)
{
    ib_hsut_destroy(c->sut);
    ib_nsut_destroy(c->nsut);
    c->sut = NULL;
    c->nsut = NULL;
}

ib_lg_sut ib_run_sut_table(run_ctx *c)
{
    return c->nsut ? ib_nsut_table(c->nsut) : ib_hsut_table(c->sut);
}

void ib_run_sut_quiesce(run_ctx *c)
{
    if (c->nsut)
        ib_nsut_quiesce(c->nsut);
    else
        ib_hsut_quiesce(c->sut);
}

int ib_run_sut_take_error(run_ctx *c, ib_err *err)
{
    return c->nsut ? ib_nsut_take_error(c->nsut, err) : ib_hsut_take_error(c->sut, err);
}

double ib_run_sut_warmup_rate(const run_ctx *c)
{
    return c->nsut ? ib_nsut_warmup_rate(c->nsut) : ib_hsut_warmup_rate(c->sut);
}

int64_t ib_run_sut_warmup_latency_ns(const run_ctx *c)
{
    return c->nsut ? ib_nsut_warmup_latency_ns(c->nsut) : ib_hsut_warmup_latency_ns(c->sut);
}

const char *ib_run_sut_describe(const run_ctx *c)
{
    return c->nsut ? ib_nsut_describe(c->nsut) : ib_hsut_describe(c->sut);
}
