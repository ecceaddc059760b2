/*
 * fuzz_npz.c - libFuzzer target for the .npz integer-array reader (src/dataset/npz.c): any
 * bytes must decode into an array or fail with a message; nothing may crash, leak or read
 * out of bounds. `make check` replays tests/fuzz/corpus/npz/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dataset/npz.h"
#include "inferbench/base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t *v = NULL;
    size_t n = 0;
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_npz_parse_ints("fuzz", data, size, "unique", &v, &n, &err);
    if (rc != IB_OK && (!err.msg[0] || v)) {
        fprintf(stderr, "fuzz_npz: failure without a message or with an array\n");
        abort();
    }
    if (rc == IB_OK && !v) {
        fprintf(stderr, "fuzz_npz: success without an array\n");
        abort();
    }
    ib_free(v);
    return 0;
}
