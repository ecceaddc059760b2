/*
 * test_layers.c - the layer check (issue 28, item 7): every `#include
 * "dir/file.h"` under src/ must follow the table of allowed directions in
 * docs/DEVELOPING.md ("Layers"), every folder must have a row, the table
 * itself must have no cycle, and the public headers (include/inferbench)
 * include only each other. The check reads the document, so the picture and
 * the code cannot drift apart.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

#define LY_MAX 32
#define LY_NAME 32

typedef struct layer_tab {
    int n;
    char name[LY_MAX][LY_NAME];
    bool may[LY_MAX][LY_MAX]; /* may[a][b]: layer a may include layer b */
} layer_tab;

typedef struct layer_report {
    int files, includes, violations;
    char text[8192];
} layer_report;

__attribute__((format(printf, 2, 3))) static void say(layer_report *r, const char *fmt, ...)
{
    size_t len = strlen(r->text);
    if (len + 512 < sizeof r->text) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->text + len, sizeof r->text - len, fmt, ap);
        va_end(ap);
        strcat(r->text, "\n");
    }
    r->violations++;
}

static int find_layer(const layer_tab *t, const char *name, size_t len)
{
    for (int i = 0; i < t->n; i++)
        if (strlen(t->name[i]) == len && strncmp(t->name[i], name, len) == 0)
            return i;
    return -1;
}

/* The layer of a path relative to src/ ("backend/cpu/cpu_exec.c" -> backend/cpu):
 * the longest row name that is a whole-component prefix of its folder; -1: none. */
static int layer_of(const layer_tab *t, const char *rel)
{
    int best = -1;
    size_t best_len = 0;
    for (int i = 0; i < t->n; i++) {
        size_t l = strlen(t->name[i]);
        if (strncmp(rel, t->name[i], l) == 0 && rel[l] == '/' && l > best_len) {
            best = i;
            best_len = l;
        }
    }
    return best;
}

/* Parse the "## Layers" table: rows "| `name` | `a`, `b` | ... |" ("-": nothing). */
static int parse_table(const char *md, layer_tab *t, char *err, size_t err_n)
{
    memset(t, 0, sizeof *t);
    const char *sec = strstr(md, "\n## Layers\n");
    if (!sec) {
        snprintf(err, err_n, "no '## Layers' section");
        return -1;
    }
    const char *end = strstr(sec + 1, "\n## ");
    if (!end)
        end = sec + strlen(sec);
    char allowed[LY_MAX][512];
    for (const char *p = sec; p && p < end; p = strchr(p + 1, '\n')) {
        const char *l = p + 1;
        if (strncmp(l, "| `", 3) != 0)
            continue;
        const char *nb = l + 3, *ne = strchr(nb, '`');
        const char *c2 = ne ? strchr(ne, '|') : NULL;
        const char *c3 = c2 ? strchr(c2 + 1, '|') : NULL;
        if (!ne || !c2 || !c3 || ne - nb >= LY_NAME || t->n == LY_MAX) {
            snprintf(err, err_n, "bad row: %.60s", l);
            return -1;
        }
        if (find_layer(t, nb, (size_t)(ne - nb)) >= 0) {
            snprintf(err, err_n, "layer %.*s has two rows", (int)(ne - nb), nb);
            return -1;
        }
        memcpy(t->name[t->n], nb, (size_t)(ne - nb));
        size_t an = (size_t)(c3 - c2 - 1);
        if (an >= sizeof allowed[0]) {
            snprintf(err, err_n, "row %s: list too long", t->name[t->n]);
            return -1;
        }
        memcpy(allowed[t->n], c2 + 1, an);
        allowed[t->n][an] = 0;
        t->n++;
    }
    if (t->n == 0) {
        snprintf(err, err_n, "the Layers section has no rows");
        return -1;
    }
    for (int i = 0; i < t->n; i++) {
        for (const char *q = allowed[i]; (q = strchr(q, '`')) != NULL;) {
            const char *e = strchr(q + 1, '`');
            if (!e)
                break;
            int k = find_layer(t, q + 1, (size_t)(e - q - 1));
            if (k < 0) {
                snprintf(err, err_n, "row %s allows unknown layer %.*s", t->name[i],
                         (int)(e - q - 1), q + 1);
                return -1;
            }
            t->may[i][k] = true;
            q = e + 1;
        }
    }
    return 0;
}

/* The table itself points one way: depth-first search for a cycle. */
static bool cycle_from(const layer_tab *t, int v, int *state, int *from, int *to)
{
    state[v] = 1;
    for (int k = 0; k < t->n; k++) {
        if (!t->may[v][k] || k == v)
            continue;
        if (state[k] == 1) {
            *from = v;
            *to = k;
            return true;
        }
        if (state[k] == 0 && cycle_from(t, k, state, from, to))
            return true;
    }
    state[v] = 2;
    return false;
}

static bool table_cycle(const layer_tab *t, int *from, int *to)
{
    int state[LY_MAX] = {0};
    for (int v = 0; v < t->n; v++)
        if (state[v] == 0 && cycle_from(t, v, state, from, to))
            return true;
    return false;
}

/* Check the #include lines of one file (rel: path under the root, public: a header
 * of include/inferbench). */
static void check_file(const layer_tab *t, const char *path, const char *rel, bool public,
                       layer_report *r)
{
    FILE *f = fopen(path, "r");
    ASSERT_NOT_NULL(f);
    r->files++;
    int from = public ? -1 : layer_of(t, rel);
    if (!public && from < 0)
        say(r, "%s: folder has no row in the Layers table of docs/DEVELOPING.md", rel);
    char line[1024];
    int ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        const char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (*p != '#')
            continue;
        p++;
        while (isspace((unsigned char)*p))
            p++;
        if (strncmp(p, "include", 7) != 0)
            continue;
        const char *q = strchr(p, '"');
        const char *e = q ? strchr(q + 1, '"') : NULL;
        if (!q || !e)
            continue; /* <system> headers */
        char inc[512];
        snprintf(inc, sizeof inc, "%.*s", (int)(e - q - 1), q + 1);
        if (!strchr(inc, '/'))
            continue; /* the same folder */
        r->includes++;
        if (strncmp(inc, "inferbench/", 11) == 0)
            continue;
        if (public) {
            say(r, "%s:%d: public header includes private %s", rel, ln, inc);
            continue;
        }
        int to = layer_of(t, inc);
        if (to < 0) {
            say(r, "%s: includes %s, whose folder has no row in the Layers table (line %d)", rel,
                inc, ln);
            continue;
        }
        if (from < 0 || to == from || t->may[from][to])
            continue;
        say(r, "%s: includes %s: layer '%s' may not include it (line %d); move the code or "
               "add the arrow to the Layers table of docs/DEVELOPING.md",
            rel, inc, t->name[from], ln);
    }
    fclose(f);
}

static void walk(const layer_tab *t, const char *dir, const char *rel, bool public,
                 layer_report *r)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char path[1024], sub[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            walk(t, path, sub, public, r);
            continue;
        }
        const char *dot = strrchr(de->d_name, '.');
        if (dot && (!strcmp(dot, ".c") || !strcmp(dot, ".h") || !strcmp(dot, ".cu")))
            check_file(t, path, sub, public, r);
    }
    closedir(d);
}

/* The whole check of a tree: root/src and root/include/inferbench against root's
 * docs/DEVELOPING.md. Returns -1 (err says why) when the table cannot be used. */
static int check_layers(const char *root, layer_tab *t, layer_report *r, char *err, size_t err_n)
{
    memset(r, 0, sizeof *r);
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/DEVELOPING.md", root);
    char *md = ib_test_slurp(path);
    int rc = parse_table(md, t, err, err_n);
    free(md);
    if (rc)
        return rc;
    int a, b;
    if (table_cycle(t, &a, &b)) {
        snprintf(err, err_n, "the table has a cycle through %s -> %s", t->name[a], t->name[b]);
        return -1;
    }
    snprintf(path, sizeof path, "%s/src", root);
    walk(t, path, "", false, r);
    snprintf(path, sizeof path, "%s/include/inferbench", root);
    walk(t, path, "include/inferbench", true, r);
    return 0;
}

TEST(arch_layers_follow_the_table)
{
    layer_tab t;
    layer_report r;
    char err[256];
    int rc = check_layers(ib_test_src_dir(), &t, &r, err, sizeof err);
    if (rc)
        ib_test_fail(__FILE__, __LINE__, "docs/DEVELOPING.md: %s", err);
    printf("# %d layers, %d files, %d cross-folder includes, %d violations\n%s", t.n, r.files,
           r.includes, r.violations, r.text);
    ASSERT_INT_GE(t.n, 14);
    ASSERT_INT_GT(r.files, 300);
    ASSERT_INT_GT(r.includes, 500);
    ASSERT_INT_EQ(r.violations, 0);
}

static void put(const char *path, const char *text)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        mkdir(dir, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    ASSERT_NOT_NULL(f);
    fputs(text, f);
    fclose(f);
}

static const char DOC_HEAD[] = "# x\n\n## Layers\n\n| layer | may include | what |\n| --- | --- | --- |\n";

/* The check finds each kind of wrong include in a small tree, and refuses tables it
 * cannot trust (without these the test above could pass by checking nothing). */
TEST(arch_layers_check_catches_wrong_way_includes)
{
    layer_tab t;
    layer_report r;
    char err[256], doc[1024];
    snprintf(doc, sizeof doc,
             "%s| `base` | - | b |\n| `ir` | `base` | i |\n| `backend` | `ir`, `base` | k |\n"
             "| `backend/cpu` | `backend`, `base` | c |\n\n## Next\n| `zzz` | - | not a row |\n",
             DOC_HEAD);
    put("t1/docs/DEVELOPING.md", doc);
    put("t1/src/base/a.c", "#include \"base/a.h\"\n#include <stdio.h>\n#include \"local.h\"\n");
    put("t1/src/ir/g.c", "#include \"base/a.h\"\n  #  include \"inferbench/x.h\"\n");
    put("t1/src/backend/cpu/c.c", "#include \"backend/b.h\"\n#include \"ir/g.h\"\n");
    put("t1/include/inferbench/x.h", "#include \"inferbench/y.h\"\n");
    ASSERT_INT_EQ(check_layers("t1", &t, &r, err, sizeof err), 0);
    ASSERT_INT_EQ(t.n, 4); /* the row after the next section is not read */
    ASSERT_INT_EQ(r.files, 4);
    /* backend/cpu -> ir is not in its row */
    ASSERT_INT_EQ(r.violations, 1);
    ASSERT_TRUE(strstr(r.text, "backend/cpu/c.c: includes ir/g.h: layer 'backend/cpu'") != NULL);
    ASSERT_TRUE(strstr(r.text, "(line 2)") != NULL);

    /* an upward include, a folder without a row, a public header including a private one */
    put("t1/src/base/up.c", "#include \"backend/b.h\"\n");
    put("t1/src/newdir/n.c", "#include \"base/a.h\"\n");
    put("t1/src/ir/h.c", "#include \"newdir/n.h\"\n");
    put("t1/include/inferbench/y.h", "#include \"base/a.h\"\n");
    ASSERT_INT_EQ(check_layers("t1", &t, &r, err, sizeof err), 0);
    printf("%s", r.text);
    ASSERT_INT_EQ(r.violations, 5);
    ASSERT_TRUE(strstr(r.text, "base/up.c: includes backend/b.h: layer 'base'") != NULL);
    ASSERT_TRUE(strstr(r.text, "newdir/n.c: folder has no row") != NULL);
    ASSERT_TRUE(strstr(r.text, "ir/h.c: includes newdir/n.h, whose folder has no row") != NULL);
    ASSERT_TRUE(strstr(r.text, "include/inferbench/y.h:1: public header includes private base/a.h") !=
                NULL);

    /* tables that cannot be trusted */
    const char *bad[][2] = {
        {"| `base` | - | b |\n| `ir` | `base`, `runtime` | i |\n", "unknown layer runtime"},
        {"| `base` | `ir` | b |\n| `ir` | `base` | i |\n", "cycle"},
        {"| `base` | - | b |\n| `base` | - | again |\n", "two rows"},
        {"| `base | - |\n", "bad row"},
        {"no rows\n", "no rows"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(doc, sizeof doc, "%s%s", DOC_HEAD, bad[i][0]);
        put("t1/docs/DEVELOPING.md", doc);
        err[0] = 0;
        ASSERT_INT_EQ(check_layers("t1", &t, &r, err, sizeof err), -1);
        if (!strstr(err, bad[i][1]))
            ib_test_fail(__FILE__, __LINE__, "table %zu: '%s' does not say '%s'", i, err,
                         bad[i][1]);
    }
    put("t1/docs/DEVELOPING.md", "# no layers here\n");
    ASSERT_INT_EQ(check_layers("t1", &t, &r, err, sizeof err), -1);
    ASSERT_TRUE(strstr(err, "no '## Layers' section") != NULL);
}
