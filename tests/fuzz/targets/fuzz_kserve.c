/*
 * fuzz_kserve.c - libFuzzer target for the KServe v2 message decoder (src/net/kserve.c),
 * the parser every byte a network peer sends goes through. The first byte picks request
 * or response, the next two the JSON header length (0: all JSON); the rest is the body.
 * A decoded message must re-encode in binary and decode to the same tensors.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/kserve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    bool request = data[0] & 1;
    size_t json_len = (size_t)data[1] | ((size_t)data[2] << 8);
    data += 3;
    size -= 3;
    ib_ks_msg m;
    if (ib_ks_decode(data, size, json_len, request, &m, NULL) != IB_OK)
        return 0;
    for (size_t i = 0; i < m.n_tensors; i++) {
        int64_t n = ib_tensor_desc_numel(&m.t[i].desc);
        if (n < 0 || (size_t)n * ib_dtype_size(m.t[i].desc.dtype) != m.t[i].nbytes)
            abort(); /* the decoder promised nbytes = shape x datatype */
    }
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    size_t jl = 0;
    if (ib_ks_encode(&m, request, true, &sb, &jl, NULL) == IB_OK) {
        ib_ks_msg back;
        if (ib_ks_decode((const uint8_t *)sb.data, sb.len, jl, request, &back, NULL) != IB_OK)
            abort();
        if (back.n_tensors != m.n_tensors)
            abort();
        for (size_t i = 0; i < m.n_tensors; i++)
            if (back.t[i].nbytes != m.t[i].nbytes ||
                memcmp(back.t[i].data, m.t[i].data, m.t[i].nbytes) != 0)
                abort();
        ib_ks_msg_free(&back);
    }
    ib_strbuf_deinit(&sb);
    ib_ks_msg_free(&m);
    return 0;
}
