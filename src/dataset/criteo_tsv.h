/*
 * criteo_tsv.h - the raw Criteo Terabyte day file (`day_23`: one pair per line, tab
 * separated: label, 13 decimal integer counts, 26 categorical features of up to 8 hex
 * digits; any field may be blank) converted to the preprocessed binary layout the DLRM
 * entry reads (criteo.h: 40 little-endian int32 per pair), as facebookresearch/dlrm
 * data_utils.py getCriteoAdData + processCriteoAdData do it (benchmarks.md §1.4
 * "Preprocessing"):
 *
 *   blank field -> "0"; label = int32; dense = int32, negatives -> 0;
 *   categorical = int(x, 16) % max_ind_range (40,000,000 for the MLPerf model), then the
 *   per-feature dictionary `day_fea_dict_<j>.npz` ("unique": value at index = id) maps it
 *   to its contiguous id.
 *
 * The dictionaries come from the training days (all 24 days); without them (dict_dir NULL)
 * ids stay value % max_ind_range, which is NOT the official mapping: fine for performance,
 * meaningless for accuracy with official weights (the caller must label such data).
 * The reference's sub-sampling of negatives applies to training days only and is not done.
 *
 * Also a synthetic generator writing a small day file with its dictionaries and the binary
 * the conversion must produce (both layouts, from the same draws), plus a trace.
 *
 * Thread-safety: reentrant (no shared state).
 */
#ifndef IB_DATASET_CRITEO_TSV_H
#define IB_DATASET_CRITEO_TSV_H

#include <stdint.h>

#include "inferbench/status.h"

#define IB_CRITEO_TSV_DAY "day_23"
#define IB_CRITEO_DICT_FMT "day_fea_dict_%d.npz"
#define IB_CRITEO_MAX_IND_RANGE 40000000u

typedef struct ib_criteo_tsv_opts {
    const char *tsv;        /* the day file */
    const char *dict_dir;   /* folder of day_fea_dict_<j>.npz; NULL = no dictionary mapping */
    uint64_t max_ind_range; /* 0 = none (then every value must fit int32) */
    uint64_t max_rows;      /* stop after this many pairs (0 = all; 89,137,319 = the
                             * accuracy half of day_23) */
    const char *out_bin;    /* the binary to write (replaced) */
    /* called about every 2^20 rows and at the end (may be NULL) */
    void (*progress)(void *user, uint64_t rows, uint64_t bytes_read, uint64_t bytes_total);
    void *progress_user;
} ib_criteo_tsv_opts;

/*
 * ib_criteo_tsv_convert - write o->out_bin from o->tsv; *rows_out = pairs written. Errors
 * name the file, line and field: a line without 40 fields, a label other than 0/1, a count
 * that is not a decimal int32, a categorical that is not 1-8 hex digits, a value missing
 * from its dictionary (the reference's KeyError), a malformed dictionary (npz.h). Writes to
 * out_bin.tmp and renames, so a failed run leaves no partial binary.
 */
int ib_criteo_tsv_convert(const ib_criteo_tsv_opts *o, uint64_t *rows_out, ib_err *err);

/*
 * ib_criteo_tsv_synthesize - into dir (created): IB_CRITEO_TSV_DAY with `rows` lines (blank
 * fields, negative counts and values above max_ind_range included), the 26 dictionaries
 * (table j of min(table_rows[j], 997) ids; id 0 is value 0, which blanks map to),
 * `expected.bin` (the binary layout of the same rows: what ib_criteo_tsv_convert must
 * write), and a trace grouping the rows into samples of 1..7 pairs. Synthetic data.
 */
int ib_criteo_tsv_synthesize(const char *dir, uint64_t rows, const uint64_t *table_rows,
                             uint64_t seed, ib_err *err);

#endif
