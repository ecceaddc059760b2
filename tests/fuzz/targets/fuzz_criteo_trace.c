/*
 * fuzz_criteo_trace.c - libFuzzer target for the DLRM aggregation-trace parser
 * (src/dataset/criteo.c): any bytes must parse into samples consistent with a 5,000-row
 * binary (every sample 1..700 pairs, inside the file) or fail with a message; nothing may
 * crash, leak or read out of bounds. `make check` replays tests/fuzz/corpus/criteo_trace/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dataset/criteo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n = 0;
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_criteo_trace_check("fuzz", (const char *)data, size, 5000, &n, &err);
    if (rc != IB_OK && (!err.msg[0] || n != 0)) {
        fprintf(stderr, "fuzz_criteo_trace: failure without a message\n");
        abort();
    }
    if (rc == IB_OK && (n == 0 || n > 5000)) {
        fprintf(stderr, "fuzz_criteo_trace: %zu samples from a 5000-row file\n", n);
        abort();
    }
    return 0;
}
