/*
 * verify_dir.c - the run_verification.py equivalents: locate the logs of a results folder and
 * of a compliance run, run the verifiers and write verify_accuracy.txt /
 * verify_performance.txt; plus the small outcome and option helpers of compliance.h.
 *
 * The official scripts copy logs around and call each other through the shell; here the
 * inputs are paths and the only side effect is writing the verify files into out_dir, so
 * `inferbench audit` can call these on a fresh run and `inferbench check` on a tree.
 */
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "compliance/verify_internal.h"

void ib_verify_options_defaults(ib_verify_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = IB_CHECK_V1_1;
    o->compare = IB_VERIFY_BYTES;
    o->benchmark = NULL;
}

int ib_verify_compare_parse(const char *text, enum ib_verify_compare *out)
{
    static const struct {
        const char *name;
        enum ib_verify_compare c;
    } t[] = {{"bytes", IB_VERIFY_BYTES},
             {"byte", IB_VERIFY_FIRST_BYTE},
             {"float32", IB_VERIFY_FIRST_FLOAT32},
             {"int32", IB_VERIFY_FIRST_INT32},
             {"int64", IB_VERIFY_FIRST_INT64}};
    for (size_t i = 0; text && i < IB_ARRAY_LEN(t); i++)
        if (!strcmp(text, t[i].name)) {
            *out = t[i].c;
            return IB_OK;
        }
    return IB_EINVAL;
}

void ib_verify_outcome_init(ib_verify_outcome *o)
{
    memset(o, 0, sizeof *o);
    o->verdict = IB_VERIFY_PASS;
    o->fallback_verdict = IB_VERIFY_PASS;
}

void ib_verify_outcome_deinit(ib_verify_outcome *o)
{
    if (!o)
        return;
    ib_free(o->text);
    o->text = NULL;
    o->text_len = 0;
}

int ib_verify_outcome_write(const ib_verify_outcome *o, const char *path, ib_err *err)
{
    return ib_file_write_all(path, o->text ? o->text : "", o->text ? o->text_len : 0, err);
}

int ib_verify_find_log(const char *dir, const char *sub, const char *name, char *out, size_t n,
                       ib_err *err)
{
    if (sub && snprintf(out, n, "%s/%s/%s", dir, sub, name) < (int)n && ib_path_exists(out))
        return IB_OK;
    if (snprintf(out, n, "%s/%s", dir, name) < (int)n && ib_path_exists(out))
        return IB_OK;
    return ib_err_set(err, IB_ENOTFOUND, "%s: no %s in %s%s%s or in the folder itself", dir,
                      name, dir, sub ? "/" : "", sub ? sub : "");
}

static int write_into(const char *out_dir, const char *name, const ib_verify_outcome *o,
                      ib_err *err)
{
    char p[4096];
    if (!out_dir)
        return IB_OK;
    int rc = ib_mkdirs(out_dir, err);
    if (rc)
        return rc;
    if (snprintf(p, sizeof p, "%s/%s", out_dir, name) >= (int)sizeof p)
        return ib_err_set(err, IB_EINVAL, "%s: path too long", out_dir);
    return ib_verify_outcome_write(o, p, err);
}

/* The submission's performance log the round's script reads (summary in v1.1). */
static int results_perf_log(const char *results_dir, enum ib_check_version v, bool summary,
                            char *out, size_t n, ib_err *err)
{
    const char *name = summary || v == IB_CHECK_V1_1 ? "mlperf_log_summary.txt"
                                                     : "mlperf_log_detail.txt";
    return ib_verify_find_log(results_dir, "performance/run_1", name, out, n, err);
}

int ib_verify_test01_dir(const char *results_dir, const char *test_dir, const char *out_dir,
                         const ib_verify_options *o, ib_verify_outcome *acc,
                         ib_verify_outcome *perf, ib_err *err)
{
    ib_verify_options def;
    if (!o) {
        ib_verify_options_defaults(&def);
        o = &def;
    }
    char ref_acc[4096], test_acc[4096], ref_perf[4096], test_perf[4096];
    const char *perf_name = o->version == IB_CHECK_V1_1 ? "mlperf_log_summary.txt"
                                                        : "mlperf_log_detail.txt";
    int rc = ib_verify_find_log(results_dir, "accuracy", "mlperf_log_accuracy.json", ref_acc,
                                sizeof ref_acc, err);
    if (!rc)
        rc = ib_verify_find_log(test_dir, "accuracy", "mlperf_log_accuracy.json", test_acc,
                                sizeof test_acc, err);
    if (!rc)
        rc = results_perf_log(results_dir, o->version, false, ref_perf, sizeof ref_perf, err);
    if (!rc)
        rc = ib_verify_find_log(test_dir, "performance/run_1", perf_name, test_perf,
                                sizeof test_perf, err);
    if (!rc)
        rc = ib_verify_test01_accuracy(ref_acc, test_acc, o, acc, err);
    if (rc)
        return rc;
    if (acc->verdict != IB_VERIFY_PASS && o->benchmark) {
        char base[4096], comp[4096];
        snprintf(base, sizeof base, "%s/accuracy/baseline_accuracy.txt", test_dir);
        snprintf(comp, sizeof comp, "%s/accuracy/compliance_accuracy.txt", test_dir);
        if (ib_path_exists(base) && ib_path_exists(comp) &&
            (rc = ib_verify_accuracy_fallback(base, comp, o, acc, err)))
            return rc;
    }
    if ((rc = ib_verify_performance(ref_perf, test_perf, IB_VERIFY_TEST01, o, perf, err)))
        return rc;
    if ((rc = write_into(out_dir, "verify_accuracy.txt", acc, err)))
        return rc;
    return write_into(out_dir, "verify_performance.txt", perf, err);
}

int ib_verify_test05_dir(const char *results_dir, const char *test_dir, const char *out_dir,
                         const ib_verify_options *o, ib_verify_outcome *perf, ib_err *err)
{
    ib_verify_options def;
    if (!o) {
        ib_verify_options_defaults(&def);
        o = &def;
    }
    char ref[4096], test[4096];
    int rc = results_perf_log(results_dir, o->version, false, ref, sizeof ref, err);
    if (!rc)
        rc = ib_verify_find_log(test_dir, "performance/run_1",
                                o->version == IB_CHECK_V1_1 ? "mlperf_log_summary.txt"
                                                            : "mlperf_log_detail.txt",
                                test, sizeof test, err);
    if (!rc)
        rc = ib_verify_performance(ref, test, IB_VERIFY_TEST05, o, perf, err);
    if (rc)
        return rc;
    return write_into(out_dir, "verify_performance.txt", perf, err);
}

int ib_verify_test04_dir(const char *results_dir, const char *a_dir, const char *b_dir,
                         const char *out_dir, const ib_verify_options *o, ib_verify_outcome *perf,
                         ib_err *err)
{
    ib_verify_options def;
    if (!o) {
        ib_verify_options_defaults(&def);
        o = &def;
    }
    char a[4096], b[4096];
    int rc;
    if (o->version == IB_CHECK_V1_1) {
        if (!a_dir || !b_dir)
            return ib_err_set(err, IB_EINVAL, "TEST04 (v1.1) needs the TEST04-A and TEST04-B runs");
        rc = ib_verify_find_log(a_dir, "performance/run_1", "mlperf_log_summary.txt", a, sizeof a,
                                err);
        if (!rc)
            rc = ib_verify_find_log(b_dir, "performance/run_1", "mlperf_log_summary.txt", b,
                                    sizeof b, err);
    } else {
        if (!results_dir || !a_dir)
            return ib_err_set(err, IB_EINVAL, "TEST04 needs the results folder and the TEST04 run");
        rc = results_perf_log(results_dir, o->version, true, a, sizeof a, err);
        if (!rc)
            rc = ib_verify_find_log(a_dir, "performance/run_1", "mlperf_log_summary.txt", b,
                                    sizeof b, err);
    }
    if (!rc)
        rc = ib_verify_test04(a, b, o, perf, err);
    if (rc)
        return rc;
    return write_into(out_dir, "verify_performance.txt", perf, err);
}
