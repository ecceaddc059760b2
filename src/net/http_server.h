/*
 * http_server.h - a small HTTP/1.1 server over libmicrohttpd (Debian libmicrohttpd-dev):
 * one handler called with the whole request (body gathered up to a limit), one thread per
 * connection so the handler may block (the inference server waits for its batch there),
 * keep-alive, and an address and port of the caller's choice (port 0: the kernel picks;
 * ib_http_server_port tells which).
 *
 * A body over max_body gets 413 without the handler seeing it; more than max_connections
 * open connections are refused by the library. Nothing here knows the KServe protocol.
 */
#ifndef IB_NET_HTTP_SERVER_H
#define IB_NET_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "inferbench/status.h"

typedef struct ib_http_server ib_http_server;

typedef struct ib_http_request {
    const char *method; /* "GET", "POST", ... */
    const char *url;    /* path, without the query */
    const uint8_t *body;
    size_t body_len;
    void *conn; /* for ib_http_request_header */
} ib_http_request;

/* A request header's value (NULL when absent). */
const char *ib_http_request_header(const ib_http_request *r, const char *name);

typedef struct ib_http_response {
    int status;               /* 200 unless the handler says otherwise */
    const char *content_type; /* static string; NULL = application/json */
    ib_strbuf body;           /* the handler appends; the server frees */
    char header_name[64];     /* one extra header (e.g. Inference-Header-Content-Length) */
    char header_value[64];
} ib_http_response;

/* Called from the connection's thread, concurrently for different connections. */
typedef void (*ib_http_handler)(void *user, const ib_http_request *req, ib_http_response *resp);

typedef struct ib_http_server_opts {
    const char *host;         /* address to bind (NULL or "" = every address) */
    int port;                 /* 0 = any free port */
    size_t max_body;          /* bytes (0 = 64 MiB) */
    unsigned max_connections; /* 0 = 256 */
    unsigned idle_timeout_s;  /* close idle keep-alive connections after this (0 = 120) */
    ib_http_handler handler;
    void *user;
} ib_http_server_opts;

/* Start listening (errors name the address and the reason: in use, permission...). */
int ib_http_server_start(const ib_http_server_opts *o, ib_http_server **out, ib_err *err);
/* The port it listens on. */
int ib_http_server_port(const ib_http_server *s);
/* Stop accepting new connections (the listening socket closes; open ones stay served). */
void ib_http_server_quiesce(ib_http_server *s);
/* Close everything and wait for the connection threads (NULL allowed). */
void ib_http_server_stop(ib_http_server *s);

#endif
