/*
 * rundir.c - a run staged in a private folder and moved into the results tree when it is
 * complete (rundir.h). Only rename(2), mkdir(2) and rmdir(2) touch the final places, so an
 * earlier run is never half overwritten, whatever stops this one.
 */
#define _XOPEN_SOURCE 700 /* gmtime_r, access */
#include "harness/rundir.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"

static int join(char *out, size_t n, const char *a, const char *b, ib_err *err)
{
    return ib_path_join(out, n, a, b) ? ib_err_set(err, IB_EINVAL, "%s: path too long", a)
                                      : IB_OK;
}

/* mkdir performance/run_N for the first N that does not exist yet. */
static int reserve_run(ib_rundir *rd, ib_err *err)
{
    char perf_root[4096];
    int rc = join(perf_root, sizeof perf_root, rd->scenario, "performance", err);
    if (rc || (rc = ib_mkdirs(perf_root, err)))
        return rc;
    for (unsigned n = 1; n < 100000; n++) {
        char name[32];
        snprintf(name, sizeof name, "run_%u", n);
        if ((rc = join(rd->final_perf, sizeof rd->final_perf, perf_root, name, err)))
            return rc;
        if (rd->force && n == 1) { /* replaced at commit; nothing reserved */
            rd->run_n = 1;
            return IB_OK;
        }
        if (mkdir(rd->final_perf, 0755) == 0) {
            rd->run_n = n;
            return IB_OK;
        }
        if (errno != EEXIST)
            return ib_err_set(err, errno == EACCES || errno == EROFS ? IB_EINVAL : IB_EIO,
                              "%s: cannot create directory: %s", rd->final_perf, strerror(errno));
    }
    return ib_err_set(err, IB_EINVAL, "%s: no free run_N folder left", perf_root);
}

int ib_rundir_open(ib_rundir *rd, const char *scenario_dir, bool want_perf, bool want_acc,
                   bool force, ib_err *err)
{
    memset(rd, 0, sizeof *rd);
    rd->want_perf = want_perf;
    rd->want_acc = want_acc;
    rd->force = force;
    if (snprintf(rd->scenario, sizeof rd->scenario, "%s", scenario_dir) >=
        (int)sizeof rd->scenario)
        return ib_err_set(err, IB_EINVAL, "%s: path too long", scenario_dir);
    int rc = ib_mkdirs(rd->scenario, err);
    if (rc)
        return rc;
    if (access(rd->scenario, W_OK) != 0)
        return ib_err_set(err, IB_EINVAL, "%s: cannot write there: %s (choose another "
                                          "--output-dir)",
                          rd->scenario, strerror(errno));
    if ((rc = join(rd->final_acc, sizeof rd->final_acc, rd->scenario, "accuracy", err)) ||
        (rc = join(rd->final_run_json, sizeof rd->final_run_json, rd->scenario, "run.json", err)))
        return rc;
    if (want_acc && !force && ib_path_exists(rd->final_acc))
        return ib_err_set(err, IB_EINVAL,
                          "%s holds an earlier accuracy run; --force replaces it (once this "
                          "run completes), or choose another --output-dir",
                          rd->final_acc);
    char name[96];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(name, sizeof name, ".partial-%s-%ld", stamp, (long)getpid());
    if ((rc = join(rd->stage, sizeof rd->stage, rd->scenario, name, err)) ||
        (rc = join(rd->acc, sizeof rd->acc, rd->stage, "accuracy", err)) ||
        (rc = join(rd->run_json, sizeof rd->run_json, rd->stage, "run.json", err)) ||
        (rc = join(rd->perf, sizeof rd->perf, rd->stage, "performance/run_1", err)))
        return rc;
    return ib_mkdirs(rd->stage, err);
}

int ib_rundir_reserve(ib_rundir *rd, ib_err *err)
{
    return rd->want_perf && !rd->run_n ? reserve_run(rd, err) : IB_OK;
}

/* Put the staged folder `from` at `to`: rename(2) replaces a missing or empty (reserved)
 * `to` in one step; a full one (the earlier run, with force) is moved aside into the stage
 * first and removed once the new one is in place. */
static int place(ib_rundir *rd, const char *from, const char *to, ib_err *err)
{
    if (rename(from, to) == 0)
        return IB_OK;
    if (!(errno == ENOTEMPTY || errno == EEXIST) || !rd->force)
        return ib_err_set(err, IB_EIO, "cannot move %s to %s: %s", from, to, strerror(errno));
    char old[4200];
    snprintf(old, sizeof old, "%s/replaced", rd->stage);
    int rc = ib_rename(to, old, err);
    if (rc)
        return rc;
    if ((rc = ib_rename(from, to, err))) {
        ib_rename(old, to, NULL); /* put the earlier run back */
        return rc;
    }
    ib_remove_tree(old, NULL);
    return IB_OK;
}

int ib_rundir_commit(ib_rundir *rd, ib_err *err)
{
    int rc = ib_rundir_reserve(rd, err);
    if (rd->want_acc && ib_path_is_dir(rd->acc))
        rc = place(rd, rd->acc, rd->final_acc, err);
    if (!rc && rd->want_perf && ib_path_is_dir(rd->perf))
        rc = place(rd, rd->perf, rd->final_perf, err);
    if (!rc && ib_path_exists(rd->run_json))
        rc = ib_rename(rd->run_json, rd->final_run_json, err);
    if (rc)
        return rc;
    rd->run_n = 0; /* nothing reserved any more */
    return ib_remove_tree(rd->stage, err);
}

void ib_rundir_abandon(ib_rundir *rd, bool keep)
{
    if (rd->run_n && !(rd->force && rd->run_n == 1))
        rmdir(rd->final_perf); /* only when still empty: the reservation */
    rd->run_n = 0;
    if (!keep && rd->stage[0])
        ib_remove_tree(rd->stage, NULL);
}
