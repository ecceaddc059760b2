/*
 * accuracy_log.h - mlperf_log_accuracy.json (loadgen.md §3.3): "[", then one
 * entry per logged response on its own line,
 *   { "seq_id" : N, "qsl_idx" : N, "data" : "UPPERCASEHEX" }
 * joined by ",\n", then "\n]\n". Entries of a series are written when the
 * series has finished (never from the completion path), in seq_id order.
 */
#ifndef IB_LOADGEN_ACCURACY_LOG_H
#define IB_LOADGEN_ACCURACY_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ib_lg_srt;

typedef struct ib_lg_acc_writer {
    FILE *f;
    bool need_comma;
    uint64_t entries;
    uint64_t dropped; /* entries whose payload could not be stored */
    int io_error;
} ib_lg_acc_writer;

/* Write "[" (the header). */
int ib_lg_acc_begin(ib_lg_acc_writer *w, FILE *f);
/* Append the entries of a closed series. */
int ib_lg_acc_write_series(ib_lg_acc_writer *w, struct ib_lg_srt *s);
/* Write "\n]\n" (the footer) and flush. */
int ib_lg_acc_end(ib_lg_acc_writer *w);

/* Append one entry (exposed for tests). */
int ib_lg_acc_entry(ib_lg_acc_writer *w, uint64_t seq, uint64_t qsl_idx, const uint8_t *data,
                    size_t size);

#endif
