/*
 * qsl.h - the query sample library over a benchmark dataset: an array of per-index sample
 * slots filled by the entry's load_sample (untimed pre-processing) when the loadgen loads a
 * set, freed when it unloads. Loads run on several threads (each index at most once, even
 * when a set lists it twice, as MultiStream padding does).
 */
#ifndef IB_HARNESS_QSL_H
#define IB_HARNESS_QSL_H

#include <stdbool.h>
#include <stddef.h>

#include "harness/benchmark.h"
#include "inferbench/loadgen.h"

typedef struct ib_hqsl ib_hqsl;

/* state: the entry's open() state; total its sample count; perf the performance sample
 * count the QSL reports; threads used to load (0 = every CPU). */
int ib_hqsl_create(const ib_benchmark *b, void *state, size_t total, size_t perf, int threads,
                   ib_hqsl **out, ib_err *err);
void ib_hqsl_destroy(ib_hqsl *q);
/* The loadgen callback table for this QSL (valid while q lives). */
ib_lg_qsl ib_hqsl_table(ib_hqsl *q);
/* The loaded sample at index (NULL when not loaded). Read-only for the SUT. */
const ib_bench_sample *ib_hqsl_sample(const ib_hqsl *q, size_t index);
/* Load/unload directly (also what the table's callbacks do). */
int ib_hqsl_load(ib_hqsl *q, const ib_lg_sample_index *idx, size_t n, ib_err *err);
void ib_hqsl_unload(ib_hqsl *q, const ib_lg_sample_index *idx, size_t n);
/* The message of the last load failure reported through the callbacks ("" when none). */
const char *ib_hqsl_error(const ib_hqsl *q);
/* Samples loaded now, and the most that were loaded at once. */
size_t ib_hqsl_loaded(const ib_hqsl *q);

#endif
