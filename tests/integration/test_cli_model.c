/*
 * test_cli_model.c - `inferbench model info|run` on models generated with
 * the ONNX builder: the info text and JSON (inputs, outputs, histogram,
 * parameters, FLOPs), one inference per backend with the outputs written
 * as TensorProto files and checked against the reference interpreter, and
 * the exit codes of bad usage, bad files and bad inputs.
 */
#include <string.h>

#include "../unit/test_runtime_helpers.h"
#include "base/fileio.h"
#include "inferbench/onnx.h"
#include "onnx/build.h"
#include "test.h"

static ib_graph *write_model(ib_build *b, const char *path)
{
    ib_err err;
    ASSERT_OK_ERR(ib_build_write_file(b, path, NULL, &err), &err);
    return th_finish(b);
}

static void write_pb(const char *path, const char *name, const ib_tensor *t)
{
    ib_tensor_view v = {name, t->desc, t->data, t->nbytes};
    ib_err err;
    ASSERT_OK_ERR(ib_onnx_tensor_write_file(path, &v, &err), &err);
}

/* inferbench <args>: exit status */
static int cli(const char *args)
{
    return ib_test_system("%s/inferbench %s", ib_test_bin_dir(), args);
}

TEST(runtime_cli_model_info_text_and_json)
{
    ib_graph *g = write_model(th_build_tiny_resnet(7), "resnet.onnx");
    ASSERT_INT_EQ(cli("model info resnet.onnx > info.txt"), 0);
    char *t = ib_test_slurp("info.txt");
    ASSERT_STR_CONTAINS(t, "image");
    ASSERT_STR_CONTAINS(t, "float32[batch,3,16,16]");
    ASSERT_STR_CONTAINS(t, "logits");
    ASSERT_STR_CONTAINS(t, "parameters: 5410");
    ASSERT_STR_CONTAINS(t, "FLOPs per sample: 0.0003731 GFLOP");
    ASSERT_STR_CONTAINS(t, "Conv");
    ASSERT_STR_CONTAINS(t, "BatchNormalization");
    ib_free(t);
    ASSERT_INT_EQ(cli("model info --json resnet.onnx > info.json"), 0);
    t = ib_test_slurp("info.json");
    ASSERT_STR_CONTAINS(t, "\"params\": 5410");
    ASSERT_STR_CONTAINS(t, "\"flops_batch1\": 373056");
    ASSERT_STR_CONTAINS(t, "\"Conv\": 6");
    ASSERT_STR_CONTAINS(t, "\"shape\": [");
    ASSERT_STR_CONTAINS(t, "\"batch\"");
    ib_free(t);
    ib_graph_destroy(g);

    g = write_model(th_build_tiny_bert(2), "bert.onnx");
    ASSERT_INT_EQ(cli("model info bert.onnx > bert.txt"), 0);
    t = ib_test_slurp("bert.txt");
    ASSERT_STR_CONTAINS(t, "int64[batch,seq]");
    ASSERT_STR_CONTAINS(t, "FLOPs per sample: unknown");
    ib_free(t);
    ASSERT_INT_EQ(cli("model info --json bert.onnx > bert.json"), 0);
    t = ib_test_slurp("bert.json");
    ASSERT_STR_CONTAINS(t, "\"flops_batch1\": null");
    ib_free(t);
    ib_graph_destroy(g);
}

static void run_on(const char *backend, double tol)
{
    ib_graph *g = write_model(th_build_tiny_resnet(7), "resnet.onnx");
    ib_tensor_desc d =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)2, (int64_t)3, (int64_t)16, (int64_t)16);
    ib_tensor *in, *ref;
    th_random_inputs(g, &d, 42, &in);
    th_ref_run(g, &in, &ref);
    write_pb("img.pb", "image", in);
    int rc = ib_test_system("%s/inferbench model run resnet.onnx --input image=img.pb "
                            "--backend %s --output-dir out > run.txt",
                            ib_test_bin_dir(), backend);
    ASSERT_INT_EQ(rc, 0);
    char *t = ib_test_slurp("run.txt");
    ASSERT_STR_CONTAINS(t, "logits float32[2,10]");
    ib_free(t);
    ib_tensor_view out;
    ib_err err;
    ASSERT_OK_ERR(ib_onnx_tensor_read_file("out/logits.pb", &out, &err), &err);
    ASSERT_STR_EQ(out.name, "logits");
    ASSERT_TRUE(ib_tensor_desc_equal(&out.desc, &ref->desc));
    double e = th_max_rel_err(out.data, ref->data, ref->nbytes / sizeof(float));
    if (!(e <= tol)) ib_test_fail(__FILE__, __LINE__, "logits differ: %g", e);
    ib_onnx_tensor_release(&out);
    /* the file names its tensor, so NAME= may be omitted */
    ASSERT_INT_EQ(ib_test_system("%s/inferbench model run resnet.onnx --input img.pb --backend %s "
                                 "--no-fusion --output-dir out2",
                                 ib_test_bin_dir(), backend),
                  0);
    ASSERT_OK_ERR(ib_onnx_tensor_read_file("out2/logits.pb", &out, &err), &err);
    ASSERT_TRUE(th_max_rel_err(out.data, ref->data, ref->nbytes / sizeof(float)) <= tol);
    ib_onnx_tensor_release(&out);
    ib_tensor_free(in);
    ib_tensor_free(ref);
    ib_graph_destroy(g);
}

/* --profile: more runs after the first, and where their time went */
TEST(runtime_cli_model_run_profile)
{
    const char *why = NULL;
    if (!ib_backend_available("cpu", &why))
        TEST_SKIP(why);
    ib_graph *g = write_model(th_build_tiny_resnet(7), "resnet.onnx");
    ib_tensor_desc d =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)2, (int64_t)3, (int64_t)16, (int64_t)16);
    ib_tensor *in;
    th_random_inputs(g, &d, 42, &in);
    write_pb("img.pb", "image", in);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench model run resnet.onnx --input image=img.pb "
                                 "--profile=3 --output-dir out > run.txt",
                                 ib_test_bin_dir()),
                  0);
    char *t = ib_test_slurp("run.txt");
    ASSERT_STR_CONTAINS(t, "profile: 3 runs");
    ASSERT_STR_CONTAINS(t, "% run");
    ASSERT_STR_CONTAINS(t, "slowest ");
    ASSERT_STR_CONTAINS(t, "FusedConv");
    ib_free(t);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench model run resnet.onnx --input image=img.pb "
                                 "--profile=0 --output-dir out 2> err.txt",
                                 ib_test_bin_dir()),
                  2);
    ib_tensor_free(in);
    ib_graph_destroy(g);
}

TEST(runtime_cli_model_run_reference)
{
    run_on("reference", 1e-5);
}

TEST(runtime_cli_model_run_cpu)
{
    const char *why;
    if (!ib_backend_available("cpu", &why)) TEST_SKIP("cpu backend not available");
    run_on("cpu", 1e-3);
}

TEST(runtime_cli_model_run_two_inputs_and_odd_names)
{
    ib_build *b = th_build_tiny_bert(2);
    /* an output name with characters that cannot be a file name */
    ASSERT_OK(ib_build_rename(b, ib_build_graph(b)->outputs.data[0], "encoder/layer:0"));
    ib_graph *g = write_model(b, "bert.onnx");
    ib_tensor_desc d[2] = {th_desc(IB_DTYPE_INT64, 2, (int64_t)1, (int64_t)6),
                           th_desc(IB_DTYPE_INT64, 2, (int64_t)1, (int64_t)6)};
    ib_tensor *in[2], *ref;
    th_random_inputs(g, d, 3, in);
    th_ref_run(g, in, &ref);
    write_pb("ids.pb", "whatever", in[0]);
    write_pb("mask.pb", "", in[1]);
    ASSERT_INT_EQ(ib_test_system("%s/inferbench model run bert.onnx --input input_ids=ids.pb "
                                 "--input input_mask=mask.pb --backend reference --output-dir o",
                                 ib_test_bin_dir()),
                  0);
    ib_tensor_view out;
    ib_err err;
    ASSERT_OK_ERR(ib_onnx_tensor_read_file("o/encoder_layer_0.pb", &out, &err), &err);
    ASSERT_STR_EQ(out.name, "encoder/layer:0");
    ASSERT_TRUE(th_max_rel_err(out.data, ref->data, ref->nbytes / sizeof(float)) <= 1e-5);
    ib_onnx_tensor_release(&out);
    ib_tensor_free(in[0]);
    ib_tensor_free(in[1]);
    ib_tensor_free(ref);
    ib_graph_destroy(g);
}

TEST(runtime_cli_model_exit_codes)
{
    ib_graph *g = write_model(th_build_tiny_resnet(7), "resnet.onnx");
    ib_tensor_desc d =
        th_desc(IB_DTYPE_FLOAT32, 4, (int64_t)1, (int64_t)3, (int64_t)16, (int64_t)16);
    ib_tensor *in;
    th_random_inputs(g, &d, 1, &in);
    write_pb("img.pb", "image", in);
    d.dims[2] = 15;
    ib_tensor *bad;
    ASSERT_OK(ib_tensor_alloc(&d, &bad));
    write_pb("bad.pb", "image", bad);
    ASSERT_OK(ib_file_write_all("junk.onnx", "\x0a\xff\xff\xff\xff\x0f", 6, NULL));
    ASSERT_INT_EQ(cli("model --help > /dev/null"), 0);
    ASSERT_INT_EQ(cli("model run --help > /dev/null"), 0);
    ASSERT_INT_EQ(cli("model 2> /dev/null"), 2);
    ASSERT_INT_EQ(cli("model frobnicate 2> /dev/null"), 2);
    ASSERT_INT_EQ(cli("model info 2> /dev/null"), 2);
    ASSERT_INT_EQ(cli("model info missing.onnx 2> err.txt"), 2);
    char *t = ib_test_slurp("err.txt");
    ASSERT_STR_CONTAINS(t, "missing.onnx");
    ib_free(t);
    ASSERT_INT_EQ(cli("model info junk.onnx 2> /dev/null"), 2);
    ASSERT_INT_EQ(cli("model run resnet.onnx --input image=img.pb 2> /dev/null"), 2);
    ASSERT_INT_EQ(cli("model run resnet.onnx --output-dir o 2> /dev/null"), 2);
    ASSERT_INT_EQ(cli("model run resnet.onnx --input image=img.pb --precision fp7 "
                      "--output-dir o 2> /dev/null"),
                  2);
    ASSERT_INT_EQ(cli("model run resnet.onnx --input image=nothere.pb --output-dir o 2> /dev/null"),
                  2);
    /* wrong input name and wrong shape name what is wrong */
    ASSERT_INT_EQ(cli("model run resnet.onnx --input picture=img.pb --backend reference "
                      "--output-dir o 2> e1.txt"),
                  2);
    t = ib_test_slurp("e1.txt");
    ASSERT_STR_CONTAINS(t, "missing input 'image'");
    ib_free(t);
    ASSERT_INT_EQ(cli("model run resnet.onnx --input image=bad.pb --backend reference "
                      "--output-dir o 2> e2.txt"),
                  2);
    t = ib_test_slurp("e2.txt");
    ASSERT_STR_CONTAINS(t, "image");
    ASSERT_STR_CONTAINS(t, "float32[1,3,15,16]");
    ib_free(t);
    ASSERT_INT_EQ(cli("model run resnet.onnx --input image=img.pb --backend nope "
                      "--output-dir o 2> /dev/null"),
                  2);
    ib_tensor_free(in);
    ib_tensor_free(bad);
    ib_graph_destroy(g);
}
