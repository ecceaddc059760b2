/*
 * test_runtime_link.c - ib_session_run_linked: one session's output as another's input where
 * both live (RNN-T's encoder output into the decoder-step session without a host round trip
 * on a GPU). An "encoder" e = -x ([2, N, 4], time-major) linked into a "decoder" that takes
 * it as rows [1, 2N, 4] (a reshape) and adds w: on cpu and the reference backend and across
 * the two; kept for later fed runs (keep_inputs); a new variant when N changes; on a device
 * backend with no host-visible memory through the ABI 8 copy between instances, and through
 * the host when that copy is refused; the errors, each naming what is wrong.
 */
#include <string.h>

#include "onnx/build.h"
#include "runtime/session_impl.h"
#include "test.h"
#include "test_runtime_helpers.h"

static ib_model *model_of(ib_build *b)
{
    ib_graph *g = NULL;
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_build_finish(b, &g, &err), &err);
    ib_build_destroy(b);
    ib_model *m = NULL;
    ASSERT_OK_ERR(ib_model_from_graph(g, &m, &err), &err);
    return m;
}

/* e = -x, x [2, N, 4]; "k" is a constant (not a computed value) */
static ib_model *encoder_model(void)
{
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(1, 13, &b));
    ib_value_id x = ib_build_input(b, "x", IB_DTYPE_FLOAT32, "2,N,4");
    ib_build_output(b, IB_BUILD_OP(b, "Neg", "", x), "e", IB_DTYPE_FLOAT32, "2,N,4");
    static const int64_t k[2] = {1, 2};
    ib_build_output(b, ib_build_ints(b, "k", k, 2, NULL), "k", IB_DTYPE_INT64, "2");
    return model_of(b);
}

/* y = enc + w, enc [1, R, 4] (rows, as RNN-T's decoder step takes them), w [1, 1, 4] */
static ib_model *decoder_model(void)
{
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(1, 13, &b));
    ib_value_id enc = ib_build_input(b, "enc", IB_DTYPE_FLOAT32, "1,R,4");
    ib_value_id w = ib_build_input(b, "w", IB_DTYPE_FLOAT32, "1,1,4");
    ib_build_output(b, IB_BUILD_OP(b, "Add", "", enc, w), "y", IB_DTYPE_FLOAT32, "1,R,4");
    return model_of(b);
}

static ib_session *open_on(const ib_model *m, const char *backend, const struct ib_backend_ops *ops,
                           bool keep)
{
    ib_session_options o;
    ib_session_options_defaults(&o);
    o.backend = backend;
    o.threads = 1;
    o.max_batch = 8;
    o.keep_inputs = keep;
    ib_session *s = NULL;
    ib_err err;
    ib_err_clear(&err);
    if (ops)
        ASSERT_OK_ERR(ib_session_create_with_ops(m, &o, ops, &s, &err), &err);
    else
        ASSERT_OK_ERR(ib_session_create(m, &o, &s, &err), &err);
    return s;
}

/* Run the encoder on x [2, n, 4] (values from seed), then the decoder linked to it with w;
 * check y = -x + w row by row. */
static void link_round(ib_session *enc, ib_session *dec, int64_t n, float seed, const float *w)
{
    float x[64], y[64];
    for (int i = 0; i < 8 * n; i++)
        x[i] = seed + 0.5f * (float)i;
    ib_tensor_view xin = {"x", {IB_DTYPE_FLOAT32, 3, {2, n, 4}}, x, 0};
    ib_err err;
    ib_err_clear(&err);
    ASSERT_OK_ERR(ib_session_run(enc, &xin, 1, NULL, 0, &err), &err);
    ib_tensor_view win = {"w", {IB_DTYPE_FLOAT32, 3, {1, 1, 4}}, (void *)(uintptr_t)w, 0};
    ib_tensor_view out = {"y", {0}, y, sizeof y};
    ib_session_link l = {"enc", enc, "e", {IB_DTYPE_FLOAT32, 3, {1, 2 * n, 4}}};
    memset(y, 0xff, sizeof y);
    ASSERT_OK_ERR(ib_session_run_linked(dec, &win, 1, &l, 1, &out, 1, &err), &err);
    ASSERT_INT_EQ(out.desc.dims[1], 2 * n);
    for (int i = 0; i < 8 * n; i++)
        ASSERT_DBL_EQ(y[i], (double)(-x[i] + w[i % 4]));
}

TEST(runtime_link_output_to_input)
{
    static const char *const pairs[][2] = {
        {"cpu", "cpu"}, {"reference", "reference"}, {"cpu", "reference"}, {"reference", "cpu"}};
    ib_model *me = encoder_model(), *md = decoder_model();
    const float w[4] = {10, 20, 30, 40}, w2[4] = {-1, -2, -3, -4};
    for (size_t k = 0; k < IB_ARRAY_LEN(pairs); k++) {
        ib_session *enc = open_on(me, pairs[k][0], NULL, false);
        ib_session *dec = open_on(md, pairs[k][1], NULL, true);
        link_round(enc, dec, 3, 1.0f, w);
        /* the linked input stays in the decoder (keep_inputs) for fed runs with a new w */
        float y[64];
        ib_tensor_view win = {"w", {IB_DTYPE_FLOAT32, 3, {1, 1, 4}}, (void *)(uintptr_t)w2, 0};
        ib_tensor_view out = {"y", {0}, y, sizeof y};
        ib_session_feed keep = {"enc", NULL, NULL};
        ib_err err;
        ib_err_clear(&err);
        ASSERT_OK_ERR(ib_session_run_fed(dec, &win, 1, &keep, 1, &out, 1, &err), &err);
        for (int i = 0; i < 24; i++)
            ASSERT_DBL_EQ(y[i], (double)(-(1.0f + 0.5f * (float)i) + w2[i % 4]));
        /* other shapes: another variant of both, linked again */
        link_round(enc, dec, 5, -7.0f, w);
        link_round(enc, dec, 3, 2.0f, w2);
        ib_session_destroy(dec);
        ib_session_destroy(enc);
    }
    ib_model_destroy(md);
    ib_model_destroy(me);
}

/* ABI 8 on a backend whose memory the host cannot see: a counting copy between instances,
 * and one that refuses (other devices), after which the bytes go through the host. */
static int copies_from, refuse_from;

static int td_copy_from(void *ctx, void *dst_impl, size_t dst_off, void *src_ctx,
                        const void *src_impl, size_t src_off, size_t nbytes, ib_err *err)
{
    if (refuse_from)
        return ib_err_set(err, IB_EUNSUPPORTED, "testdev: another device");
    copies_from++;
    unsigned char tmp[256];
    ASSERT_TRUE(nbytes <= sizeof tmp);
    int rc = th_testdev_ops.tensor_get(src_ctx, (void *)(uintptr_t)src_impl, src_off, tmp,
                                       nbytes, err);
    return rc ? rc : th_testdev_ops.tensor_set(ctx, dst_impl, dst_off, tmp, nbytes, err);
}

TEST(runtime_link_device_copies)
{
    struct ib_backend_ops ops = th_testdev_ops, old = th_testdev_ops;
    ops.buffer_copy_from = td_copy_from;
    old.abi_version = 7; /* a table from before ABI 8: its trailing field is not read */
    old.buffer_copy_from = td_copy_from;
    ib_model *me = encoder_model(), *md = decoder_model();
    const float w[4] = {1, 2, 3, 4};
    th_testdev.hide_host = true;
    for (int k = 0; k < 3; k++) {
        const struct ib_backend_ops *t = k == 2 ? &old : &ops;
        refuse_from = k == 1;
        copies_from = 0;
        ib_session *enc = open_on(me, "testdev", t, false);
        ib_session *dec = open_on(md, "testdev", t, false);
        ASSERT_TRUE(ib_backend_buffer_host_ptr(dec->arena[0]) == NULL);
        link_round(enc, dec, 2, 3.0f, w);
        link_round(enc, dec, 4, 0.25f, w);
        ASSERT_INT_EQ(copies_from, k == 0 ? 2 : 0); /* one device copy a link, else the host */
        ib_session_destroy(dec);
        ib_session_destroy(enc);
    }
    th_testdev.hide_host = false;
    refuse_from = 0;
    ib_model_destroy(md);
    ib_model_destroy(me);
}

TEST(runtime_link_errors)
{
    ib_model *me = encoder_model(), *md = decoder_model();
    ib_session *enc = open_on(me, "cpu", NULL, false), *dec = open_on(md, "cpu", NULL, false);
    float x[64] = {0}, y[64], w[4] = {0};
    ib_tensor_view xin = {"x", {IB_DTYPE_FLOAT32, 3, {2, 2, 4}}, x, 0};
    ib_tensor_view win = {"w", {IB_DTYPE_FLOAT32, 3, {1, 1, 4}}, w, 0};
    ib_tensor_view both[2] = {win, {"enc", {IB_DTYPE_FLOAT32, 3, {1, 4, 4}}, x, 0}};
    ib_tensor_view out = {"y", {0}, y, sizeof y};
    const ib_tensor_desc rows = {IB_DTYPE_FLOAT32, 3, {1, 4, 4}};
    ib_session_link l = {"enc", enc, "e", rows};
    ib_err err;
    ib_err_clear(&err);
    /* the source has not run */
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, &l, 1, &out, 1, &err), IB_ESTATE);
    ASSERT_STR_CONTAINS(err.msg, "no successful run");
    ASSERT_OK_ERR(ib_session_run(enc, &xin, 1, NULL, 0, &err), &err);
    ib_session_link bad = l;
    bad.input = "nope";
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, &bad, 1, &out, 1, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "'nope'");
    bad = l;
    bad.output = "nope";
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, &bad, 1, &out, 1, &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "no output 'nope'");
    bad = l;
    bad.output = "k"; /* a constant: not in the source's arena */
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, &bad, 1, &out, 1, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "not a computed value");
    bad = l;
    bad.from = dec;
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, &bad, 1, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "ib_session_run_fed");
    bad.from = NULL;
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, &bad, 1, &out, 1, &err), IB_EINVAL);
    bad = l;
    bad.desc.dims[1] = 5; /* 80 bytes for the output's 64 */
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, &bad, 1, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "reshaped");
    bad.desc = (ib_tensor_desc){IB_DTYPE_INT32, 3, {1, 4, 4}};
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, &bad, 1, &out, 1, &err), IB_EINVAL);
    bad.desc = (ib_tensor_desc){0}; /* the output's own [2, 2, 4]: not the input's [1, R, 4] */
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, &bad, 1, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "input 'enc'");
    ASSERT_STATUS(ib_session_run_linked(dec, both, 2, &l, 1, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "both linked and given");
    ib_session_link twice[2] = {l, l};
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, twice, 2, &out, 1, &err), IB_EINVAL);
    ASSERT_STATUS(ib_session_run_linked(dec, NULL, 0, &l, 1, &out, 1, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "missing input 'w'");
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, NULL, 1, &out, 1, &err), IB_EINVAL);
    /* a failed call leaves nothing to feed from; a good one works after the failures */
    ib_session_feed keep = {"enc", NULL, NULL};
    ASSERT_STATUS(ib_session_run_fed(dec, &win, 1, &keep, 1, &out, 1, &err), IB_ESTATE);
    ASSERT_OK_ERR(ib_session_run_linked(dec, &win, 1, &l, 1, &out, 1, &err), &err);
    /* a source whose last run failed has nothing to give */
    ib_tensor_view wrong = {"x", {IB_DTYPE_INT64, 3, {2, 2, 4}}, x, 0};
    ASSERT_STATUS(ib_session_run(enc, &wrong, 1, NULL, 0, &err), IB_EINVAL);
    ASSERT_STATUS(ib_session_run_linked(dec, &win, 1, &l, 1, &out, 1, &err), IB_ESTATE);
    ib_session_destroy(dec);
    ib_session_destroy(enc);
    ib_model_destroy(md);
    ib_model_destroy(me);
}

/* A link inside fed runs (ib_session_feed.from): an accumulator acc <- acc + enc, with acc fed
 * from its own output and enc from the encoder's latest run, as 3D U-Net's sliding windows
 * add each window's logits on the device. Over four encoder runs acc = -(x1 + ... + x4). */
TEST(runtime_link_in_fed_runs)
{
    ib_model *me = encoder_model();
    ib_build *b = NULL;
    ASSERT_OK(ib_build_create(1, 13, &b));
    ib_value_id acc = ib_build_input(b, "acc", IB_DTYPE_FLOAT32, "1,R,4");
    ib_value_id e = ib_build_input(b, "enc", IB_DTYPE_FLOAT32, "1,R,4");
    ib_build_output(b, IB_BUILD_OP(b, "Add", "", acc, e), "acc_out", IB_DTYPE_FLOAT32, "1,R,4");
    ib_model *ma = model_of(b);
    static const char *const backends[] = {"cpu", "reference"};
    for (int k = 0; k < 2; k++) {
        ib_session *enc = open_on(me, backends[k], NULL, false);
        ib_session *sa = open_on(ma, backends[1 - k], NULL, false);
        float x[24], zero[24] = {0}, sum[24] = {0}, y[24];
        ib_tensor_view xin = {"x", {IB_DTYPE_FLOAT32, 3, {2, 3, 4}}, x, 0};
        const ib_tensor_desc rows = {IB_DTYPE_FLOAT32, 3, {1, 6, 4}};
        ib_tensor_view ain = {"acc", rows, zero, 0};
        ib_tensor_view out = {"acc_out", {0}, y, sizeof y};
        ib_session_link l = {"enc", enc, "e", rows};
        ib_session_feed fb[2] = {{"acc", "acc_out", NULL}, {"enc", "e", enc}};
        ib_err err;
        ib_err_clear(&err);
        for (int r = 0; r < 4; r++) {
            for (int i = 0; i < 24; i++) {
                x[i] = (float)(i * (r + 1)) - 3.0f;
                sum[i] += x[i];
            }
            ASSERT_OK_ERR(ib_session_run(enc, &xin, 1, NULL, 0, &err), &err);
            if (r == 0)
                ASSERT_OK_ERR(ib_session_run_linked(sa, &ain, 1, &l, 1, &out, 1, &err), &err);
            else
                ASSERT_OK_ERR(ib_session_run_fed(sa, NULL, 0, fb, 2, &out, 1, &err), &err);
            for (int i = 0; i < 24; i++)
                ASSERT_DBL_EQ(y[i], -(double)sum[i]);
        }
        /* the encoder at another shape: not the bytes the fed input had */
        float x5[40] = {0};
        ib_tensor_view x5in = {"x", {IB_DTYPE_FLOAT32, 3, {2, 5, 4}}, x5, 0};
        ASSERT_OK_ERR(ib_session_run(enc, &x5in, 1, NULL, 0, &err), &err);
        ASSERT_STATUS(ib_session_run_fed(sa, NULL, 0, fb, 2, &out, 1, &err), IB_EINVAL);
        ASSERT_STR_CONTAINS(err.msg, "'enc'");
        /* nor when the encoder's last run failed */
        ib_tensor_view wrong = {"x", {IB_DTYPE_INT64, 3, {2, 3, 4}}, x, 0};
        ASSERT_STATUS(ib_session_run(enc, &wrong, 1, NULL, 0, &err), IB_EINVAL);
        ASSERT_STATUS(ib_session_run_linked(sa, &ain, 1, &l, 1, &out, 1, &err), IB_ESTATE);
        ib_session_destroy(sa);
        ib_session_destroy(enc);
    }
    ib_model_destroy(ma);
    ib_model_destroy(me);
}
