/*
 * fuzz_check_acclog.c - libFuzzer target for the accuracy-log reader (src/compliance/acclog.c):
 * the input is a whole mlperf_log_accuracy.json, possibly one cut by truncate_accuracy_log.py.
 * Rejections must name the file; accepted entries must point inside the input and hold only
 * hex digits of even length. Nesting bombs must fail cleanly, not exhaust the stack.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compliance/acclog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ib_acclog *log = NULL;
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_acclog_parse((const char *)data, size, "fuzz.json", &log, &err);
    if (rc != IB_OK) {
        if (log || !err.msg[0] || strncmp(err.msg, "fuzz.json", 9))
            abort();
        return 0;
    }
    if (ib_acclog_size(log) != size)
        abort();
    for (size_t i = 0; i < ib_acclog_count(log); i++) {
        const ib_acclog_entry *e = ib_acclog_at(log, i);
        if (e->data_len % 2 || e->line == 0)
            abort();
        for (size_t k = 0; k < e->data_len; k++)
            if (ib_hexval(e->data[k]) < 0)
                abort();
    }
    ib_acclog_destroy(log);
    return 0;
}
