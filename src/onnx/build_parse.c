/*
 * build_parse.c - the two small string languages of the graph builder:
 * shapes ("batch,3,224,224": numbers, symbolic names, "?") and attributes
 * ("kernel_shape=[3,3] epsilon=1e-5 mode='nearest'"), see build.h. Errors
 * say which character of which string is wrong.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/build_impl.h"

static bool ident_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.';
}

int ib_build_parse_shape(const char *s, ib_tensor_desc *d, const char **params, ib_arena *a,
                         char *msg, size_t msg_size)
{
    const char *p = s ? s : "";
    d->ndim = 0;
    for (int i = 0; i < IB_MAX_DIMS; i++)
        params[i] = NULL;
    while (*p == ' ')
        p++;
    if (!*p) return IB_OK; /* scalar */
    for (;;) {
        while (*p == ' ')
            p++;
        if (d->ndim == IB_MAX_DIMS) {
            snprintf(msg, msg_size, "shape '%s' has more than %d dims", s, IB_MAX_DIMS);
            return IB_EINVAL;
        }
        int i = d->ndim++;
        if (isdigit((unsigned char)*p)) {
            int64_t v = 0;
            while (isdigit((unsigned char)*p)) {
                if (v > (INT64_MAX - 9) / 10) {
                    snprintf(msg, msg_size, "shape '%s': dim %d is too large", s, i);
                    return IB_EINVAL;
                }
                v = v * 10 + (*p++ - '0');
            }
            d->dims[i] = v;
        } else if (*p == '?') {
            d->dims[i] = IB_DIM_DYNAMIC;
            p++;
        } else if (ident_start(*p)) {
            const char *st = p;
            while (ident_char(*p))
                p++;
            d->dims[i] = IB_DIM_DYNAMIC;
            if (!(params[i] = ib_arena_strndup(a, st, (size_t)(p - st)))) {
                snprintf(msg, msg_size, "out of memory");
                return IB_ENOMEM;
            }
        } else {
            snprintf(msg, msg_size,
                     "shape '%s': unexpected '%c' at column %d (use numbers, names "
                     "or ?, separated by commas)",
                     s, *p ? *p : ' ', (int)(p - s) + 1);
            return IB_EINVAL;
        }
        while (*p == ' ')
            p++;
        if (!*p) return IB_OK;
        if (*p != ',') {
            snprintf(msg, msg_size, "shape '%s': expected ',' at column %d", s, (int)(p - s) + 1);
            return IB_EINVAL;
        }
        p++;
    }
}

/* ---- attributes ----------------------------------------------------------------- */

enum scalar_kind { SK_INT, SK_FLOAT, SK_STRING };

typedef struct scalar {
    enum scalar_kind kind;
    int64_t i;
    double f;
    char *s;
    size_t s_len;
} scalar;

typedef struct parser {
    const char *src, *p;
    ib_arena *a;
    char *msg;
    size_t msg_size;
} parser;

static int perr(parser *P, const char *what)
{
    snprintf(P->msg, P->msg_size, "attributes '%s': %s at column %d", P->src, what,
             (int)(P->p - P->src) + 1);
    return IB_EINVAL;
}

static void skip_ws(parser *P)
{
    while (*P->p == ' ' || *P->p == '\t' || *P->p == '\n')
        P->p++;
}

static int parse_scalar(parser *P, scalar *out)
{
    memset(out, 0, sizeof *out);
    char q = *P->p;
    if (q == '\'' || q == '"') {
        const char *st = ++P->p;
        while (*P->p && *P->p != q)
            P->p++;
        if (!*P->p) return perr(P, "unterminated string");
        out->kind = SK_STRING;
        out->s_len = (size_t)(P->p - st);
        if (!(out->s = ib_arena_strndup(P->a, st, out->s_len))) return IB_ENOMEM;
        P->p++;
        return IB_OK;
    }
    const char *st = P->p;
    while (*P->p && *P->p != ' ' && *P->p != ',' && *P->p != ']' && *P->p != '\t' && *P->p != '\n')
        P->p++;
    size_t n = (size_t)(P->p - st);
    char tok[64];
    if (n == 0 || n >= sizeof tok) {
        P->p = st;
        return perr(P, n ? "number too long" : "missing value");
    }
    memcpy(tok, st, n);
    tok[n] = '\0';
    char *end;
    errno = 0;
    if (!strpbrk(tok, ".eEnNiI")) {
        long long v = strtoll(tok, &end, 10);
        if (*end || errno) {
            P->p = st;
            return perr(P, "bad integer");
        }
        out->kind = SK_INT;
        out->i = v;
        return IB_OK;
    }
    double v = strtod(tok, &end);
    if (*end || end == tok) {
        P->p = st;
        return perr(P, "bad number");
    }
    out->kind = SK_FLOAT;
    out->f = v;
    return IB_OK;
}

static int parse_list(parser *P, ib_attr *at)
{
    IB_VEC(scalar) items = {0};
    int rc = IB_OK;
    P->p++; /* '[' */
    skip_ws(P);
    while (*P->p != ']') {
        scalar s;
        if ((rc = parse_scalar(P, &s))) goto done;
        if (IB_VEC_PUSH(&items, s)) {
            rc = IB_ENOMEM;
            goto done;
        }
        skip_ws(P);
        if (*P->p == ',') {
            P->p++;
            skip_ws(P);
        } else if (*P->p != ']') {
            rc = perr(P, "expected ',' or ']'");
            goto done;
        }
    }
    P->p++;
    bool any_float = false, any_string = false, any_num = false;
    for (size_t i = 0; i < items.len; i++) {
        any_float |= items.data[i].kind == SK_FLOAT;
        any_string |= items.data[i].kind == SK_STRING;
        any_num |= items.data[i].kind != SK_STRING;
    }
    if (any_string && any_num) {
        rc = perr(P, "a list mixes strings and numbers");
        goto done;
    }
    size_t n = items.len;
    at->count = n;
    if (any_string) {
        char **ss = ib_arena_alloc(P->a, (n ? n : 1) * sizeof *ss);
        if (!ss) {
            rc = IB_ENOMEM;
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            ss[i] = items.data[i].s;
        at->type = IB_ATTR_STRINGS;
        at->strings = (const char *const *)ss;
    } else if (any_float) {
        float *fs = ib_arena_alloc(P->a, (n ? n : 1) * sizeof *fs);
        if (!fs) {
            rc = IB_ENOMEM;
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            fs[i] =
                (float)(items.data[i].kind == SK_FLOAT ? items.data[i].f : (double)items.data[i].i);
        at->type = IB_ATTR_FLOATS;
        at->floats = fs;
    } else {
        int64_t *is = ib_arena_alloc(P->a, (n ? n : 1) * sizeof *is);
        if (!is) {
            rc = IB_ENOMEM;
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            is[i] = items.data[i].i;
        at->type = IB_ATTR_INTS;
        at->ints = is;
    }
done:
    IB_VEC_FREE(&items);
    return rc;
}

int ib_build_parse_attrs(const char *s, ib_arena *a, ib_attr **out, uint32_t *n_out, char *msg,
                         size_t msg_size)
{
    parser P = {s ? s : "", s ? s : "", a, msg, msg_size};
    IB_VEC(ib_attr) attrs = {0};
    int rc = IB_OK;
    *out = NULL;
    *n_out = 0;
    for (;;) {
        skip_ws(&P);
        if (!*P.p) break;
        if (!ident_start(*P.p)) {
            rc = perr(&P, "expected an attribute name");
            goto fail;
        }
        const char *st = P.p;
        while (ident_char(*P.p))
            P.p++;
        ib_attr at;
        memset(&at, 0, sizeof at);
        if (!(at.name = ib_arena_strndup(a, st, (size_t)(P.p - st)))) {
            rc = IB_ENOMEM;
            goto fail;
        }
        for (size_t i = 0; i < attrs.len; i++)
            if (strcmp(attrs.data[i].name, at.name) == 0) {
                rc = perr(&P, "attribute given twice");
                goto fail;
            }
        skip_ws(&P);
        if (*P.p != '=') {
            rc = perr(&P, "expected '='");
            goto fail;
        }
        P.p++;
        skip_ws(&P);
        if (*P.p == '[') {
            rc = parse_list(&P, &at);
        } else {
            scalar sc;
            if ((rc = parse_scalar(&P, &sc)) == IB_OK) {
                if (sc.kind == SK_INT) {
                    at.type = IB_ATTR_INT;
                    at.i = sc.i;
                } else if (sc.kind == SK_FLOAT) {
                    at.type = IB_ATTR_FLOAT;
                    at.f = (float)sc.f;
                } else {
                    at.type = IB_ATTR_STRING;
                    at.s = sc.s;
                    at.s_len = sc.s_len;
                }
            }
        }
        if (rc) goto fail;
        if (IB_VEC_PUSH(&attrs, at)) {
            rc = IB_ENOMEM;
            goto fail;
        }
    }
    if (attrs.len) {
        *out = ib_arena_memdup(a, attrs.data, attrs.len * sizeof *attrs.data);
        if (!*out) {
            rc = IB_ENOMEM;
            goto fail;
        }
    }
    *n_out = (uint32_t)attrs.len;
    IB_VEC_FREE(&attrs);
    return IB_OK;
fail:
    if (rc == IB_ENOMEM) snprintf(msg, msg_size, "out of memory");
    IB_VEC_FREE(&attrs);
    return rc;
}
