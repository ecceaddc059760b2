/*
 * http_client.c - the asynchronous HTTP client over libcurl multi (http_client.h).
 *
 * Easy handles are kept in a free list and reused, so steady-state requests allocate
 * nothing beyond what libcurl does; the multi handle's connection cache keeps the
 * keep-alive connections. `Expect: 100-continue` is disabled (it would add a round trip
 * to every body over 1 KiB).
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/common.h"
#include "base/thread.h"
#include "base/time.h"
#include "net/http_client.h"

typedef struct xfer {
    struct ib_hc *c;
    CURL *easy;
    struct curl_slist *headers;
    ib_strbuf resp;
    size_t json_len;
    bool has_json_len;
    int endpoint;
    int64_t t0;
    ib_hc_done cb;
    void *user;
    char url[1024];
    char errbuf[CURL_ERROR_SIZE];
    struct xfer *next_free;
    struct xfer *next_all; /* every transfer the client made, for destroy */
} xfer;

struct ib_hc {
    ib_hc_opts o;
    CURLM *multi;
    char *base[IB_HC_MAX_ENDPOINTS];
    size_t outstanding[IB_HC_MAX_ENDPOINTS];
    size_t rr;
    size_t in_flight;
    xfer *free_list;
    xfer *all;
};

static bool g_curl_ok;

static void curl_init_once(void)
{
    g_curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

int ib_hc_create(const ib_hc_opts *o, ib_hc **out, ib_err *err)
{
    *out = NULL;
    static ib_once once = IB_ONCE_INIT;
    ib_once_run(&once, curl_init_once);
    if (!g_curl_ok) return ib_err_set(err, IB_EIO, "libcurl failed to initialise");
    if (o->n_endpoints == 0 || o->n_endpoints > IB_HC_MAX_ENDPOINTS)
        return ib_err_set(err, IB_EINVAL, "1 to %d endpoints are needed (--endpoint URL)",
                          IB_HC_MAX_ENDPOINTS);
    ib_hc *c = calloc(1, sizeof *c);
    if (!c) return ib_err_set(err, IB_ENOMEM, "out of memory");
    c->o = *o;
    for (size_t i = 0; i < o->n_endpoints; i++) {
        const char *e = o->endpoints[i];
        if (strncmp(e, "http://", 7) != 0 && strncmp(e, "https://", 8) != 0) {
            ib_hc_destroy(c);
            return ib_err_set(err, IB_EINVAL,
                              "--endpoint '%s': give a URL such as http://host:8000", e);
        }
        size_t n = strlen(e);
        while (n > 8 && e[n - 1] == '/')
            n--;
        c->base[i] = malloc(n + 1);
        if (!c->base[i]) {
            ib_hc_destroy(c);
            return ib_err_set(err, IB_ENOMEM, "out of memory");
        }
        memcpy(c->base[i], e, n);
        c->base[i][n] = 0;
    }
    c->o.endpoints = NULL;
    c->multi = curl_multi_init();
    if (!c->multi) {
        ib_hc_destroy(c);
        return ib_err_set(err, IB_ENOMEM, "curl_multi_init failed");
    }
    /* one connection per request in flight, per endpoint (no pipelining in HTTP/1.1) */
    curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, 1024L);
    *out = c;
    return IB_OK;
}

static void xfer_free(xfer *x)
{
    if (!x) return;
    if (x->easy) curl_easy_cleanup(x->easy);
    curl_slist_free_all(x->headers);
    ib_strbuf_deinit(&x->resp);
    free(x);
}

void ib_hc_destroy(ib_hc *c)
{
    if (!c) return;
    /* transfers still in flight are abandoned without callbacks */
    while (c->all) {
        xfer *x = c->all;
        c->all = x->next_all;
        if (c->multi && x->easy) curl_multi_remove_handle(c->multi, x->easy);
        xfer_free(x);
    }
    if (c->multi) curl_multi_cleanup(c->multi);
    for (size_t i = 0; i < IB_HC_MAX_ENDPOINTS; i++)
        free(c->base[i]);
    free(c);
}

size_t ib_hc_endpoint_count(const ib_hc *c)
{
    return c->o.n_endpoints;
}

const char *ib_hc_endpoint(const ib_hc *c, size_t i)
{
    return i < c->o.n_endpoints ? c->base[i] : "";
}

static size_t on_body(char *p, size_t size, size_t n, void *user)
{
    xfer *x = user;
    return ib_strbuf_append(&x->resp, p, size * n) ? 0 : size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *user)
{
    xfer *x = user;
    size_t len = size * n;
    static const char name[] = "Inference-Header-Content-Length:";
    if (len > sizeof name - 1 && strncasecmp(p, name, sizeof name - 1) == 0) {
        char v[32];
        size_t k = 0;
        for (size_t i = sizeof name - 1; i < len && k + 1 < sizeof v; i++)
            if (p[i] >= '0' && p[i] <= '9') v[k++] = p[i];
        v[k] = 0;
        x->json_len = k ? (size_t)strtoull(v, NULL, 10) : 0;
        x->has_json_len = k > 0;
    }
    return len;
}

static xfer *xfer_get(ib_hc *c)
{
    xfer *x = c->free_list;
    if (x) {
        c->free_list = x->next_free;
        curl_easy_reset(x->easy);
        curl_slist_free_all(x->headers);
        x->headers = NULL;
        ib_strbuf_reset(&x->resp);
    } else {
        x = calloc(1, sizeof *x);
        if (!x) return NULL;
        ib_strbuf_init(&x->resp);
        x->easy = curl_easy_init();
        if (!x->easy) {
            free(x);
            return NULL;
        }
        x->next_all = c->all;
        c->all = x;
    }
    x->c = c;
    x->json_len = 0;
    x->has_json_len = false;
    x->errbuf[0] = 0;
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    int64_t to = c->o.timeout_ms;
    int64_t cto =
        c->o.connect_timeout_ms ? c->o.connect_timeout_ms : (to > 0 && to < 10000 ? to : 10000);
    if (to > 0) curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)to);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)cto);
    return x;
}

static void xfer_put(ib_hc *c, xfer *x)
{
    x->next_free = c->free_list;
    c->free_list = x;
}

int ib_hc_get(ib_hc *c, size_t endpoint, const char *path, ib_strbuf *body, long *status,
              ib_err *err)
{
    *status = 0;
    if (endpoint >= c->o.n_endpoints)
        return ib_err_set(err, IB_EINVAL, "no endpoint %zu", endpoint);
    xfer *x = xfer_get(c);
    if (!x) return ib_err_set(err, IB_ENOMEM, "out of memory");
    snprintf(x->url, sizeof x->url, "%s%s", c->base[endpoint], path);
    curl_easy_setopt(x->easy, CURLOPT_URL, x->url);
    CURLcode cc = curl_easy_perform(x->easy);
    int rc = IB_OK;
    if (cc != CURLE_OK) {
        rc = ib_err_set(err, cc == CURLE_OPERATION_TIMEDOUT ? IB_ETIMEOUT : IB_EIO, "%s: %s",
                        x->url, x->errbuf[0] ? x->errbuf : curl_easy_strerror(cc));
    } else {
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, status);
        if (body && ib_strbuf_append(body, x->resp.data, x->resp.len))
            rc = ib_err_set(err, IB_ENOMEM, "out of memory");
    }
    xfer_put(c, x);
    return rc;
}

int ib_hc_post(ib_hc *c, const char *path, const void *body, size_t len, size_t json_len,
               ib_hc_done cb, void *user, ib_err *err)
{
    /* least outstanding requests; ties go round robin */
    size_t best = c->rr % c->o.n_endpoints;
    for (size_t k = 1; k < c->o.n_endpoints; k++) {
        size_t i = (c->rr + k) % c->o.n_endpoints;
        if (c->outstanding[i] < c->outstanding[best]) best = i;
    }
    c->rr++;
    xfer *x = xfer_get(c);
    if (!x) return ib_err_set(err, IB_ENOMEM, "out of memory");
    x->endpoint = (int)best;
    x->cb = cb;
    x->user = user;
    snprintf(x->url, sizeof x->url, "%s%s", c->base[best], path);
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_URL, x->url);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    x->headers = curl_slist_append(NULL, "Expect:");
    char h[96];
    if (json_len) {
        snprintf(h, sizeof h, "Inference-Header-Content-Length: %zu", json_len);
        x->headers = curl_slist_append(x->headers, h);
        x->headers = curl_slist_append(x->headers, "Content-Type: application/octet-stream");
    } else {
        x->headers = curl_slist_append(x->headers, "Content-Type: application/json");
    }
    if (!x->headers) {
        xfer_put(c, x);
        return ib_err_set(err, IB_ENOMEM, "out of memory");
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
    x->t0 = ib_time_ns();
    CURLMcode mc = curl_multi_add_handle(c->multi, e);
    if (mc != CURLM_OK) {
        xfer_put(c, x);
        return ib_err_set(err, IB_EIO, "curl_multi_add_handle: %s", curl_multi_strerror(mc));
    }
    c->outstanding[best]++;
    c->in_flight++;
    return IB_OK;
}

/* Run the callbacks of finished transfers; returns how many. */
static int drain(ib_hc *c)
{
    CURLMsg *m;
    int left, n = 0;
    while ((m = curl_multi_info_read(c->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE) continue;
        xfer *x = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        CURLcode cc = m->data.result;
        curl_multi_remove_handle(c->multi, m->easy_handle);
        c->outstanding[x->endpoint]--;
        c->in_flight--;
        ib_hc_result r;
        memset(&r, 0, sizeof r);
        r.endpoint = x->endpoint;
        r.elapsed_ns = ib_time_ns() - x->t0;
        if (cc != CURLE_OK) {
            r.error = x->errbuf[0] ? x->errbuf : curl_easy_strerror(cc);
        } else {
            curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &r.status);
            r.body = (const uint8_t *)x->resp.data;
            r.len = x->resp.len;
            r.json_len = x->json_len;
            r.has_json_len = x->has_json_len;
            if (x->resp.oom) {
                r.status = 0;
                r.error = "out of memory receiving the response";
            }
        }
        x->cb(x->user, &r);
        xfer_put(c, x);
        n++;
    }
    return n;
}

int ib_hc_poll(ib_hc *c, int timeout_ms, ib_err *err)
{
    int running = 0;
    CURLMcode mc = curl_multi_perform(c->multi, &running);
    if (mc == CURLM_OK && drain(c) == 0) {
        mc = curl_multi_poll(c->multi, NULL, 0, timeout_ms, NULL);
        if (mc == CURLM_OK) mc = curl_multi_perform(c->multi, &running);
        if (mc == CURLM_OK) drain(c);
    }
    if (mc != CURLM_OK) return ib_err_set(err, IB_EIO, "libcurl: %s", curl_multi_strerror(mc));
    return IB_OK;
}

void ib_hc_wakeup(ib_hc *c)
{
    curl_multi_wakeup(c->multi);
}

size_t ib_hc_outstanding(const ib_hc *c)
{
    return c->in_flight;
}
