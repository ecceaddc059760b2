/*
 * engine_internal.h - the internals of one ib_lg_test shared by the engine's modules:
 * the test lifecycle (engine.c), issuing (issue.c), completion (complete.c),
 * FindPeakPerformance (findpeak.c), progress (progress.c) and the writers.
 *
 * Memory model of the hot path (loadgen.md §9 items 1, 3, 5):
 *  - one int64 slot per generated sample of the running series, indexed by
 *    (sequence id - first id of the series), reserved before the timed part;
 *  - slot states: 0 not issued; > 0 issued and pending (scheduled time + 1,
 *    bit 62 = "log this response"); < 0 completed (-(latency + 1));
 *  - response id = sequence id + 1, so ids are checked against the series'
 *    range and slot state, never dereferenced;
 *  - completers CAS the slot, copy a payload only when it is logged (into a
 *    reserved arena), and count with one fetch_add per call; closing a series
 *    turns every still-pending slot into LOST by CAS, so a late completion
 *    can never write into a closed series (it is counted instead).
 */
#ifndef IB_LOADGEN_ENGINE_INTERNAL_H
#define IB_LOADGEN_ENGINE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/strbuf.h"
#include "base/thread.h"
#include "inferbench/loadgen.h"
#include "loadgen/accuracy_log.h"
#include "loadgen/os.h"
#include "loadgen/effective.h"
#include "loadgen/sysload.h"
#include "loadgen/logwriter.h"
#include "loadgen/plan.h"
#include "loadgen/results.h"

#define IB_LG_SLOT_LOG_BIT ((int64_t)1 << 62)
#define IB_LG_SLOT_SCHED_MASK (IB_LG_SLOT_LOG_BIT - 1)
#define IB_LG_SLOT_LOST INT64_MIN /* pending when the series closed */

/* Histogram with ~3% resolution for issue delays and running latencies:
 * values < 32 exact, then 32 sub-buckets per power of two. */
#define IB_LG_HIST_BUCKETS (64 * 32)
typedef struct ib_lg_hist {
    uint64_t count;
    uint64_t b[IB_LG_HIST_BUCKETS];
} ib_lg_hist;
void ib_lg_hist_add(ib_lg_hist *h, int64_t v);
/* Value at quantile q (a bucket's lower bound), 0 when empty. */
int64_t ib_lg_hist_quantile(const ib_lg_hist *h, double q);

/* One accuracy-log payload recorded by a completer. */
typedef struct ib_lg_acc_rec {
    uint64_t seq;
    uint64_t off;   /* into the series arena; UINT64_MAX: payload dropped */
    uint64_t size;
    int64_t n_tokens;
} ib_lg_acc_rec;

/* A sample the issuer decided to log, in issue (= sequence) order. */
typedef struct ib_lg_logged {
    uint64_t seq;
    uint64_t qsl_idx;
} ib_lg_logged;

/* The shared state of one series (one GenerateQueries call). */
typedef struct ib_lg_srt {
    struct ib_lg_srt *older; /* the previous series (immutable once published) */
    uint64_t first_seq, n;   /* sequence ids [first_seq, first_seq + n) */
    _Atomic int64_t *slot;   /* n slots (vmem) */
    size_t slot_bytes;
    int64_t start_ns;        /* monotonic time the series started issuing */
    int64_t latency_bound_ns; /* completers count samples above it */

    _Atomic uint64_t completed;
    _Atomic uint64_t over_latency;
    _Atomic uint32_t closed;
    uint64_t lost;         /* set by ib_lg_srt_close */
    uint64_t done_slots;   /* completed slots at close */
    int64_t close_ns;      /* when every issued sample was accounted for */

    /* accuracy log (only when the series may log) */
    ib_lg_acc_rec *recs;
    size_t recs_bytes;
    uint64_t rec_cap;
    _Atomic uint64_t nrecs;
    uint8_t *arena;
    uint64_t arena_cap;
    _Atomic uint64_t arena_used;
    ib_lg_logged *logged;
    size_t logged_bytes;
    uint64_t nlogged;

    /* trace (opt-in): scheduled and issue time and QSL index per sample */
    int64_t *trace_issue;
    int64_t *trace_sched;
    uint64_t *trace_qsl;
    size_t trace_bytes;
} ib_lg_srt;

/* What an issue loop reports back. */
typedef struct ib_lg_issue_out {
    uint64_t queries_issued;
    uint64_t samples_issued;
    bool ran_out;           /* non-Server: generated queries exhausted */
    bool probe_failed_early; /* FindPeak: the bound is already lost */
    int status;             /* IB_OK, IB_ETIMEOUT, IB_ECANCELED */
    bool interrupted;       /* issuing ended by the caller's stop flag */
    int64_t start_ns, start_wall_ns;
    int64_t last_sched_rel, last_issue_rel; /* final issued query */
    uint64_t last_first_seq;
    size_t last_n;
    uint64_t *intervals;    /* v1.1 MultiStream scheduled intervals per query */
    ib_lg_hist delay;       /* scheduled -> issued */
} ib_lg_issue_out;

typedef enum ib_lg_fault {
    IB_LG_FAULT_UNKNOWN = 0,
    IB_LG_FAULT_DUPLICATE = 1,
    IB_LG_FAULT_LATE = 2,
    IB_LG_FAULT_DROPPED = 3, /* accuracy payload did not fit */
    IB_LG_FAULT_FAILED = 4,  /* the SUT completed it as failed (ib_lg_samples_fail) */
    IB_LG_FAULT_COUNT = 5,
} ib_lg_fault;

#define IB_LG_FAULT_KEEP 8

struct ib_lg_test {
    ib_lg_settings settings;
    ib_lg_log_settings log;
    ib_lg_options opts;
    char *outdir, *prefix, *suffix, *audit_path, *model_name;
    char **labels;
    size_t label_count;

    bool ran;
    _Atomic int abort;
    bool interrupted; /* a series stopped early on the caller's stop flag (main thread) */
    ib_lg_sysload load; /* the rest of the machine's CPU use during the test */
    _Atomic(ib_lg_srt *) head;

    /* faults observed by completers (any thread) */
    _Atomic uint64_t fault[IB_LG_FAULT_COUNT];
    _Atomic uint64_t fault_seen[IB_LG_FAULT_COUNT]; /* logged so far */
    _Atomic uint64_t fault_ids[IB_LG_FAULT_COUNT][IB_LG_FAULT_KEEP];
    _Atomic int fail_reason_state; /* 0 none, 1 being written, 2 written */
    char fail_reason[256];         /* the first ib_lg_samples_fail reason */
    _Atomic uint64_t cas_retries;
    _Atomic uint64_t lost;

    ib_lg_clock clock; /* the time base of every engine timestamp */

    /* issuer wake-up */
    _Atomic uint32_t waiters;
    _Atomic uint32_t wake_seq;

    /* run-time state (main thread) */
    const ib_lg_sut *sut;
    const ib_lg_qsl *qsl;
    ib_lg_effective eff;
    ib_lg_plan *plan;
    ib_lg_detail detail;
    FILE *summary_f, *accuracy_f, *trace_f;
    ib_lg_acc_writer acc;
    int64_t origin_ns, origin_wall_ns;
    ib_strbuf summary;
    ib_strbuf reasons_extra; /* engine-level reasons (timeouts, faults) */
    int status;              /* first fatal status of the run */
    uint64_t acc_entries;
    ib_lg_hist delay;
    uint64_t sut_errors_logged;
    char phase[96];          /* guarded by phase_mu (read by progress) */
    ib_mutex phase_mu;
    bool phase_ok;

    /* progress (read by the progress thread) */
    _Atomic int64_t prog_start_ns; /* the running series' start */
    _Atomic uint64_t prog_issued_queries;
    _Atomic uint64_t prog_issued_samples;
    _Atomic int64_t prog_expected_ns;
    _Atomic uint64_t prog_expected_samples;
};

/* ---- complete.c ---------------------------------------------------------- */

/* Create a series' shared state for `n` samples starting at first_seq and
 * publish it as the head (completions may arrive from then on). logging:
 * reserve accuracy-log storage. trace: per-sample trace arrays. */
int ib_lg_srt_open(ib_lg_test *t, uint64_t first_seq, uint64_t n, bool logging, bool trace,
                   ib_lg_srt **out);
/* Close s: pending slots become LOST (s->lost counts them), then wait until
 * every completer that won a slot has finished its bookkeeping. After this
 * the slots and accuracy records no longer change. */
void ib_lg_srt_close(ib_lg_test *t, ib_lg_srt *s);
/* Free the physical memory of a closed series (the mapping stays until the
 * test is destroyed, so late completers never touch freed memory). */
void ib_lg_srt_discard(ib_lg_srt *s);
/* Free every series (test destroy). */
void ib_lg_srt_free_all(ib_lg_test *t);

/* Wait until s->completed >= target; OK, IB_ETIMEOUT (sut_timeout_ms with
 * no completion, counted from since_ns at the earliest) or IB_ECANCELED. */
int ib_lg_wait_completed(ib_lg_test *t, ib_lg_srt *s, uint64_t target, int64_t since_ns);
/* Wait until the given slots are all completed (v1.1 MultiStream async). */
int ib_lg_wait_slots(ib_lg_test *t, ib_lg_srt *s, uint64_t rel_first, size_t count,
                     int64_t since_ns);

/* ---- issue.c ----------------------------------------------------------- */

/* Issue one series (all scenarios, both rule sets): per-scenario scheduling,
 * stop conditions with the official messages. accuracy: accuracy series.
 * bound_abort: FindPeak probe early abort when the latency bound is lost. */
int ib_lg_issue_series(ib_lg_test *t, ib_lg_series *series, ib_lg_srt *s, bool accuracy,
                       double target_qps, bool bound_abort, ib_lg_issue_out *out);

/* ---- engine.c helpers used by findpeak.c --------------------------------- */

/* One performance series at target_qps with its result (the caller owns
 * data arrays in `r` until ib_lg_series_result_free). */
typedef struct ib_lg_series_result {
    ib_lg_perf_params params;
    ib_lg_perf_data data;
    ib_lg_perf_summary summary;
    ib_lg_issue_out issue;
    double target_qps;
    ib_lg_srt *srt;      /* the series' completion state (owned by the test) */
    int64_t *lat_buf;    /* owns data.sample_latencies */
    int64_t *qlat_buf;   /* owns data.query_latencies */
    uint64_t faults;     /* SUT errors during this series (lost included) */
    uint64_t lost;
    bool summarized;
} ib_lg_series_result;

/* One accuracy series over accuracy set `set_index`. */
int ib_lg_run_accuracy_series(ib_lg_test *t, size_t set_index);
/* Copy the fault counters into the public result. */
void ib_lg_collect_faults(ib_lg_test *t, ib_lg_result *res);

int ib_lg_run_perf_series(ib_lg_test *t, double target_qps, bool bound_abort,
                          ib_lg_series_result *r);
void ib_lg_series_result_free(ib_lg_series_result *r);
/* Write the summary and detail result records for r (RunPerformanceMode's
 * LogSummary + LogDetail) and fill the public result. */
void ib_lg_report_perf(ib_lg_test *t, ib_lg_series_result *r, ib_lg_result *res);
void ib_lg_log_message(ib_lg_test *t, const char *msg);
/* Set the progress phase text ("performance", "find-peak qps=..."). */
void ib_lg_set_phase(ib_lg_test *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- findpeak.c ---------------------------------------------------------- */
int ib_lg_run_find_peak(ib_lg_test *t, ib_lg_result *res);

/* ---- progress.c ---------------------------------------------------------- */
typedef struct ib_lg_progress_thread ib_lg_progress_thread;
int ib_lg_progress_start(ib_lg_test *t, ib_lg_progress_thread **out);
void ib_lg_progress_stop(ib_lg_progress_thread *p);

/* Why an issue loop must end now: IB_ECANCELED after ib_lg_test_abort, 1 when the caller's
 * stop flag is set (graceful: what was issued is still awaited and logged), else 0. */
static inline int ib_lg_issue_should_stop(const ib_lg_test *t)
{
    if (atomic_load_explicit(&t->abort, memory_order_relaxed))
        return IB_ECANCELED;
    if (t->opts.stop_flag && atomic_load_explicit(t->opts.stop_flag, memory_order_relaxed))
        return 1;
    return 0;
}

/* Apply ib_lg_issue_should_stop's answer to an issue loop's report; true = stop. */
static inline bool ib_lg_issue_stop(const ib_lg_test *t, ib_lg_issue_out *o)
{
    int why = ib_lg_issue_should_stop(t);
    if (why == IB_ECANCELED)
        o->status = IB_ECANCELED;
    else if (why) {
        o->interrupted = true;
        o->ran_out = false; /* not a generated-query shortage */
    }
    return why != 0;
}

#endif
