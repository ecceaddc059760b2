/*
 * fuzz_check_mllog.c - libFuzzer target for the detail-log reader (src/compliance/mllog.c):
 * the input is a whole mlperf_log_detail.txt. A rejected input must explain itself (file and
 * line in the message); an accepted one must give records whose lookups are consistent
 * (find returns the first record of its key, the typed getters agree with the kinds).
 * Nothing may crash, hang or leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compliance/mllog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ib_mllog *log = NULL;
    ib_err err;
    ib_err_clear(&err);
    int rc = ib_mllog_parse((const char *)data, size, "fuzz.txt", &log, &err);
    if (rc != IB_OK) {
        if (log || !err.msg[0] || strncmp(err.msg, "fuzz.txt", 8))
            abort();
        return 0;
    }
    size_t n = ib_mllog_count(log), errors = 0;
    for (size_t i = 0; i < n; i++) {
        const ib_mllog_rec *r = ib_mllog_at(log, i);
        if (!r || !r->key || r->line == 0 || r->line > size)
            abort();
        errors += r->is_error;
        const ib_mllog_rec *f = ib_mllog_find(log, r->key);
        if (!f || f > r || strcmp(f->key, r->key))
            abort();
        uint64_t u;
        double d;
        if (ib_mllog_get_u64(log, r->key, &u) && f->kind != IB_MLV_UINT && f->kind != IB_MLV_INT)
            abort();
        if (ib_mllog_get_double(log, r->key, &d) && f->kind == IB_MLV_STRING)
            abort();
        const char *s = ib_mllog_get_str(log, r->key);
        if (s && (f->kind != IB_MLV_STRING || strlen(s) != f->n))
            abort();
        char buf[64];
        ib_mllog_value_text(r, buf, sizeof buf);
    }
    if (errors != ib_mllog_num_errors(log))
        abort();
    ib_mllog_destroy(log);
    return 0;
}
