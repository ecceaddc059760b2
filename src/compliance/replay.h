/*
 * replay.h - re-derive what a LoadGen did from its own logs (issue 12).
 *
 * For one run folder (mlperf_log_detail.txt + mlperf_log_accuracy.json) the
 * effective settings, seeds and QSL counts are read from the detail log, the
 * query plan is derived (src/loadgen/plan.h, no real-time issuing) under each
 * sampling-compatibility mode (libstdc++11, libstdc++10), and every logged
 * loaded_qsl_set and every (seq_id, qsl_idx) pair of the accuracy log
 * (truncated logs: the entries that survived; compliance runs: the log in
 * <TEST>/accuracy/ when the run folder has none) is compared with the plan.
 * The folder is reproduced by a mode when nothing differs.
 *
 * Thread-safety: pure function over caller storage; no globals.
 *
 * Header history (for users of this internal header):
 *  - v1: initial API.
 */
#ifndef IB_COMPLIANCE_REPLAY_H
#define IB_COMPLIANCE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/common.h"
#include "inferbench/loadgen.h"

#define IB_REPLAY_NMODES 2

/* The outcome under one compatibility mode. */
typedef struct ib_replay_mode {
    enum ib_lg_rng_compat compat;
    bool reproduced;
    size_t sets_compared;  /* loaded_qsl_set records compared */
    size_t sets_differ;    /* of which differ (length or any entry) */
    size_t pairs_compared; /* accuracy-log entries with a seq_id */
    size_t pairs_differ;   /* qsl_idx differs, seq_id outside the plan, or not sampled */
    char first_diff[512];  /* "" when reproduced */
} ib_replay_mode;

typedef struct ib_replay_result {
    char loadgen_version[128];
    enum ib_lg_rules rules;
    char scenario[32];
    char test_mode[32];
    uint64_t qsl_total;
    size_t sets_logged;
    char acc_path[4096]; /* the accuracy log compared, "" when the run has none */
    size_t acc_entries;
    bool acc_truncated;
    bool reproduced;                        /* by at least one mode */
    enum ib_lg_rng_compat mode;             /* the first mode that reproduces it */
    size_t nmodes_reproducing;              /* 2: the logs cannot tell the modes apart */
    ib_replay_mode modes[IB_REPLAY_NMODES]; /* libstdc++11, libstdc++10 */
} ib_replay_result;

/*
 * ib_replay_dir - replay one run folder. IB_OK when the comparison ran (see
 * out->reproduced); IB_ENOTFOUND for a missing log file; IB_EFORMAT for a
 * detail log that is truncated, lacks a required key or has a bad value, or a
 * broken accuracy log; IB_EUNSUPPORTED for a LoadGen version whose sampling
 * rules we do not implement. err names the file, key and fix.
 */
int ib_replay_dir(const char *dir, ib_replay_result *out, ib_err *err);
/* The same; fast_path = false always walks the full series (for tests). */
int ib_replay_dir_ex(const char *dir, bool fast_path, ib_replay_result *out, ib_err *err);

#endif
