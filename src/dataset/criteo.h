/*
 * criteo.h - the DLRM dataset (benchmarks.md §1.4, §5): Criteo Terabyte day_23 in the
 * preprocessed binary layout `terabyte_processed_test.bin` (40 little-endian int32 per
 * user-item pair: label, 13 dense counts, 26 categorical ids) grouped into samples by the
 * aggregation trace `dlrm_trace_of_aggregated_samples.txt` (one line "start, end, count" per
 * sample; sample i = line i, which is the reference's qsl_idx order), and a synthetic
 * generator writing both files.
 *
 * Pre-processing is the reference's CriteoBinDataset: dense = log(x + 1) as float32,
 * categorical = id % row_cap (the reference's --max-ind-range; 0 = no cap), labels as
 * float32. Rows are read on demand with pread, so the 14 GB official file is never held
 * whole. Raw TSV day files are converted to this layout first (criteo_tsv.h, `inferbench
 * convert criteo-tsv`).
 *
 * Thread-safety: open/close on one thread; ib_criteo_load may run concurrently.
 */
#ifndef IB_DATASET_CRITEO_H
#define IB_DATASET_CRITEO_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"

#define IB_CRITEO_DENSE 13
#define IB_CRITEO_SPARSE 26
#define IB_CRITEO_ROW_INTS 40
#define IB_CRITEO_BIN "terabyte_processed_test.bin"
#define IB_CRITEO_TRACE "dlrm_trace_of_aggregated_samples.txt"

typedef struct ib_criteo ib_criteo;

/* Open DIR/IB_CRITEO_BIN and DIR/IB_CRITEO_TRACE. Errors name the file and line: a binary
 * size that is not whole 160-byte rows (truncated), a malformed trace line, count != end -
 * start, an empty or over-700-pair sample, a sample beyond the binary's rows. */
int ib_criteo_open(const char *dir, uint64_t row_cap, ib_criteo **out, ib_err *err);
void ib_criteo_close(ib_criteo *c);

/* Parse an aggregation trace held in memory against a binary of `rows` rows, as open does
 * (`name` is the file name in messages); *n_samples = its sample count. For the fuzz
 * target and tools that check a trace alone. */
int ib_criteo_trace_check(const char *name, const char *text, size_t len, uint64_t rows,
                          size_t *n_samples, ib_err *err);

size_t ib_criteo_samples(const ib_criteo *c);
/* Pair offsets of the samples: start[i]..start[i+1] (n_samples + 1 entries, start[0] = 0). */
const uint64_t *ib_criteo_pair_starts(const ib_criteo *c);
uint64_t ib_criteo_rows(const ib_criteo *c); /* rows in the binary file */

/* Sample i into caller buffers sized for its pair count m: dense[m*13] float32,
 * sparse[m*26] int64 (already % row_cap), labels[m] float32 (may be NULL). Errors: a
 * negative dense count or categorical id (the preprocessed file has none), a label other
 * than 0/1, a read error. */
int ib_criteo_load(const ib_criteo *c, size_t i, float *dense, int64_t *sparse, float *labels,
                   ib_err *err);

/* Write a synthetic dataset into dir (created): n_samples samples of min_pairs..max_pairs
 * pairs (uniform), categorical id of table t below table_rows[t] (26 entries: the official
 * sizes, so the loader's % row_cap applies as it does to real data; each <= INT32_MAX),
 * dense counts 0..1000, labels ~25 % positive, all from `seed`. */
int ib_criteo_synthesize(const char *dir, size_t n_samples, unsigned min_pairs,
                         unsigned max_pairs, const uint64_t *table_rows, uint64_t seed,
                         ib_err *err);

#endif
