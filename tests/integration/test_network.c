/*
 * test_network.c - the network SUT and `inferbench serve` over loopback (issue 29).
 *
 * Both ends are checked against an independent minimal implementation of the KServe v2
 * REST protocol written here with raw sockets and hand-made JSON (mini server, raw client),
 * so a misreading of the protocol shared by src/net/kserve.c's encoder and decoder cannot
 * pass: `run --sut null --endpoint` against the mini server, and the mini client against
 * `serve`. The mini server also injects every fault the issue lists (HTTP 500, a malformed
 * or short answer, a timeout, a server that dies mid-run, a wrong answer); each must end the
 * run INVALID (exit 3) naming the endpoint and the reason, within the request timeout.
 * Accuracy through the network equals the in-process run, byte for byte, for ResNet50 and
 * BERT (tiny stand-ins, random weights), with the real `serve` command in another process.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "harness/serve.h"
#include "test.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* strcasestr is a GNU extension: header names are case-insensitive. */
static const char *ci_strstr(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return hay;
    return NULL;
}

/* ---- the mini server: KServe v2 echo model "null", written from the spec ------------------ */

enum { MS_GOOD, MS_500, MS_MALFORMED, MS_SHORT, MS_SLOW, MS_DIE, MS_WRONG, MS_BAD_META };

typedef struct mini {
    int mode;
    int good_first; /* infer requests answered well before the fault starts */
    int lfd, port;
    pthread_t th;
    _Atomic int stop, infers;
    _Atomic int conns[64];
    _Atomic int n_conns;
} mini;

typedef struct conn_arg {
    mini *m;
    int fd;
} conn_arg;

static int read_full(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, buf + got, n - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static void send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        c += w;
        n -= (size_t)w;
    }
}

static void reply(int fd, int status, const char *headers, const void *body, size_t len)
{
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: keep-alive\r\n%s\r\n",
                     status, len, headers ? headers : "");
    send_all(fd, head, (size_t)n);
    send_all(fd, body, len);
}

/* One request: headers up to the blank line, then Content-Length bytes. */
static int read_request(int fd, char *method, char *path, size_t *hlen, char **body, size_t *len)
{
    char head[8192];
    size_t n = 0;
    while (n + 1 < sizeof head) {
        ssize_t r = recv(fd, head + n, 1, 0);
        if (r <= 0)
            return -1;
        n++;
        if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    head[n] = 0;
    if (sscanf(head, "%15s %255s", method, path) != 2)
        return -1;
    const char *cl = ci_strstr(head, "\r\nContent-Length:");
    const char *il = ci_strstr(head, "\r\nInference-Header-Content-Length:");
    *len = cl ? strtoul(cl + 17, NULL, 10) : 0;
    *hlen = il ? strtoul(il + 34, NULL, 10) : 0;
    *body = malloc(*len + 1);
    if (!*body || read_full(fd, *body, *len))
        return -1;
    (*body)[*len] = 0;
    return 0;
}

static void *mini_conn(void *arg)
{
    conn_arg *a = arg;
    mini *m = a->m;
    int fd = a->fd;
    free(a);
    char method[16], path[256], *body = NULL;
    size_t hlen, len;
    while (!atomic_load(&m->stop) && read_request(fd, method, path, &hlen, &body, &len) == 0) {
        if (strcmp(path, "/v2/health/ready") == 0) {
            reply(fd, 200, NULL, "{}", 2);
        } else if (strcmp(path, "/v2/models/null") == 0) {
            const char *dt = m->mode == MS_BAD_META ? "INT64" : "UINT32";
            char meta[256];
            int k = snprintf(meta, sizeof meta,
                             "{\"name\":\"null\",\"inputs\":[{\"name\":\"INDEX\",\"datatype\":"
                             "\"%s\",\"shape\":[-1]}],\"outputs\":[{\"name\":\"INDEX\","
                             "\"datatype\":\"UINT32\",\"shape\":[-1]}]}",
                             dt);
            reply(fd, 200, NULL, meta, (size_t)k);
        } else if (strcmp(path, "/v2/models/null/infer") == 0 && hlen && hlen <= len) {
            /* the request: {"inputs":[{"name":"INDEX","shape":[n],...}]} + n uint32 */
            const char *sh = strstr(body, "\"shape\":[");
            long n = sh ? strtol(sh + 9, NULL, 10) : -1;
            int k = atomic_fetch_add(&m->infers, 1);
            bool fault = k >= m->good_first;
            if (n < 0 || len - hlen != (size_t)n * 4) {
                reply(fd, 400, NULL, "{\"error\":\"mini: bad request\"}", 28);
            } else if (fault && m->mode == MS_500) {
                const char *e = "{\"error\":\"injected failure\"}";
                reply(fd, 500, NULL, e, strlen(e));
            } else if (fault && m->mode == MS_MALFORMED) {
                reply(fd, 200, NULL, "{\"outputs\":[{\"na", 16);
            } else if (fault && m->mode == MS_DIE) {
                atomic_store(&m->stop, 1); /* the server is gone: every socket closes */
                shutdown(m->lfd, SHUT_RDWR);
                close(m->lfd);
                for (int i = 0; i < atomic_load(&m->n_conns); i++)
                    shutdown(atomic_load(&m->conns[i]), SHUT_RDWR);
                break;
            } else {
                if (fault && m->mode == MS_SLOW)
                    sleep_ms(3000);
                char j[256], hdr[96];
                /* MS_SHORT: the header promises 4 more bytes than are sent */
                int jl = snprintf(j, sizeof j,
                                  "{\"model_name\":\"null\",\"outputs\":[{\"name\":\"INDEX\","
                                  "\"datatype\":\"UINT32\",\"shape\":[%ld],\"parameters\":{"
                                  "\"binary_data_size\":%ld}}]}",
                                  n + (fault && m->mode == MS_SHORT), 4 * (n + (fault && m->mode == MS_SHORT)));
                snprintf(hdr, sizeof hdr, "Inference-Header-Content-Length: %d\r\n", jl);
                char *out = malloc((size_t)jl + len - hlen);
                memcpy(out, j, (size_t)jl);
                memcpy(out + jl, body + hlen, len - hlen);
                if (fault && m->mode == MS_WRONG && n > 0)
                    out[jl] ^= 1;
                reply(fd, 200, hdr, out, (size_t)jl + len - hlen);
                free(out);
            }
        } else {
            reply(fd, 404, NULL, "{\"error\":\"mini: no such path\"}", 30);
        }
        free(body);
        body = NULL;
    }
    free(body);
    close(fd);
    return NULL;
}

static void *mini_accept(void *arg)
{
    mini *m = arg;
    while (!atomic_load(&m->stop)) {
        int fd = accept(m->lfd, NULL, NULL);
        if (fd < 0) {
            if (atomic_load(&m->stop) || errno == EBADF || errno == EINVAL)
                break;
            continue;
        }
        int k = atomic_fetch_add(&m->n_conns, 1);
        if (k < 64)
            atomic_store(&m->conns[k], fd);
        conn_arg *a = malloc(sizeof *a);
        a->m = m;
        a->fd = fd;
        pthread_t t;
        pthread_create(&t, NULL, mini_conn, a);
        pthread_detach(t);
    }
    return NULL;
}

static int listen_any(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ASSERT_TRUE(fd >= 0);
    ASSERT_INT_EQ(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ASSERT_INT_EQ(listen(fd, 64), 0);
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    *port = ntohs(a.sin_port);
    return fd;
}

static void mini_start(mini *m, int mode, int good_first)
{
    memset(m, 0, sizeof *m);
    m->mode = mode;
    m->good_first = good_first;
    m->lfd = listen_any(&m->port);
    ASSERT_INT_EQ(pthread_create(&m->th, NULL, mini_accept, m), 0);
}

static void mini_stop(mini *m)
{
    if (!atomic_exchange(&m->stop, 1)) {
        shutdown(m->lfd, SHUT_RDWR);
        close(m->lfd);
    }
    pthread_join(m->th, NULL);
    for (int i = 0; i < atomic_load(&m->n_conns) && i < 64; i++)
        shutdown(atomic_load(&m->conns[i]), SHUT_RDWR);
}

/* ---- running the CLI ------------------------------------------------------------------------ */

static int cli(const char *args)
{
    return ib_test_system("%s/inferbench %s > cli.out 2> cli.err", ib_test_bin_dir(), args);
}

static void null_run(int port, const char *mode, const char *out, const char *extra, int *rc)
{
    char args[1024];
    if (port)
        snprintf(args, sizeof args,
                 "run --sut null --endpoint http://127.0.0.1:%d --scenario Offline --mode %s "
                 "--total-samples 256 --target-qps 2000 --min-duration-ms 200 --batch 16 "
                 "--request-timeout-ms 500 --system s --output-dir %s -q %s",
                 port, mode, out, extra);
    else
        snprintf(args, sizeof args,
                 "run --sut null --scenario Offline --mode %s --total-samples 256 --target-qps "
                 "2000 --min-duration-ms 200 --system s --output-dir %s -q %s",
                 mode, out, extra);
    *rc = cli(args);
}

/* Our client against the independent server: the null contract holds over the wire, and
 * the accuracy log is the in-process null SUT's, byte for byte. */
TEST_TIMEOUT(net_null_sut_against_an_independent_server, 120)
{
    mini m;
    mini_start(&m, MS_GOOD, 0);
    int rc;
    null_run(m.port, "AccuracyOnly", "net", "", &rc);
    ASSERT_INT_EQ(rc, 0);
    null_run(0, "AccuracyOnly", "local", "", &rc);
    ASSERT_INT_EQ(rc, 0);
    char *a = ib_test_slurp("net/s/nullmodel/Offline/accuracy/mlperf_log_accuracy.json");
    char *b = ib_test_slurp("local/s/nullmodel/Offline/accuracy/mlperf_log_accuracy.json");
    ASSERT_TRUE(strlen(a) > 1000);
    ASSERT_STR_EQ(a, b);
    free(a);
    free(b);
    null_run(m.port, "PerformanceOnly", "net", "", &rc);
    ASSERT_INT_EQ(rc, 0);
    char *j = ib_test_slurp("net/s/nullmodel/Offline/run.json");
    ASSERT_STR_CONTAINS(j, "\"sut\": \"null-kserve\"");
    ASSERT_STR_CONTAINS(j, "null SUT over the network");
    free(j);
    ASSERT_TRUE(atomic_load(&m.infers) >= 16 + 17); /* 256 / 16 per run, plus warm-up */
    mini_stop(&m);
}

/* Every fault: INVALID (3) or a clear error, the endpoint and the reason named, on time. */
TEST_TIMEOUT(net_faults_end_the_run_invalid_naming_the_endpoint, 300)
{
    static const struct {
        int mode;
        const char *says;
    } faults[] = {
        {MS_500, "HTTP 500: injected failure"},
        {MS_MALFORMED, "malformed answer"},
        {MS_SHORT, "short"},
        {MS_SLOW, "imed out"},
        {MS_DIE, "ailed"},
        {MS_WRONG, "came back as"},
    };
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        mini m;
        mini_start(&m, faults[i].mode, 7); /* the warm-up (7 requests) goes well */
        char out[32];
        snprintf(out, sizeof out, "f%zu", i);
        double t0 = now_s();
        int rc;
        null_run(m.port, "PerformanceOnly", out, "", &rc);
        double dt = now_s() - t0;
        char *err = ib_test_slurp("cli.err");
        char *sum = NULL;
        char path[128];
        snprintf(path, sizeof path, "%s/s/nullmodel/Offline/performance/run_1/result.json", out);
        char ep[64];
        snprintf(ep, sizeof ep, "http://127.0.0.1:%d", m.port);
        printf("# fault %d: exit %d in %.1f s: %s", faults[i].mode, rc, dt, err);
        ASSERT_INT_EQ(rc, 3);
        ASSERT_STR_CONTAINS(err, ep);
        ASSERT_STR_CONTAINS(err, faults[i].says);
        sum = ib_test_slurp(path);
        ASSERT_STR_CONTAINS(sum, "\"failed_responses\": ");
        ASSERT_STR_CONTAINS(sum, "\"failed_reason\": \"endpoint ");
        ASSERT_TRUE(strstr(sum, "\"failed_responses\": 0") == NULL);
        ASSERT_TRUE(dt < 60); /* the request timeout is 0.5 s; nothing hangs */
        free(err);
        free(sum);
        mini_stop(&m);
    }
}

/* Before the test: an endpoint nobody listens on, and a server whose model differs. */
TEST_TIMEOUT(net_endpoint_checks_before_the_test, 60)
{
    int port;
    int fd = listen_any(&port);
    close(fd); /* a free port nobody listens on */
    char args[512];
    snprintf(args, sizeof args,
             "run --sut null --endpoint http://127.0.0.1:%d --scenario Offline --output-dir o -q",
             port);
    ASSERT_INT_EQ(cli(args), 1);
    char *err = ib_test_slurp("cli.err");
    ASSERT_STR_CONTAINS(err, "inferbench serve");
    char ep[64];
    snprintf(ep, sizeof ep, "127.0.0.1:%d", port);
    ASSERT_STR_CONTAINS(err, ep);
    free(err);

    mini m;
    mini_start(&m, MS_BAD_META, 0);
    snprintf(args, sizeof args,
             "run --sut null --endpoint http://127.0.0.1:%d --scenario Offline --output-dir o -q",
             m.port);
    ASSERT_INT_EQ(cli(args), 2);
    err = ib_test_slurp("cli.err");
    ASSERT_STR_CONTAINS(err, "input 'INDEX' is INT64 on the server, UINT32 here");
    free(err);
    snprintf(args, sizeof args,
             "run --sut null --endpoint http://127.0.0.1:%d --model-name other --scenario "
             "Offline --output-dir o -q",
             m.port);
    ASSERT_INT_EQ(cli(args), 2);
    err = ib_test_slurp("cli.err");
    ASSERT_STR_CONTAINS(err, "/v2/models/other: HTTP 404");
    free(err);
    mini_stop(&m);
    /* usage */
    ASSERT_INT_EQ(cli("run --sut kserve --output-dir o"), 2);
    ASSERT_INT_EQ(cli("run --benchmark resnet50 --concurrency 2 --output-dir o"), 2);
    ASSERT_INT_EQ(cli("run --sut kserve --endpoint localhost:8000 --output-dir o"), 2);
    err = ib_test_slurp("cli.err");
    ASSERT_STR_CONTAINS(err, "http://host:8000");
    free(err);
}

/* ---- the mini client against `serve` ---------------------------------------------------------- */

typedef struct raw_resp {
    int status;
    char head[2048];
    char *body;
    size_t len;
} raw_resp;

static int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ASSERT_INT_EQ(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void raw_send(int fd, const char *method, const char *path, const char *extra,
                     const void *body, size_t len)
{
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n%s\r\n", method, path,
                     len, extra ? extra : "");
    send_all(fd, head, (size_t)n);
    send_all(fd, body, len);
}

static void raw_read(int fd, raw_resp *r)
{
    size_t n = 0;
    memset(r, 0, sizeof *r);
    while (n + 1 < sizeof r->head) {
        ASSERT_TRUE(recv(fd, r->head + n, 1, 0) == 1);
        n++;
        if (n >= 4 && memcmp(r->head + n - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    r->head[n] = 0;
    ASSERT_INT_EQ(sscanf(r->head, "HTTP/1.1 %d", &r->status), 1);
    const char *cl = ci_strstr(r->head, "\r\nContent-Length:");
    ASSERT_NOT_NULL(cl);
    r->len = strtoul(cl + 17, NULL, 10);
    r->body = calloc(1, r->len + 1);
    ASSERT_INT_EQ(read_full(fd, r->body, r->len), 0);
}

static void raw(int port, const char *method, const char *path, const char *extra,
                const void *body, size_t len, raw_resp *r)
{
    int fd = raw_connect(port);
    raw_send(fd, method, path, extra, body, len);
    raw_read(fd, r);
    close(fd);
}

TEST_TIMEOUT(net_serve_answers_an_independent_client, 60)
{
    ib_serve_opts o;
    ib_serve_opts_defaults(&o);
    o.null_model = true;
    o.port = 0;
    ib_serve *s = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_serve_start(&o, &s, &err), &err);
    int port = ib_serve_port(s);
    raw_resp r;
    raw(port, "GET", "/v2/health/live", NULL, "", 0, &r);
    ASSERT_INT_EQ(r.status, 200);
    free(r.body);
    raw(port, "GET", "/v2", NULL, "", 0, &r);
    ASSERT_STR_CONTAINS(r.body, "binary_tensor_data");
    free(r.body);
    /* binary: JSON header by hand, three uint32 after it */
    const char *j = "{\"inputs\":[{\"name\":\"INDEX\",\"shape\":[3],\"datatype\":\"UINT32\","
                    "\"parameters\":{\"binary_data_size\":12}}],\"outputs\":[{\"name\":\"INDEX\","
                    "\"parameters\":{\"binary_data\":true}}]}";
    uint32_t idx[3] = {7, 0xdeadbeef, 42};
    char body[512], hdr[96];
    size_t jl = strlen(j);
    memcpy(body, j, jl);
    memcpy(body + jl, idx, 12);
    snprintf(hdr, sizeof hdr, "Inference-Header-Content-Length: %zu\r\n", jl);
    raw(port, "POST", "/v2/models/null/infer", hdr, body, jl + 12, &r);
    ASSERT_INT_EQ(r.status, 200);
    const char *il = ci_strstr(r.head, "\r\nInference-Header-Content-Length:");
    ASSERT_NOT_NULL(il);
    size_t rjl = strtoul(il + 34, NULL, 10);
    ASSERT_INT_EQ(r.len, rjl + 12);
    ASSERT_TRUE(memcmp(r.body + rjl, idx, 12) == 0);
    ASSERT_TRUE(strstr(r.body, "\"binary_data_size\":12") != NULL);
    free(r.body);
    /* JSON both ways, nested data allowed */
    const char *jj = "{\"id\":\"q1\",\"inputs\":[{\"name\":\"INDEX\",\"shape\":[2],\"datatype\":"
                     "\"UINT32\",\"data\":[[5],[6]]}]}";
    raw(port, "POST", "/v2/models/null/versions/1/infer", NULL, jj, strlen(jj), &r);
    ASSERT_INT_EQ(r.status, 200);
    ASSERT_STR_CONTAINS(r.body, "\"data\":[5,6]");
    ASSERT_STR_CONTAINS(r.body, "\"id\":\"q1\"");
    free(r.body);
    /* errors */
    raw(port, "POST", "/v2/models/other/infer", NULL, jj, strlen(jj), &r);
    ASSERT_INT_EQ(r.status, 404);
    ASSERT_STR_CONTAINS(r.body, "\"error\"");
    free(r.body);
    raw(port, "GET", "/v2/models/null/infer", NULL, "", 0, &r);
    ASSERT_INT_EQ(r.status, 405);
    free(r.body);
    raw(port, "POST", "/v2/models/null/infer", NULL, "{\"inputs\":", 10, &r);
    ASSERT_INT_EQ(r.status, 400);
    ASSERT_STR_CONTAINS(r.body, "malformed JSON");
    free(r.body);
    raw(port, "POST", "/v2/models/null/infer", "Inference-Header-Content-Length: 99999\r\n", jj,
        strlen(jj), &r);
    ASSERT_INT_EQ(r.status, 400);
    free(r.body);
    raw(port, "GET", "/metrics", NULL, "", 0, &r);
    ASSERT_STR_CONTAINS(r.body, "inferbench_requests_total{model=\"null\",code=\"200\"} 2");
    ASSERT_STR_CONTAINS(r.body, "inferbench_requests_total{model=\"null\",code=\"400\"} 2");
    ASSERT_STR_CONTAINS(r.body, "# TYPE inferbench_request_duration_seconds histogram");
    free(r.body);
    /* drain: not ready, infer refused */
    ib_serve_drain(s, 1000);
    raw(port, "GET", "/v2/health/ready", NULL, "", 0, &r);
    ASSERT_INT_EQ(r.status, 503);
    free(r.body);
    raw(port, "POST", "/v2/models/null/infer", NULL, jj, strlen(jj), &r);
    ASSERT_INT_EQ(r.status, 503);
    ASSERT_STR_CONTAINS(r.body, "draining");
    free(r.body);
    ib_serve_stop(s);
}

/* A model server checks requests against the model and keeps its limits. */
TEST_TIMEOUT(net_serve_checks_requests_and_limits, 120)
{
    char cache[4200];
    snprintf(cache, sizeof cache, "%s/cache", ib_test_tmpdir());
    ib_serve_opts o;
    ib_serve_opts_defaults(&o);
    o.h.bench = ib_benchmark_find("resnet50");
    o.h.cfg.tiny = true;
    o.h.threads = 1;
    o.h.cache_dir = cache;
    o.h.output_dir = ".";
    o.max_batch = 2;
    o.max_delay_us = 1500000; /* a lone request waits 1.5 s for company */
    o.max_queue = 1;
    o.max_body = 4 << 20;
    ib_serve *s = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_serve_start(&o, &s, &err), &err);
    int port = ib_serve_port(s);
    raw_resp r;
    raw(port, "GET", "/v2/models/resnet50", NULL, "", 0, &r);
    ASSERT_INT_EQ(r.status, 200);
    printf("# metadata: %s\n", r.body);
    ASSERT_STR_CONTAINS(r.body, "\"datatype\":\"FP32\"");
    ASSERT_STR_CONTAINS(r.body, "\"random_weights\":true");
    /* the input's name and per-sample shape from the metadata */
    char in_name[128] = "";
    const char *p = strstr(r.body, "\"inputs\":[{\"name\":\"");
    ASSERT_NOT_NULL(p);
    sscanf(p + 19, "%127[^\"]", in_name);
    int d[4] = {0};
    const char *sh = strstr(p, "\"shape\":[");
    ASSERT_INT_EQ(sscanf(sh, "\"shape\":[%d,%d,%d,%d]", &d[0], &d[1], &d[2], &d[3]), 4);
    free(r.body);
    size_t per = (size_t)d[1] * (size_t)d[2] * (size_t)d[3] * 4;
    char j[512];
    float *img = calloc(1, 3 * per);
    char *body = malloc(3 * per + 1024);
#define REQ(rows, dtype, name)                                                                     \
    snprintf(j, sizeof j,                                                                          \
             "{\"inputs\":[{\"name\":\"%s\",\"shape\":[%d,%d,%d,%d],\"datatype\":\"%s\","          \
             "\"parameters\":{\"binary_data_size\":%zu}}]}",                                       \
             name, rows, d[1], d[2], d[3], dtype, (size_t)(rows) * per)
    char hdr[96];
    /* wrong datatype, unknown input, too many rows */
    REQ(1, "INT32", in_name);
    size_t jl = strlen(j);
    memcpy(body, j, jl);
    memcpy(body + jl, img, per);
    snprintf(hdr, sizeof hdr, "Inference-Header-Content-Length: %zu\r\n", jl);
    raw(port, "POST", "/v2/models/resnet50/infer", hdr, body, jl + per, &r);
    ASSERT_INT_EQ(r.status, 400);
    ASSERT_STR_CONTAINS(r.body, "is INT32; the model takes FP32");
    free(r.body);
    REQ(1, "FP32", "nope");
    jl = strlen(j);
    memcpy(body, j, jl);
    snprintf(hdr, sizeof hdr, "Inference-Header-Content-Length: %zu\r\n", jl);
    raw(port, "POST", "/v2/models/resnet50/infer", hdr, body, jl + per, &r);
    ASSERT_INT_EQ(r.status, 400);
    ASSERT_STR_CONTAINS(r.body, "input 'nope' is not an input");
    free(r.body);
    REQ(3, "FP32", in_name);
    jl = strlen(j);
    memcpy(body, j, jl);
    snprintf(hdr, sizeof hdr, "Inference-Header-Content-Length: %zu\r\n", jl);
    raw(port, "POST", "/v2/models/resnet50/infer", hdr, body, jl + 3 * per, &r);
    ASSERT_INT_EQ(r.status, 400);
    ASSERT_STR_CONTAINS(r.body, "at most 2");
    free(r.body);
    /* over the body limit */
    char *big = calloc(1, (5 << 20) + 16);
    raw(port, "POST", "/v2/models/resnet50/infer", NULL, big, 5 << 20, &r);
    ASSERT_INT_EQ(r.status, 413);
    ASSERT_STR_CONTAINS(r.body, "--max-body-mb");
    free(r.body);
    free(big);
    /* the queue holds one request: a second one at the same time is 429, the first runs */
    REQ(1, "FP32", in_name);
    jl = strlen(j);
    memcpy(body, j, jl);
    memcpy(body + jl, img, per);
    snprintf(hdr, sizeof hdr, "Inference-Header-Content-Length: %zu\r\n", jl);
    int a = raw_connect(port), b = raw_connect(port);
    raw_send(a, "POST", "/v2/models/resnet50/infer", hdr, body, jl + per);
    sleep_ms(300); /* a is queued, waiting for company */
    raw_send(b, "POST", "/v2/models/resnet50/infer", hdr, body, jl + per);
    raw_resp rb, ra;
    raw_read(b, &rb);
    raw_read(a, &ra);
    ASSERT_INT_EQ(rb.status, 429);
    ASSERT_STR_CONTAINS(rb.body, "--max-queue");
    ASSERT_INT_EQ(ra.status, 200);
    ASSERT_STR_CONTAINS(ra.body, "\"model_name\":\"resnet50\"");
    free(ra.body);
    free(rb.body);
    close(a);
    close(b);
    ib_serve_stats st;
    ib_serve_get_stats(s, &st);
    ASSERT_INT_EQ(st.ok, 1);
    ASSERT_INT_EQ(st.batches, 1);
    ASSERT_INT_EQ(st.rows, 1);
    ib_serve_stop(s);
    free(img);
    free(body);
#undef REQ
}

/* ---- the real commands, two processes --------------------------------------------------------- */

/* `inferbench serve <args>` in another process; its port goes to port<tag>.txt, its
 * stderr to serve<tag>.err. */
static pid_t spawn_serve(const char *args, const char *tag)
{
    char cmd[1024], pf[64];
    snprintf(cmd, sizeof cmd,
             "exec %s/inferbench serve --port 0 --port-file port%s.txt --threads 1 %s 2> "
             "serve%s.err",
             ib_test_bin_dir(), tag, args, tag);
    snprintf(pf, sizeof pf, "port%s.txt", tag);
    unlink(pf);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int wait_port(pid_t pid, const char *tag)
{
    char pf[64];
    snprintf(pf, sizeof pf, "port%s.txt", tag);
    for (int i = 0; i < 600; i++) {
        char *t = NULL;
        size_t n;
        if (ib_file_read_all(pf, 0, &t, &n, NULL) == IB_OK && n > 1) {
            int port = atoi(t);
            ib_free(t);
            return port;
        }
        ib_free(t);
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return -1;
        sleep_ms(100);
    }
    return -1;
}

static int stop_serve(pid_t pid)
{
    kill(pid, SIGTERM);
    for (int i = 0; i < 300; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        sleep_ms(100);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static void accuracy_equal(const char *bench)
{
    char args[1024];
    pid_t pid = spawn_serve(bench, "");
    int port = wait_port(pid, "");
    if (port <= 0) {
        char *e = ib_test_slurp("serve.err");
        ib_test_fail(__FILE__, __LINE__, "serve did not start: %s", e);
    }
    const char *id = strstr(bench, "--benchmark ") + 12;
    snprintf(args, sizeof args,
             "run --sut kserve --endpoint http://127.0.0.1:%d %s --mode accuracy --system s "
             "--output-dir net -q",
             port, bench);
    ASSERT_INT_EQ(cli(args), 0);
    snprintf(args, sizeof args, "run %s --threads 1 --mode accuracy --system s --output-dir local -q",
             bench);
    ASSERT_INT_EQ(cli(args), 0);
    ASSERT_INT_EQ(stop_serve(pid), 0);
    char *err = ib_test_slurp("serve.err");
    ASSERT_STR_CONTAINS(err, "random weights");
    ASSERT_STR_CONTAINS(err, "draining");
    ASSERT_STR_CONTAINS(err, "stopped: ");
    free(err);
    char bid[32];
    sscanf(id, "%31s", bid);
    const char *files[] = {"mlperf_log_accuracy.json", "accuracy.txt"};
    for (int f = 0; f < 2; f++) {
        char pa[256], pb[256];
        snprintf(pa, sizeof pa, "net/s/%s/Offline/accuracy/%s", bid, files[f]);
        snprintf(pb, sizeof pb, "local/s/%s/Offline/accuracy/%s", bid, files[f]);
        char *a = ib_test_slurp(pa), *b = ib_test_slurp(pb);
        ASSERT_TRUE(strlen(a) > 20);
        ASSERT_STR_EQ(a, b);
        free(a);
        free(b);
    }
    char path[256];
    snprintf(path, sizeof path, "net/s/%s/Offline/run.json", bid);
    char *j = ib_test_slurp(path);
    ASSERT_STR_CONTAINS(j, "\"sut\": \"kserve\"");
    ASSERT_STR_CONTAINS(j, "KServe v2 over HTTP (binary tensors)");
    free(j);
}

TEST_TIMEOUT(net_resnet50_accuracy_equals_in_process, 300)
{
    accuracy_equal("--benchmark resnet50 --tiny");
}

TEST_TIMEOUT(net_bert_accuracy_equals_in_process, 300)
{
    accuracy_equal("--benchmark bert-99 --tiny");
}

/* Two `serve` processes: requests go to both (least outstanding), the run completes, JSON
 * tensors work too, and each server drains and says what it served. Whether 2,000 QPS stays
 * under the latency bound is the machine's load, not the feature: exit 3 (INVALID) passes too
 * (it failed now and then on the 2-core CI machine while other tests ran beside it). */
TEST_TIMEOUT(net_two_server_processes_share_the_load, 120)
{
    pid_t pid[2];
    int port[2];
    for (int i = 0; i < 2; i++) {
        pid[i] = spawn_serve("--null", i ? "1" : "0");
        port[i] = wait_port(pid[i], i ? "1" : "0");
        ASSERT_TRUE(port[i] > 0);
    }
    char args[1024];
    snprintf(args, sizeof args,
             "run --sut null --endpoint http://127.0.0.1:%d --endpoint http://127.0.0.1:%d "
             "--concurrency 4 --scenario Server --target-qps 2000 --min-duration-ms 1000 "
             "--batch 4 --json-tensors --system s --output-dir o -q",
             port[0], port[1]);
    int rc = cli(args);
    printf("# two servers at 2000 QPS: exit %d (%s)\n", rc, rc ? "INVALID" : "VALID");
    ASSERT_TRUE(rc == 0 || rc == 3);
    for (int i = 0; i < 2; i++) {
        ASSERT_INT_EQ(stop_serve(pid[i]), 0);
        char *e = ib_test_slurp(i ? "serve1.err" : "serve0.err");
        const char *st = strstr(e, "stopped: ");
        ASSERT_NOT_NULL(st);
        unsigned long long req = 0, ok = 0;
        ASSERT_INT_EQ(sscanf(st, "stopped: %llu infer requests (%llu ok", &req, &ok), 2);
        printf("# server %d: %llu requests\n", i, req);
        ASSERT_TRUE(req > 20);
        ASSERT_INT_EQ(ok, req);
        free(e);
    }
}
