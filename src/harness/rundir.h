/*
 * rundir.h - where one run's files go in the results tree, and how they get there without
 * touching an earlier run:
 *
 *   <scenario>/.partial-<UTC time>-<pid>/   every file while the run is in progress
 *       performance/run_1/                  the loadgen's logs of the performance test
 *       accuracy/                           the accuracy test's logs and accuracy.txt
 *       run.json
 *   <scenario>/performance/run_N/           reserved once the run is complete (an empty
 *                                           folder, made with mkdir so two runs never take
 *                                           the same N): the next free N, or run_1 with
 *                                           force; a run stopped before never holds one
 *   <scenario>/accuracy/                    an existing one is an error unless force
 *   <scenario>/run.json                     the latest complete run
 *
 * Commit moves the finished files into place with rename(2) (same file system, atomic per
 * folder; force swaps the old folder out first and removes it after), so a reader sees the
 * earlier run or the new one, never a mixture. A run that fails is removed; an interrupted
 * one stays in its .partial folder (hidden from tree walkers, named on the console).
 *
 * Thread-safety: one ib_rundir per run; no global state.
 */
#ifndef IB_HARNESS_RUNDIR_H
#define IB_HARNESS_RUNDIR_H

#include <stdbool.h>

#include "base/common.h"

typedef struct ib_rundir {
    char scenario[4096]; /* <out>/<system>/<benchmark>/<Scenario> */
    char stage[4096];    /* <scenario>/.partial-... */
    char perf[4096];     /* <stage>/performance/run_1: where the performance logs go */
    char acc[4096];      /* <stage>/accuracy */
    char run_json[4096]; /* <stage>/run.json */
    char final_perf[4096], final_acc[4096], final_run_json[4096];
    unsigned run_n;      /* N of the reserved performance/run_N (0: no performance test) */
    bool want_perf, want_acc, force;
} ib_rundir;

/*
 * ib_rundir_open - check the output folder (IB_EINVAL naming it when it is a file, cannot be
 * created or written, or when accuracy/ already holds a run and force is false) and create
 * the staging folder. Cheap: callers run it before any expensive work, so a bad
 * --output-dir fails at once.
 */
int ib_rundir_open(ib_rundir *rd, const char *scenario_dir, bool want_perf, bool want_acc,
                   bool force, ib_err *err);

/* The run is complete: reserve performance/run_N (when want_perf), so that final_perf and
 * run_n name where it goes (run.json records them before the commit). */
int ib_rundir_reserve(ib_rundir *rd, ib_err *err);

/* Move the finished run into place (see above) and remove the staging folder. */
int ib_rundir_commit(ib_rundir *rd, ib_err *err);

/* A run that will not be committed: its reserved run_N is released; the staging folder is
 * removed, or kept when keep is true (an interrupted run: its logs are worth reading). */
void ib_rundir_abandon(ib_rundir *rd, bool keep);

#endif
