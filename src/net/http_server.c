/*
 * http_server.c - the HTTP server over libmicrohttpd (http_server.h).
 *
 * libmicrohttpd calls the access handler several times per request: first with the
 * headers (a connection context is made), then with pieces of the body, then once with
 * nothing left, when the handler runs and a response is queued. The contexts are freed by
 * the completion notice.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/common.h"
#include "net/http_server.h"

struct ib_http_server {
    ib_http_server_opts o;
    struct MHD_Daemon *d;
    int port;
};

typedef struct conn_ctx {
    ib_strbuf body;
    bool too_big;
} conn_ctx;

const char *ib_http_request_header(const ib_http_request *r, const char *name)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)r->conn, MHD_HEADER_KIND, name);
}

static enum MHD_Result send_response(struct MHD_Connection *c, ib_http_response *r)
{
    size_t len = r->body.len;
    static char empty[1];
    char *data = ib_strbuf_detach(&r->body);
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        len, data ? data : empty, data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            r->content_type ? r->content_type : "application/json");
    if (r->header_name[0]) MHD_add_response_header(resp, r->header_name, r->header_value);
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static enum MHD_Result simple(struct MHD_Connection *c, int status, const char *json)
{
    ib_http_response r;
    memset(&r, 0, sizeof r);
    r.status = status;
    ib_strbuf_init(&r.body);
    ib_strbuf_puts(&r.body, json);
    return send_response(c, &r);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls)
{
    IB_UNUSED(version);
    ib_http_server *s = cls;
    conn_ctx *ctx = *con_cls;
    if (!ctx) {
        ctx = calloc(1, sizeof *ctx);
        if (!ctx) return MHD_NO;
        ib_strbuf_init(&ctx->body);
        *con_cls = ctx;
        const char *cl =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->o.max_body) {
            ctx->too_big = true;
            char msg[160];
            snprintf(msg, sizeof msg,
                     "{\"error\":\"request body of %s bytes is over the server's limit of %zu "
                     "(serve --max-body-mb)\"}",
                     cl, s->o.max_body);
            return simple(c, 413, msg);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!ctx->too_big && ctx->body.len + *upload_size > s->o.max_body) ctx->too_big = true;
        if (!ctx->too_big && ib_strbuf_append(&ctx->body, upload, *upload_size))
            ctx->too_big = true;
        *upload_size = 0;
        return MHD_YES;
    }
    if (ctx->too_big) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "{\"error\":\"request body over the server's limit of %zu bytes "
                 "(serve --max-body-mb)\"}",
                 s->o.max_body);
        return simple(c, 413, msg);
    }
    ib_http_request req = {method, url, (const uint8_t *)ctx->body.data, ctx->body.len, c};
    ib_http_response resp;
    memset(&resp, 0, sizeof resp);
    resp.status = 200;
    ib_strbuf_init(&resp.body);
    s->o.handler(s->o.user, &req, &resp);
    if (resp.body.oom) {
        ib_strbuf_deinit(&resp.body);
        return simple(c, 500, "{\"error\":\"the server ran out of memory answering\"}");
    }
    return send_response(c, &resp);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    IB_UNUSED(cls);
    IB_UNUSED(c);
    IB_UNUSED(toe);
    conn_ctx *ctx = *con_cls;
    if (ctx) {
        ib_strbuf_deinit(&ctx->body);
        free(ctx);
        *con_cls = NULL;
    }
}

int ib_http_server_start(const ib_http_server_opts *o, ib_http_server **out, ib_err *err)
{
    *out = NULL;
    if (!o->handler || o->port < 0 || o->port > 65535)
        return ib_err_set(err, IB_EINVAL, "http server: a handler and a port 0-65535 are needed");
    ib_http_server *s = calloc(1, sizeof *s);
    if (!s) return ib_err_set(err, IB_ENOMEM, "out of memory");
    s->o = *o;
    if (!s->o.max_body) s->o.max_body = (size_t)64 << 20;
    if (!s->o.max_connections) s->o.max_connections = 256;
    if (!s->o.idle_timeout_s) s->o.idle_timeout_s = 120;
    const char *host = o->host && o->host[0] ? o->host : "0.0.0.0";
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char port[16];
    snprintf(port, sizeof port, "%d", o->port);
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai != 0) {
        free(s);
        return ib_err_set(err, IB_EINVAL, "--host %s: %s", host, gai_strerror(gai));
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
                     (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    s->d = MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL, on_access, s,
                            MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED,
                            on_completed, s, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)s->o.max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)s->o.idle_timeout_s, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!s->d) {
        free(s);
        return ib_err_set(err, IB_EIO,
                          "cannot listen on %s port %d (in use by another process, or a port "
                          "under 1024 without the right)",
                          host, o->port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : o->port;
    *out = s;
    return IB_OK;
}

int ib_http_server_port(const ib_http_server *s)
{
    return s->port;
}

void ib_http_server_quiesce(ib_http_server *s)
{
    if (s && s->d) {
        MHD_socket fd = MHD_quiesce_daemon(s->d);
        if (fd != MHD_INVALID_SOCKET) close(fd);
    }
}

void ib_http_server_stop(ib_http_server *s)
{
    if (!s) return;
    if (s->d) MHD_stop_daemon(s->d);
    free(s);
}
