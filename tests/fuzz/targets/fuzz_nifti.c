/*
 * fuzz_nifti.c - libFuzzer target for the NIfTI-1 reader (src/dataset/nifti.c): the input is
 * a whole file, plain or gzip-compressed (detected by the 1f 8b magic, as ib_nifti_read
 * does). Any bytes must either parse into an image whose voxel count matches its dims or
 * fail with a message naming the file; nothing may crash, leak or read out of bounds.
 * `make check` replays tests/fuzz/corpus/nifti/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/nifti.h"
#include "inferbench/base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ib_err err;
    ib_err_clear(&err);
    const uint8_t *buf = data;
    size_t len = size;
    uint8_t *plain = NULL;
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        if (ib_nifti_gunzip(data, size, 1 << 24, "fuzz.nii", &plain, &len, &err) != IB_OK) {
            if (plain || strncmp(err.msg, "fuzz.nii", 8))
                abort();
            return 0;
        }
        buf = plain;
    }
    ib_nifti n;
    int rc = ib_nifti_parse(buf, len, "fuzz.nii", &n, &err);
    if (rc != IB_OK) {
        if (n.data || strncmp(err.msg, "fuzz.nii", 8))
            abort();
    } else {
        size_t nvox = 1;
        for (int i = 0; i < n.ndim; i++)
            nvox *= (size_t)n.dims[i];
        if (nvox != n.nvox || !n.data)
            abort();
        volatile float sink = 0;
        for (size_t i = 0; i < n.nvox; i++)
            sink += n.data[i];
        (void)sink;
        ib_nifti_deinit(&n);
    }
    ib_free(plain);
    return 0;
}
