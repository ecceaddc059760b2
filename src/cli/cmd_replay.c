/*
 * cmd_replay.c - `inferbench replay RUN_DIR... [--json]`: re-derive the query
 * plan of published runs from their logs and say which sampling mode
 * reproduces each one (src/compliance/replay.h, issue 12). A RUN_DIR without
 * a detail log is searched recursively for run folders (every folder holding
 * mlperf_log_detail.txt), so a whole results tree can be passed.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json_writer.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "compliance/replay.h"
#include "inferbench/base.h"

#define CMD "replay"

static void usage(void)
{
    printf("usage: inferbench replay RUN_DIR... [--json]\n\n"
           "Replay published LoadGen runs: read the effective settings, seeds and QSL counts\n"
           "of mlperf_log_detail.txt, derive the query plan under each sampling mode\n"
           "(libstdc++11: GCC >= 11 builds; libstdc++10: older builds such as v1.1), and\n"
           "compare every loaded_qsl_set and every (seq_id, qsl_idx) of\n"
           "mlperf_log_accuracy.json. A RUN_DIR without a detail log is searched\n"
           "recursively for run folders.\n\n"
           "  --json       print one JSON document on stdout\n"
           "  -h, --help   this help\n\n"
           "Exit status: 0 every run reproduced by some mode, 3 a run is not reproduced,\n"
           "2 bad input (missing file or key, unknown LoadGen version, truncated log),\n"
           "1 runtime error.\n");
}

typedef struct dirlist {
    char **v;
    size_t n, cap;
} dirlist;

static int push(dirlist *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) return IB_ENOMEM;
        l->v = nv;
        l->cap = cap;
    }
    size_t len = strlen(s);
    l->v[l->n] = malloc(len + 1);
    if (!l->v[l->n]) return IB_ENOMEM;
    memcpy(l->v[l->n++], s, len + 1);
    return IB_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run folders under `dir` (dir itself when it holds a detail log). */
static int collect(const char *dir, dirlist *out, int depth)
{
    char p[4096];
    if (ib_path_join(p, sizeof p, dir, "mlperf_log_detail.txt") != IB_OK) return IB_EINVAL;
    if (ib_path_exists(p) && !ib_path_is_dir(p)) return push(out, dir);
    if (depth > 16) return IB_OK;
    DIR *d = opendir(dir);
    if (!d) return IB_OK;
    dirlist subs = {0};
    struct dirent *de;
    int rc = IB_OK;
    while (!rc && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (ib_path_join(p, sizeof p, dir, de->d_name) != IB_OK) continue;
        if (ib_path_is_dir(p)) rc = push(&subs, p);
    }
    closedir(d);
    if (subs.n) qsort(subs.v, subs.n, sizeof *subs.v, cmp_str);
    for (size_t i = 0; i < subs.n; i++) {
        if (!rc) rc = collect(subs.v[i], out, depth + 1);
        free(subs.v[i]);
    }
    free(subs.v);
    return rc;
}

static void print_text(const char *dir, const ib_replay_result *r)
{
    if (r->reproduced) {
        printf("%s: reproduced by %s (%s, %s %s; %zu loaded sets, %zu accuracy-log entries%s)\n",
               dir,
               r->nmodes_reproducing > 1 ? "libstdc++11 and libstdc++10 (indistinguishable)"
                                         : ib_lg_rng_compat_name(r->mode),
               r->loadgen_version, r->scenario, r->test_mode, r->sets_logged, r->acc_entries,
               !r->acc_path[0]    ? ", no accuracy log"
               : r->acc_truncated ? ", truncated log"
                                  : "");
        return;
    }
    printf("%s: NOT reproduced (%s, %s %s)\n", dir, r->loadgen_version, r->scenario, r->test_mode);
    for (size_t i = 0; i < IB_REPLAY_NMODES; i++) {
        const ib_replay_mode *m = &r->modes[i];
        printf("  %s: %zu/%zu sets differ, %zu/%zu accuracy-log pairs differ; first: %s\n",
               ib_lg_rng_compat_name(m->compat), m->sets_differ, m->sets_compared, m->pairs_differ,
               m->pairs_compared, m->first_diff);
    }
}

static void json_run(ib_jw *jw, const char *dir, const ib_replay_result *r, const ib_err *err)
{
    ib_jw_object_begin(jw);
    ib_jw_key(jw, "dir");
    ib_jw_string(jw, dir);
    if (err) {
        ib_jw_key(jw, "error");
        ib_jw_string(jw, err->msg);
        ib_jw_object_end(jw);
        return;
    }
    ib_jw_key(jw, "loadgen_version");
    ib_jw_string(jw, r->loadgen_version);
    ib_jw_key(jw, "rules");
    ib_jw_string(jw, ib_lg_rules_name(r->rules));
    ib_jw_key(jw, "scenario");
    ib_jw_string(jw, r->scenario);
    ib_jw_key(jw, "test_mode");
    ib_jw_string(jw, r->test_mode);
    ib_jw_key(jw, "qsl_total_count");
    ib_jw_uint(jw, r->qsl_total);
    ib_jw_key(jw, "loaded_sets_logged");
    ib_jw_uint(jw, r->sets_logged);
    ib_jw_key(jw, "accuracy_log");
    if (r->acc_path[0])
        ib_jw_string(jw, r->acc_path);
    else
        ib_jw_null(jw);
    ib_jw_key(jw, "accuracy_log_entries");
    ib_jw_uint(jw, r->acc_entries);
    ib_jw_key(jw, "accuracy_log_truncated");
    ib_jw_bool(jw, r->acc_truncated);
    ib_jw_key(jw, "reproduced");
    ib_jw_bool(jw, r->reproduced);
    ib_jw_key(jw, "mode");
    if (r->reproduced)
        ib_jw_string(jw, ib_lg_rng_compat_name(r->mode));
    else
        ib_jw_null(jw);
    ib_jw_key(jw, "modes_reproducing");
    ib_jw_array_begin(jw);
    for (size_t i = 0; i < IB_REPLAY_NMODES; i++)
        if (r->modes[i].reproduced) ib_jw_string(jw, ib_lg_rng_compat_name(r->modes[i].compat));
    ib_jw_array_end(jw);
    ib_jw_key(jw, "modes");
    ib_jw_array_begin(jw);
    for (size_t i = 0; i < IB_REPLAY_NMODES; i++) {
        const ib_replay_mode *m = &r->modes[i];
        ib_jw_object_begin(jw);
        ib_jw_key(jw, "rng_compat");
        ib_jw_string(jw, ib_lg_rng_compat_name(m->compat));
        ib_jw_key(jw, "reproduced");
        ib_jw_bool(jw, m->reproduced);
        ib_jw_key(jw, "sets_compared");
        ib_jw_uint(jw, m->sets_compared);
        ib_jw_key(jw, "sets_differ");
        ib_jw_uint(jw, m->sets_differ);
        ib_jw_key(jw, "pairs_compared");
        ib_jw_uint(jw, m->pairs_compared);
        ib_jw_key(jw, "pairs_differ");
        ib_jw_uint(jw, m->pairs_differ);
        ib_jw_key(jw, "first_diff");
        ib_jw_string(jw, m->first_diff);
        ib_jw_object_end(jw);
    }
    ib_jw_array_end(jw);
    ib_jw_object_end(jw);
}

int ib_cmd_replay(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    int c;
    optind = 1;
    opterr = 0; /* our own message, with the nearest option */
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'h':
            usage();
            return IB_EXIT_OK;
        case ':':
            return ib_cli_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        default:
            return ib_cli_unknown_option(CMD, argv[optind - 1], longopts);
        }
    }
    if (optind >= argc) return ib_cli_usage_error(CMD, "no RUN_DIR given");
    dirlist runs = {0};
    for (int i = optind; i < argc; i++) {
        if (!ib_path_is_dir(argv[i])) {
            ib_cli_error(CMD,
                         "%s: not a folder (pass a run folder holding "
                         "mlperf_log_detail.txt, or a tree of them)",
                         argv[i]);
            return IB_EXIT_USAGE;
        }
        size_t before = runs.n;
        if (collect(argv[i], &runs, 0) != IB_OK) {
            ib_cli_error(CMD, "out of memory");
            return IB_EXIT_RUNTIME;
        }
        if (runs.n == before) {
            ib_cli_error(CMD, "%s: no mlperf_log_detail.txt in it or below", argv[i]);
            return IB_EXIT_USAGE;
        }
    }
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_jw jw;
    ib_jw_init(&jw, &sb, true);
    if (json) {
        ib_jw_object_begin(&jw);
        ib_jw_key(&jw, "runs");
        ib_jw_array_begin(&jw);
    }
    int exit_code = IB_EXIT_OK;
    size_t nrep = 0, nbad = 0;
    for (size_t i = 0; i < runs.n; i++) {
        ib_replay_result r;
        ib_err err;
        ib_err_clear(&err);
        int rc = ib_replay_dir(runs.v[i], &r, &err);
        if (rc) {
            nbad++;
            if (json)
                json_run(&jw, runs.v[i], NULL, &err);
            else
                ib_cli_error(CMD, "%s", err.msg);
            int code = (rc == IB_ENOMEM || rc == IB_EIO) ? IB_EXIT_RUNTIME : IB_EXIT_USAGE;
            if (exit_code == IB_EXIT_OK || exit_code == IB_EXIT_INVALID) exit_code = code;
        } else {
            nrep += r.reproduced;
            if (json)
                json_run(&jw, runs.v[i], &r, NULL);
            else
                print_text(runs.v[i], &r);
            if (!r.reproduced && exit_code == IB_EXIT_OK) exit_code = IB_EXIT_INVALID;
        }
        free(runs.v[i]);
    }
    free(runs.v);
    if (json) {
        ib_jw_array_end(&jw);
        ib_jw_key(&jw, "runs_total");
        ib_jw_uint(&jw, runs.n);
        ib_jw_key(&jw, "runs_reproduced");
        ib_jw_uint(&jw, nrep);
        ib_jw_key(&jw, "runs_bad_input");
        ib_jw_uint(&jw, nbad);
        ib_jw_object_end(&jw);
        ib_jw_finish(&jw);
        fputs(ib_strbuf_cstr(&sb), stdout);
        fputc('\n', stdout);
    } else {
        printf("inferbench replay: %zu run%s, %zu reproduced, %zu not reproduced, %zu bad "
               "input\n",
               runs.n, runs.n == 1 ? "" : "s", nrep, runs.n - nrep - nbad, nbad);
    }
    ib_strbuf_deinit(&sb);
    return exit_code;
}
