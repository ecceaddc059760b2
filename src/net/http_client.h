/*
 * http_client.h - asynchronous HTTP requests to a set of endpoints over libcurl's multi
 * interface (Debian libcurl4-openssl-dev): any number of requests in flight on one thread,
 * keep-alive connections pooled per endpoint by libcurl, each POST sent to the endpoint
 * with the fewest requests outstanding (ties: round robin).
 *
 * Threading: one thread owns the client and makes every call except ib_hc_wakeup, which
 * any thread may call to end an ib_hc_poll early (new work arrived). Callbacks run inside
 * ib_hc_poll on that thread.
 *
 * A request ends exactly once, through its callback: with the HTTP status and body, or
 * with a transport error (refused, timed out, reset) in `error` and status 0.
 */
#ifndef IB_NET_HTTP_CLIENT_H
#define IB_NET_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "inferbench/status.h"

#define IB_HC_MAX_ENDPOINTS 64

typedef struct ib_hc ib_hc;

typedef struct ib_hc_opts {
    const char *const *endpoints; /* base URLs: "http://host:8000" (a trailing / is dropped) */
    size_t n_endpoints;
    int64_t timeout_ms;         /* whole request (0 = none) */
    int64_t connect_timeout_ms; /* 0 = min(timeout, 10 s) */
} ib_hc_opts;

typedef struct ib_hc_result {
    int endpoint;        /* index into the endpoints */
    long status;         /* HTTP status, 0 when the transport failed */
    const char *error;   /* transport failure in words ("Connection refused"), else NULL */
    const uint8_t *body; /* valid during the callback */
    size_t len;
    size_t json_len; /* Inference-Header-Content-Length, 0 when absent */
    bool has_json_len;
    int64_t elapsed_ns;
} ib_hc_result;

typedef void (*ib_hc_done)(void *user, const ib_hc_result *r);

int ib_hc_create(const ib_hc_opts *o, ib_hc **out, ib_err *err);
void ib_hc_destroy(ib_hc *c);

size_t ib_hc_endpoint_count(const ib_hc *c);
const char *ib_hc_endpoint(const ib_hc *c, size_t i);

/* Blocking GET of base + path on one endpoint (before a test: health, metadata). *status
 * is the HTTP status; a transport failure is IB_EIO naming the endpoint. */
int ib_hc_get(ib_hc *c, size_t endpoint, const char *path, ib_strbuf *body, long *status,
              ib_err *err);

/*
 * Queue a POST of body (len bytes, not copied: keep it until the callback) to path on the
 * least-loaded endpoint; json_len > 0 adds Inference-Header-Content-Length (binary KServe
 * body). The callback runs later inside ib_hc_poll.
 */
int ib_hc_post(ib_hc *c, const char *path, const void *body, size_t len, size_t json_len,
               ib_hc_done cb, void *user, ib_err *err);

/* Drive the transfers for up to timeout_ms (returns earlier when something finished or
 * ib_hc_wakeup was called) and run the callbacks of finished requests. */
int ib_hc_poll(ib_hc *c, int timeout_ms, ib_err *err);
/* Make a concurrent or next ib_hc_poll return at once (any thread). */
void ib_hc_wakeup(ib_hc *c);
/* Requests in flight. */
size_t ib_hc_outstanding(const ib_hc *c);

#endif
