/*
 * test_kserve.c - the KServe v2 message codec (src/net/kserve.c): round trips in binary and
 * JSON for every datatype, the forms the protocol allows (nested data, no id, outputs
 * asked by name), and every malformed message a server or client may send.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/kserve.h"
#include "test.h"

static ib_ks_msg two_tensors(float *f, int64_t *i)
{
    ib_ks_msg m;
    memset(&m, 0, sizeof m);
    snprintf(m.id, sizeof m.id, "req-7");
    m.n_tensors = 2;
    snprintf(m.t[0].name, sizeof m.t[0].name, "input_tensor:0");
    m.t[0].desc = (ib_tensor_desc){IB_DTYPE_FLOAT32, 2, {2, 3}};
    m.t[0].data = f;
    m.t[0].nbytes = 6 * sizeof *f;
    snprintf(m.t[1].name, sizeof m.t[1].name, "ids \"quoted\"");
    m.t[1].desc = (ib_tensor_desc){IB_DTYPE_INT64, 1, {2}};
    m.t[1].data = i;
    m.t[1].nbytes = 2 * sizeof *i;
    m.n_outputs = 1;
    snprintf(m.outputs[0], sizeof m.outputs[0], "ArgMax:0");
    return m;
}

static void check_same(const ib_ks_msg *a, const ib_ks_msg *b)
{
    ASSERT_INT_EQ(b->n_tensors, a->n_tensors);
    for (size_t k = 0; k < a->n_tensors; k++) {
        ASSERT_STR_EQ(b->t[k].name, a->t[k].name);
        ASSERT_INT_EQ(b->t[k].desc.dtype, a->t[k].desc.dtype);
        ASSERT_INT_EQ(b->t[k].desc.ndim, a->t[k].desc.ndim);
        for (int d = 0; d < a->t[k].desc.ndim; d++)
            ASSERT_INT_EQ(b->t[k].desc.dims[d], a->t[k].desc.dims[d]);
        ASSERT_INT_EQ(b->t[k].nbytes, a->t[k].nbytes);
        ASSERT_TRUE(memcmp(b->t[k].data, a->t[k].data, a->t[k].nbytes) == 0);
    }
}

TEST(kserve_request_round_trip_binary_and_json)
{
    float f[6] = {0.1f, -2.5f, 3.4028235e38f, 1e-45f, 0.0f, -0.0f};
    int64_t i[2] = {INT64_MIN, 9007199254740993LL};
    ib_ks_msg m = two_tensors(f, i);
    for (int binary = 0; binary < 2; binary++) {
        m.binary_outputs = binary;
        ib_strbuf sb;
        ib_strbuf_init(&sb);
        size_t jl = 99;
        ib_err err;
        ib_err_clear(&err);
        ASSERT_OK_ERR(ib_ks_encode(&m, true, binary, &sb, &jl, &err), &err);
        if (binary) {
            ASSERT_INT_EQ(jl, sb.len - 6 * 4 - 2 * 8);
            ASSERT_TRUE(strstr(sb.data, "\"binary_data_size\":24") != NULL);
        } else {
            ASSERT_INT_EQ(jl, 0);
            ASSERT_TRUE(strstr(sb.data, "\"data\":[") != NULL);
        }
        ib_ks_msg back;
        ASSERT_OK_ERR(ib_ks_decode((const uint8_t *)sb.data, sb.len, jl, true, &back, &err), &err);
        ASSERT_STR_EQ(back.id, "req-7");
        check_same(&m, &back);
        ASSERT_INT_EQ(back.n_outputs, 1);
        ASSERT_STR_EQ(back.outputs[0], "ArgMax:0");
        ASSERT_INT_EQ(back.binary_outputs, binary);
        ASSERT_TRUE(ib_ks_find(&back, "ids \"quoted\"") == &back.t[1]);
        ASSERT_TRUE(ib_ks_find(&back, "nope") == NULL);
        ib_ks_msg_free(&back);
        ib_strbuf_deinit(&sb);
    }
}

TEST(kserve_every_datatype_round_trips)
{
    const enum ib_dtype types[] = {IB_DTYPE_BOOL,   IB_DTYPE_UINT8,   IB_DTYPE_INT8,
                                   IB_DTYPE_UINT16, IB_DTYPE_INT16,   IB_DTYPE_UINT32,
                                   IB_DTYPE_INT32,  IB_DTYPE_UINT64,  IB_DTYPE_INT64,
                                   IB_DTYPE_FLOAT32, IB_DTYPE_FLOAT64, IB_DTYPE_FLOAT16,
                                   IB_DTYPE_BFLOAT16};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        enum ib_dtype t = types[k];
        ASSERT_INT_EQ(ib_ks_dtype(ib_ks_datatype(t)), t);
        uint8_t data[5 * 8];
        for (size_t b = 0; b < sizeof data; b++)
            data[b] = (uint8_t)(b * 37 + k); /* bit patterns, incl. large and negative values */
        if (t == IB_DTYPE_BOOL)
            for (size_t b = 0; b < 5; b++)
                data[b] &= 1;
        if (t == IB_DTYPE_UINT64) /* JSON carries UINT64 up to INT64_MAX (see below) */
            for (size_t e = 0; e < 5; e++)
                data[8 * e + 7] &= 0x7f;
        if (t == IB_DTYPE_FLOAT32 || t == IB_DTYPE_FLOAT64) {
            for (size_t e = 0; e < 5; e++) { /* finite values only (JSON) */
                if (t == IB_DTYPE_FLOAT32) {
                    float v = (float)e * 1.1f - 2.0f;
                    memcpy(data + 4 * e, &v, 4);
                } else {
                    double v = (double)e / 3.0 - 1.0;
                    memcpy(data + 8 * e, &v, 8);
                }
            }
        }
        ib_ks_msg m;
        memset(&m, 0, sizeof m);
        m.n_tensors = 1;
        snprintf(m.t[0].name, sizeof m.t[0].name, "x");
        m.t[0].desc = (ib_tensor_desc){t, 1, {5}};
        m.t[0].data = data;
        m.t[0].nbytes = 5 * ib_dtype_size(t);
        snprintf(m.model_name, sizeof m.model_name, "m");
        bool json_ok = t != IB_DTYPE_FLOAT16 && t != IB_DTYPE_BFLOAT16;
        for (int binary = 0; binary < 2; binary++) {
            ib_strbuf sb;
            ib_strbuf_init(&sb);
            size_t jl;
            ib_err err;
            ib_err_clear(&err);
            int rc = ib_ks_encode(&m, false, binary, &sb, &jl, &err);
            if (!binary && !json_ok) {
                ASSERT_INT_EQ(rc, IB_EUNSUPPORTED);
                ASSERT_TRUE(strstr(err.msg, "binary") != NULL);
                ib_strbuf_deinit(&sb);
                continue;
            }
            ASSERT_OK_ERR(rc, &err);
            ib_ks_msg back;
            ASSERT_OK_ERR(ib_ks_decode((const uint8_t *)sb.data, sb.len, jl, false, &back, &err),
                          &err);
            ASSERT_STR_EQ(back.model_name, "m");
            check_same(&m, &back);
            ib_ks_msg_free(&back);
            ib_strbuf_deinit(&sb);
        }
    }
}

/* Nested "data" (the protocol allows it), numbers where the shape says so. */
TEST(kserve_decode_nested_json_and_defaults)
{
    const char *body = "{\"inputs\":[{\"name\":\"a\",\"shape\":[2,2],\"datatype\":\"INT32\","
                       "\"data\":[[1,2],[3,-4]]}]}";
    ib_ks_msg m;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_ks_decode((const uint8_t *)body, strlen(body), 0, true, &m, &err), &err);
    ASSERT_INT_EQ(m.n_tensors, 1);
    ASSERT_STR_EQ(m.id, "");
    ASSERT_INT_EQ(m.n_outputs, 0);
    ASSERT_FALSE(m.binary_outputs);
    const int32_t *v = m.t[0].data;
    ASSERT_INT_EQ(v[0], 1);
    ASSERT_INT_EQ(v[3], -4);
    ib_ks_msg_free(&m);
}

/* A server's error body surfaces as the decode error and through ib_ks_error_message. */
TEST(kserve_error_bodies)
{
    const char *e = "{\"error\":\"input 'x' is missing\"}";
    char msg[128];
    ib_ks_error_message((const uint8_t *)e, strlen(e), msg, sizeof msg);
    ASSERT_STR_EQ(msg, "input 'x' is missing");
    ib_ks_error_message((const uint8_t *)"<html>\n502", 10, msg, sizeof msg);
    ASSERT_STR_EQ(msg, "<html>.502");
    ib_ks_error_message(NULL, 0, msg, sizeof msg);
    ASSERT_STR_EQ(msg, "(empty body)");
    ib_ks_msg m;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_INT_EQ(ib_ks_decode((const uint8_t *)e, strlen(e), 0, false, &m, &err), IB_EBACKEND);
    ASSERT_TRUE(strstr(err.msg, "input 'x' is missing") != NULL);
}

TEST(kserve_bad_messages_are_named)
{
    static const struct {
        const char *body;
        size_t json_len; /* 0: all JSON; SIZE_MAX: the body length minus the tail */
        size_t tail;     /* binary bytes after the JSON */
        int rc;
        const char *says;
    } cases[] = {
        {"", 0, 0, IB_EFORMAT, "malformed JSON"},
        {"{\"inputs\":[{\"name\":\"a\"", 0, 0, IB_EFORMAT, "malformed JSON"},
        {"[1,2]", 0, 0, IB_EFORMAT, "not an object"},
        {"{}", 0, 0, IB_EFORMAT, "no \"inputs\""},
        {"{\"inputs\":{}}", 0, 0, IB_EFORMAT, "no \"inputs\""},
        {"{\"inputs\":[7]}", 0, 0, IB_EFORMAT, "inputs[0] is not an object"},
        {"{\"inputs\":[{\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}", 0, 0, IB_EFORMAT,
         "\"name\" missing"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1],\"data\":[1]}]}", 0, 0, IB_EFORMAT,
         "\"datatype\" missing"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1],\"datatype\":\"FP8\",\"data\":[1]}]}", 0, 0,
         IB_EUNSUPPORTED, "FP8"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[-1],\"datatype\":\"FP32\",\"data\":[1]}]}", 0, 0,
         IB_EFORMAT, "shape[0]"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1.5],\"datatype\":\"FP32\",\"data\":[1]}]}", 0, 0,
         IB_EFORMAT, "shape[0]"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1,1,1,1,1,1,1,1,1],\"datatype\":\"FP32\"}]}", 0, 0,
         IB_EFORMAT, "over 8 dims"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1099511627776,1099511627776],\"datatype\":"
         "\"FP32\",\"data\":[]}]}",
         0, 0, IB_EFORMAT, "too large"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[3],\"datatype\":\"FP32\",\"data\":[1,2]}]}", 0, 0,
         IB_EFORMAT, "2 values in \"data\" for shape of 3"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[2],\"datatype\":\"INT8\",\"data\":[1,300]}]}", 0,
         0, IB_EFORMAT, "not INT8"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1],\"datatype\":\"BOOL\",\"data\":[1]}]}", 0, 0,
         IB_EFORMAT, "not BOOL"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1],\"datatype\":\"FP16\",\"data\":[1]}]}", 0, 0,
         IB_EUNSUPPORTED, "binary extension"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1],\"datatype\":\"FP32\"}]}", 0, 0, IB_EFORMAT,
         "neither"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[[[[[[[[[[1]]]]]"
         "]]]]]}]}",
         0, 0, IB_EFORMAT, "nested deeper"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]},{\"name\":"
         "\"a\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}",
         0, 0, IB_EFORMAT, "appears twice"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[2],\"datatype\":\"FP32\",\"parameters\":{"
         "\"binary_data_size\":4}}]}",
         SIZE_MAX, 4, IB_EFORMAT, "binary_data_size 4, but shape and datatype make 8"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[2],\"datatype\":\"FP32\",\"parameters\":{"
         "\"binary_data_size\":8}}]}",
         SIZE_MAX, 5, IB_EFORMAT, "3 bytes short"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1],\"datatype\":\"FP32\",\"parameters\":{"
         "\"binary_data_size\":4}}]}",
         SIZE_MAX, 9, IB_EFORMAT, "5 bytes of binary data follow"},
        {"{\"inputs\":[{\"name\":\"a\",\"shape\":[1],\"datatype\":\"FP32\",\"parameters\":{"
         "\"binary_data_size\":-4}}]}",
         SIZE_MAX, 0, IB_EFORMAT, "bad binary_data_size"},
        {"{\"inputs\":[],\"outputs\":{}}", 0, 0, IB_EFORMAT, "\"outputs\" is not an array"},
        {"{\"inputs\":[],\"outputs\":[{\"nam\":1}]}", 0, 0, IB_EFORMAT, "outputs[0]"},
        {"{\"inputs\":[],\"inputs\":[]}", 0, 0, IB_EFORMAT, "malformed JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t jl = strlen(cases[i].body);
        uint8_t *buf = calloc(1, jl + cases[i].tail + 1);
        ASSERT_NOT_NULL(buf);
        memcpy(buf, cases[i].body, jl);
        ib_ks_msg m;
        ib_err err;
        ib_err_clear(&err);
        int rc = ib_ks_decode(buf, jl + cases[i].tail, cases[i].json_len ? jl : 0, true, &m, &err);
        if (rc != cases[i].rc || !strstr(err.msg, cases[i].says))
            ib_test_fail(__FILE__, __LINE__, "case %zu: rc %d, '%s' (wanted %d, '%s')", i, rc,
                         err.msg, cases[i].rc, cases[i].says);
        ASSERT_TRUE(m.owned == NULL); /* freed on error */
        free(buf);
    }
    /* the header length past the body, and a binary body read as all-JSON */
    ib_ks_msg m;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_INT_EQ(ib_ks_decode((const uint8_t *)"{}", 2, 3, true, &m, &err), IB_EFORMAT);
    ASSERT_TRUE(strstr(err.msg, "truncated") != NULL);
    /* too many tensors */
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    ib_strbuf_puts(&sb, "{\"inputs\":[");
    for (int k = 0; k < IB_KS_MAX_TENSORS + 1; k++)
        ib_strbuf_printf(&sb, "%s{\"name\":\"t%d\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}",
                         k ? "," : "", k);
    ib_strbuf_puts(&sb, "]}");
    ASSERT_INT_EQ(ib_ks_decode((const uint8_t *)sb.data, sb.len, 0, true, &m, &err),
                  IB_EUNSUPPORTED);
    ib_strbuf_deinit(&sb);
}

TEST(kserve_encode_refuses_what_it_cannot_carry)
{
    float nan_v[1] = {NAN};
    ib_ks_msg m;
    memset(&m, 0, sizeof m);
    m.n_tensors = 1;
    snprintf(m.t[0].name, sizeof m.t[0].name, "x");
    m.t[0].desc = (ib_tensor_desc){IB_DTYPE_FLOAT32, 1, {1}};
    m.t[0].data = nan_v;
    m.t[0].nbytes = 4;
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    size_t jl;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_INT_EQ(ib_ks_encode(&m, true, false, &sb, &jl, &err), IB_EUNSUPPORTED);
    ASSERT_TRUE(strstr(err.msg, "binary") != NULL);
    ib_strbuf_reset(&sb); /* binary carries NaN */
    ASSERT_OK_ERR(ib_ks_encode(&m, true, true, &sb, &jl, &err), &err);
    m.t[0].nbytes = 8; /* size that does not fit the shape */
    ASSERT_INT_EQ(ib_ks_encode(&m, true, true, &sb, &jl, &err), IB_EINVAL);
    m.t[0].nbytes = 4;
    uint64_t big[1] = {UINT64_MAX};
    m.t[0].desc.dtype = IB_DTYPE_UINT64;
    m.t[0].data = big;
    m.t[0].nbytes = 8;
    ASSERT_INT_EQ(ib_ks_encode(&m, true, false, &sb, &jl, &err), IB_EUNSUPPORTED);
    ASSERT_TRUE(strstr(err.msg, "INT64_MAX") != NULL);
    m.t[0].nbytes = 4;
    m.t[0].desc.dtype = IB_DTYPE_STRING;
    ASSERT_INT_EQ(ib_ks_encode(&m, true, true, &sb, &jl, &err), IB_EUNSUPPORTED);
    ib_strbuf_deinit(&sb);
}
