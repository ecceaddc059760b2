/*
 * dlrm.h - the DLRM builder (benchmarks.md §1.4): MLPerf v1.1 DLRM for Criteo Terabyte with
 * seeded random weights. See dlrm.c for the graph.
 */
#ifndef IB_MODELS_DLRM_H
#define IB_MODELS_DLRM_H

#include <stddef.h>
#include <stdint.h>

#include "models/models.h"

#define IB_DLRM_DENSE_INPUT "dense_x"   /* float32 [N,13]: log(count + 1) */
#define IB_DLRM_SPARSE_INPUT "sparse_x" /* int64 [N,26]: one id per table (already % rows) */
#define IB_DLRM_OUTPUT "predictions"    /* float32 [N,1]: click probability */
#define IB_DLRM_TABLES 26
#define IB_DLRM_EMBED_DIM 128
#define IB_DLRM_INTERACTIONS 351 /* 27 * 26 / 2 pairs without self-terms */

/* The official per-table row counts (mlperf_40m.limit.json; benchmarks.md §1.4). */
extern const uint64_t ib_dlrm_table_rows[IB_DLRM_TABLES];

/*
 * ib_models_dlrm - DLRM: bottom MLP 13-512-256-128 (ReLU after each layer), 26 embedding
 * tables of dimension 128 with min(official rows, row_cap) rows (row_cap 0 = the official
 * sizes, ~96 GB; the caller takes ids modulo the same cap, as the reference's
 * --max-ind-range), dot interaction of the 27 vectors without self-terms (the 351 pairs
 * (i, j), j < i, in the reference's order) concatenated after the bottom output (479), top MLP
 * 479-1024-1024-512-256-1 with ReLU between and a sigmoid at the end. tiny: the same graph
 * with every table capped at 1000 rows (the MLPs stay full size: 2.37 M parameters).
 * The batch dimension is symbolic ("N"). *out is the caller's (ib_build_destroy).
 */
int ib_models_dlrm(const ib_models_opts *o, uint64_t row_cap, struct ib_build **out, ib_err *err);

/* Rows of table t under a cap (what the builder uses and the loader's modulus). */
uint64_t ib_dlrm_rows(size_t t, uint64_t row_cap, int tiny);

#endif
