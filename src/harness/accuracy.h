/*
 * accuracy.h - scoring mlperf_log_accuracy.json as the benchmark's official accuracy script
 * does (accuracy-imagenet.py, accuracy-coco.py, accuracy-squad.py, accuracy-dlrm.py,
 * accuracy_eval.py, accuracy-brats.py / accuracy_kits.py; benchmarks.md §1), for a log
 * written by any SUT: ours (`run --mode accuracy`), an official harness or another tool
 * (`inferbench accuracy`). Both paths go through ib_bench_score_log, so they cannot differ.
 *
 * accuracy.txt is what the script prints (the lines the checker parses) followed by
 * "hash=<sha256 of the log>", as truncate_accuracy_log.py appends it.
 * Thread-safety: reentrant; one call per dataset state at a time.
 */
#ifndef IB_HARNESS_ACCURACY_H
#define IB_HARNESS_ACCURACY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "harness/benchmark.h"

/*
 * ib_bench_score_log - decode every entry of the log at `path` (file order, duplicates
 * kept: each script de-duplicates in its own way) and run the entry's accuracy over them
 * with the opened dataset `state`. Appends the script's lines to text, sets *value to the
 * headline metric (the unit of the entry's accuracy_reference) and *entries to the log's
 * entry count. IB_EFORMAT naming the file (and line or entry) for a missing, malformed or
 * truncated log, an empty one, bad hex, a qsl_idx outside the dataset or a payload of the
 * wrong size; IB_ENOTFOUND for a missing file; IB_ENOMEM.
 */
int ib_bench_score_log(const ib_benchmark *b, const ib_bench_config *cfg, void *state,
                       const char *path, ib_strbuf *text, double *value, size_t *entries,
                       ib_err *err);

/* Write <dir>/accuracy.txt: text, then "hash=<sha256 of log_path>". */
int ib_accuracy_write_txt(const char *dir, const char *text, const char *log_path, ib_err *err);

/* What `inferbench accuracy` scores. */
typedef struct ib_accuracy_opts {
    const ib_benchmark *bench;
    ib_bench_config cfg;    /* variant (3d-unet dataset), tiny, payload dtype */
    const char *log_path;   /* mlperf_log_accuracy.json */
    const char *data_dir;   /* the dataset whose qsl_idx the log uses */
    const char *output_dir; /* where accuracy.txt goes (NULL: not written) */
} ib_accuracy_opts;

typedef struct ib_accuracy_result {
    char *text;          /* the script's lines (ib_free) */
    double value;        /* headline metric, unit of the reference */
    double reference;    /* the FP32 reference accuracy */
    double target;       /* reference x the entry's fraction (0.99 or 0.999) */
    bool met;            /* value >= target */
    size_t entries;      /* entries in the log */
    char txt_path[4096]; /* accuracy.txt when written, else "" */
} ib_accuracy_result;

/*
 * ib_accuracy_score - open the dataset for scoring only (no model: benchmark.h's open with
 * io NULL), score the log, write accuracy.txt when an output dir is given. Errors as
 * ib_bench_score_log, plus the dataset's. Ownership: r->text is the caller's (ib_free).
 */
int ib_accuracy_score(const ib_accuracy_opts *o, ib_accuracy_result *r, ib_err *err);

#endif
