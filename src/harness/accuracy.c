/*
 * accuracy.c - an accuracy log scored by the benchmark's accuracy script (accuracy.h): the
 * log read and its hex decoded once, the entry's metric, accuracy.txt with the hash line.
 * The metrics themselves live in src/metrics/ and the entries; nothing here knows a
 * benchmark.
 */
#include "harness/accuracy.h"

#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "compliance/acclog.h"
#include "compliance/sha256.h"

int ib_bench_score_log(const ib_benchmark *b, const ib_bench_config *cfg, void *state,
                       const char *path, ib_strbuf *text, double *value, size_t *entries,
                       ib_err *err)
{
    *entries = 0;
    ib_acclog *log = NULL;
    int rc = ib_acclog_load(path, &log, err);
    if (rc)
        return rc;
    size_t n = ib_acclog_count(log), bytes = 0;
    *entries = n;
    for (size_t i = 0; i < n; i++)
        bytes += ib_acclog_at(log, i)->data_len / 2;
    ib_bench_acc_entry *e = ib_malloc(sizeof *e * (n ? n : 1));
    uint8_t *buf = ib_malloc(bytes ? bytes : 1);
    if (!e || !buf) {
        rc = ib_err_set(err, IB_ENOMEM, "accuracy: out of memory");
        goto done;
    }
    if (ib_acclog_truncated(log)) {
        rc = ib_err_set(err, IB_EFORMAT,
                        "%s: truncated by truncate_accuracy_log.py; scoring needs the full log "
                        "(the submission keeps it outside the tree)",
                        path);
        goto done;
    }
    if (n == 0) {
        rc = ib_err_set(err, IB_EFORMAT, "%s: the log holds no entries (was it written by an "
                                         "accuracy run?)",
                        path);
        goto done;
    }
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const ib_acclog_entry *a = ib_acclog_at(log, i);
        size_t nb = a->data_len / 2;
        for (size_t k = 0; k < nb; k++) {
            int hi = ib_hexval(a->data[2 * k]), lo = ib_hexval(a->data[2 * k + 1]);
            if (hi < 0 || lo < 0) {
                rc = ib_err_set(err, IB_EFORMAT, "%s:%zu: entry %zu: bad hex in \"data\"", path,
                                a->line, i);
                goto done;
            }
            buf[off + k] = (uint8_t)(hi << 4 | lo);
        }
        e[i] = (ib_bench_acc_entry){a->qsl_idx, buf + off, nb};
        off += nb;
    }
    ib_err aerr;
    ib_err_clear(&aerr);
    rc = b->accuracy(state, cfg, e, n, text, value, &aerr);
    if (rc && err) /* the entry names the record; the file is said here */
        ib_err_set(err, rc, "%s: %s", path, aerr.msg[0] ? aerr.msg : ib_strerror(rc));
done:
    ib_free(e);
    ib_free(buf);
    ib_acclog_destroy(log);
    return rc;
}

int ib_accuracy_write_txt(const char *dir, const char *text, const char *log_path, ib_err *err)
{
    char out[4096], hash[65];
    if (ib_path_join(out, sizeof out, dir, "accuracy.txt"))
        return ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
    int rc = ib_sha256_file_hex(log_path, hash, err);
    if (rc)
        return rc;
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_strbuf_printf(&sb, "%shash=%s\n", text, hash);
    rc = sb.oom ? ib_err_set(err, IB_ENOMEM, "accuracy: out of memory")
                : ib_file_write_all(out, ib_strbuf_cstr(&sb), sb.len, err);
    ib_strbuf_deinit(&sb);
    return rc;
}

int ib_accuracy_score(const ib_accuracy_opts *o, ib_accuracy_result *r, ib_err *err)
{
    memset(r, 0, sizeof *r);
    const ib_benchmark *b = o->bench;
    if (!b || !o->log_path || !o->data_dir)
        return ib_err_set(err, IB_EINVAL, "accuracy: a benchmark, a log and a dataset are needed");
    enum ib_dtype pd = ib_benchmark_payload_dtype(b, &o->cfg);
    if (!ib_benchmark_accepts_payload(b, pd))
        return ib_err_set(err, IB_EINVAL, "%s: payload dtype %s is not one its accuracy script "
                                          "reads",
                          b->id, ib_dtype_name(pd));
    if (!ib_path_exists(o->log_path))
        return ib_err_set(err, IB_ENOTFOUND, "%s: no such file (the accuracy run writes it as "
                                             "accuracy/mlperf_log_accuracy.json)",
                          o->log_path);
    void *state = NULL;
    size_t total = 0;
    int rc = b->open(&o->cfg, o->data_dir, NULL, &state, &total, err);
    if (rc)
        return rc;
    ib_strbuf text;
    ib_strbuf_init(&text);
    rc = ib_bench_score_log(b, &o->cfg, state, o->log_path, &text, &r->value, &r->entries, err);
    b->close(state);
    if (rc == IB_OK && o->output_dir) {
        if (!(rc = ib_mkdirs(o->output_dir, err)) &&
            !(rc = ib_accuracy_write_txt(o->output_dir, ib_strbuf_cstr(&text), o->log_path, err)))
            ib_path_join(r->txt_path, sizeof r->txt_path, o->output_dir, "accuracy.txt");
    }
    if (rc == IB_OK && text.oom)
        rc = ib_err_set(err, IB_ENOMEM, "accuracy: out of memory");
    if (rc) {
        ib_strbuf_deinit(&text);
        return rc;
    }
    r->reference = ib_bench_accuracy_reference(b, &o->cfg);
    r->target = r->reference * b->accuracy_target_fraction;
    r->met = r->value >= r->target;
    r->text = ib_strbuf_detach(&text);
    if (!r->text && !(r->text = ib_strdup("")))
        return ib_err_set(err, IB_ENOMEM, "accuracy: out of memory");
    return IB_OK;
}
