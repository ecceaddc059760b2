/*
 * runner.c - fork-per-test runner with timeouts, parallel jobs, TAP output and
 * a final "N passed, N failed, N skipped" line (what CI reads).
 *
 * Usage: ib-tests [-j JOBS] [-t TIMEOUT_S] [-l] [-v] [PATTERN...]
 *   PATTERN is an fnmatch glob on test names ("loadgen_*"); none = all.
 *   IB_TEST_TIMEOUT_MULT scales every timeout (sanitizer builds set it).
 * Each test's stdout/stderr go to a log file; the log is printed (prefixed
 * with "# ") when the test fails, or always with -v.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "test.h"

typedef void (*test_fn)(void);
typedef struct test_entry {
    const char *name;
    test_fn fn;           /* NULL for fuzz replay entries */
    int timeout_s;
    const char *fuzz;     /* fuzz target name for replay entries */
} test_entry;

#define IB_TEST_ENTRY(name, timeout) void ib_test_##name(void);
#define IB_FUZZ_ENTRY(name)
#include "test_list.h"
#undef IB_TEST_ENTRY
#undef IB_FUZZ_ENTRY

static const test_entry g_tests[] = {
#define IB_TEST_ENTRY(name, timeout) {#name, ib_test_##name, timeout, NULL},
#define IB_FUZZ_ENTRY(name) {"fuzz_corpus_" #name, NULL, 120, #name},
#include "test_list.h"
#undef IB_TEST_ENTRY
#undef IB_FUZZ_ENTRY
    {NULL, NULL, 0, NULL}};

static char g_tmpdir[4096];

/* ---- functions tests call ---------------------------------------------- */

void ib_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stdout);
    fflush(stderr);
    _exit(1);
}

void ib_test_skip(const char *reason)
{
    fprintf(stderr, "SKIP: %s\n", reason);
    fflush(stdout);
    fflush(stderr);
    _exit(IB_TEST_EXIT_SKIP);
}

void ib__assert_eq_i(const char *f, int l, const char *sa, const char *sb, intmax_t a, intmax_t b)
{
    if (a != b)
        ib_test_fail(f, l, "%s == %s: %jd vs %jd", sa, sb, a, b);
}

void ib__assert_eq_u(const char *f, int l, const char *sa, const char *sb, uintmax_t a, uintmax_t b)
{
    if (a != b)
        ib_test_fail(f, l, "%s == %s: %ju vs %ju", sa, sb, a, b);
}

void ib__assert_eq_d(const char *f, int l, const char *sa, const char *sb, double a, double b)
{
    if (!(a == b))
        ib_test_fail(f, l, "%s == %s: %.17g vs %.17g", sa, sb, a, b);
}

void ib__assert_eq_s(const char *f, int l, const char *sa, const char *sb, const char *a,
                     const char *b)
{
    if (!a || !b || strcmp(a, b) != 0)
        ib_test_fail(f, l, "%s == %s: \"%s\" vs \"%s\"", sa, sb, a ? a : "(null)",
                     b ? b : "(null)");
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

const char *ib_test_bin_dir(void)
{
    return env_or("IB_BIN_DIR", "build/release/bin");
}

const char *ib_test_src_dir(void)
{
    return env_or("IB_SRC_DIR", ".");
}

const char *ib_test_shared_dir(void)
{
    return env_or("IB_SHARED_DIR", "../shared");
}

const char *ib_test_tmpdir(void)
{
    return g_tmpdir;
}

char *ib__test_slurp(const char *file, int line, const char *path, size_t *len)
{
    char *text = NULL;
    size_t n = 0;
    ib_err err;
    ib_err_clear(&err);
    if (ib_file_read_all(path, 0, &text, &n, &err) != IB_OK)
        ib_test_fail(file, line, "cannot read %s: %s", path, err.msg);
    if (len)
        *len = n;
    return text;
}

char *ib_test_read(const char *path)
{
    char *text = NULL;
    size_t n = 0;
    return ib_file_read_all(path, 0, &text, &n, NULL) == IB_OK ? text : NULL;
}

int ib_test_system(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd)
        return -1;
    fprintf(stderr, "+ %s\n", cmd);
    fflush(stdout);
    fflush(stderr);
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

/* ---- the runner ---------------------------------------------------------- */

typedef struct running {
    pid_t pid;
    int idx;
    double start;
    char log[4200];
    char tmp[4096];
} running;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void rm_rf(const char *path)
{
    nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static void run_child(const test_entry *t, const char *tmp)
{
    snprintf(g_tmpdir, sizeof g_tmpdir, "%s", tmp);
    if (t->fn) {
        t->fn();
        fflush(stdout);
        fflush(stderr);
        _exit(0);
    }
    /* fuzz corpus replay: exec the replay binary over the committed corpus */
    char bin[4096], corpus[4096];
    snprintf(bin, sizeof bin, "%s/replay_%s", env_or("IB_FUZZ_DIR", "build/release/fuzz"),
             t->fuzz);
    snprintf(corpus, sizeof corpus, "%s/tests/fuzz/corpus/%s", ib_test_src_dir(), t->fuzz);
    execl(bin, bin, corpus, (char *)NULL);
    fprintf(stderr, "cannot exec %s: %s\n", bin, strerror(errno));
    _exit(1);
}

static void print_log(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        printf("#   %s%s", line, (n && line[n - 1] == '\n') ? "" : "\n");
    }
    fclose(f);
}

static void skip_reason(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    snprintf(out, n, "skipped");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "SKIP: ", 6) == 0) {
            line[strcspn(line, "\n")] = 0;
            snprintf(out, n, "%.500s", line + 6);
        }
    }
    fclose(f);
}

static bool matches(const char *name, int npat, char **pats)
{
    if (npat == 0)
        return true;
    for (int i = 0; i < npat; i++)
        if (fnmatch(pats[i], name, 0) == 0)
            return true;
    return false;
}

int main(int argc, char **argv)
{
    int jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    int timeout_override = 0;
    bool list = false, verbose = false;
    int opt;
    while ((opt = getopt(argc, argv, "j:t:lvh")) != -1) {
        switch (opt) {
        case 'j': jobs = atoi(optarg); break;
        case 't': timeout_override = atoi(optarg); break;
        case 'l': list = true; break;
        case 'v': verbose = true; break;
        default:
            fprintf(stderr, "usage: %s [-j JOBS] [-t TIMEOUT_S] [-l] [-v] [PATTERN...]\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (jobs < 1)
        jobs = 1;
    /* Tests run inside their own temporary folder, so default paths become absolute. */
    char cwd[4096], path[4300];
    if (getcwd(cwd, sizeof cwd)) {
        static const char *const defs[][2] = {{"IB_SRC_DIR", ""},
                                              {"IB_BIN_DIR", "/build/release/bin"},
                                              {"IB_FUZZ_DIR", "/build/release/fuzz"},
                                              {"IB_SHARED_DIR", "/../shared"}};
        for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
            snprintf(path, sizeof path, "%s%s", cwd, defs[i][1]);
            setenv(defs[i][0], path, 0);
        }
    }
    double mult = atof(env_or("IB_TEST_TIMEOUT_MULT", "1"));
    if (mult <= 0)
        mult = 1;
    int npat = argc - optind;
    char **pats = argv + optind;

    int sel[4096], nsel = 0;
    for (int i = 0; g_tests[i].name && nsel < 4096; i++)
        if (matches(g_tests[i].name, npat, pats))
            sel[nsel++] = i;
    if (list) {
        for (int i = 0; i < nsel; i++)
            printf("%s\n", g_tests[sel[i]].name);
        return 0;
    }

    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("1..%d\n", nsel);
    const char *tmproot = env_or("TMPDIR", "/tmp");
    bool keep = getenv("IB_TEST_KEEP") != NULL;
    running *run = calloc((size_t)jobs, sizeof *run);
    int passed = 0, failed = 0, skipped = 0, next = 0, active = 0, done = 0;
    if (!run)
        return 1;
    while (done < nsel) {
        while (active < jobs && next < nsel) {
            running *r = NULL;
            for (int k = 0; k < jobs; k++)
                if (run[k].pid == 0) {
                    r = &run[k];
                    break;
                }
            const test_entry *t = &g_tests[sel[next]];
            snprintf(r->tmp, sizeof r->tmp, "%s/ibtest.%ld.%s", tmproot, (long)getpid(), t->name);
            rm_rf(r->tmp);
            mkdir(r->tmp, 0755);
            snprintf(r->log, sizeof r->log, "%s.log", r->tmp);
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                setpgid(0, 0);
                FILE *lf = freopen(r->log, "w", stdout);
                if (!lf)
                    _exit(1);
                dup2(fileno(stdout), 2);
                setvbuf(stdout, NULL, _IONBF, 0);
                if (chdir(r->tmp) != 0)
                    _exit(1);
                /* a cache of generated models per test: tests stay independent and leave
                 * nothing in the user's ~/.cache */
                char cache[4200];
                snprintf(cache, sizeof cache, "%s/.cache", r->tmp);
                setenv("XDG_CACHE_HOME", cache, 1);
                run_child(t, r->tmp);
            }
            if (pid < 0) {
                perror("fork");
                return 1;
            }
            r->pid = pid;
            r->idx = next;
            r->start = now_s();
            next++;
            active++;
        }
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
        for (int k = 0; k < jobs; k++) {
            running *r = &run[k];
            if (r->pid == 0)
                continue;
            const test_entry *t = &g_tests[sel[r->idx]];
            int st = 0;
            pid_t w = waitpid(r->pid, &st, WNOHANG);
            double limit = (timeout_override ? timeout_override : t->timeout_s) * mult;
            bool timed_out = false;
            if (w == 0) {
                if (now_s() - r->start <= limit)
                    continue;
                kill(-r->pid, SIGKILL);
                kill(r->pid, SIGKILL);
                waitpid(r->pid, &st, 0);
                timed_out = true;
            }
            double el = now_s() - r->start;
            int num = r->idx + 1;
            if (!timed_out && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
                printf("ok %d - %s (%.2fs)\n", num, t->name, el);
                passed++;
                if (verbose)
                    print_log(r->log);
            } else if (!timed_out && WIFEXITED(st) && WEXITSTATUS(st) == IB_TEST_EXIT_SKIP) {
                char why[512];
                skip_reason(r->log, why, sizeof why);
                printf("ok %d - %s # SKIP %s\n", num, t->name, why);
                skipped++;
            } else {
                if (timed_out)
                    printf("not ok %d - %s (timeout after %.0fs)\n", num, t->name, limit);
                else if (WIFSIGNALED(st))
                    printf("not ok %d - %s (killed by signal %d)\n", num, t->name, WTERMSIG(st));
                else
                    printf("not ok %d - %s (exit %d)\n", num, t->name, WEXITSTATUS(st));
                print_log(r->log);
                failed++;
            }
            if (!keep) {
                rm_rf(r->tmp);
                remove(r->log);
            }
            r->pid = 0;
            active--;
            done++;
        }
    }
    free(run);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
