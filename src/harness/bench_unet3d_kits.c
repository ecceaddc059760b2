/*
 * bench_unet3d_kits.c - the kits19 variant of the 3d-unet entries. Not implemented yet:
 * every hook returns IB_EUNSUPPORTED with a message saying so, so `--dataset kits19` fails
 * with a clear error instead of running something else.
 */
#include "harness/bench_unet3d.h"

#include "base/common.h"

static int not_yet(ib_err *err)
{
    return ib_err_set(err, IB_EUNSUPPORTED,
                      "3d-unet: --dataset kits19 is not implemented yet (brats19 is)");
}

int ib_u3_kits_synthesize(const ib_bench_config *cfg, const char *dir, ib_err *err)
{
    (void)cfg;
    (void)dir;
    return not_yet(err);
}

int ib_u3_kits_open(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                    void **state, size_t *total, ib_err *err)
{
    (void)cfg;
    (void)dir;
    (void)io;
    *state = NULL;
    *total = 0;
    return not_yet(err);
}

void ib_u3_kits_close(void *state)
{
    (void)state;
}

int ib_u3_kits_load(void *state, size_t index, ib_bench_sample *out, ib_err *err)
{
    (void)state;
    (void)index;
    (void)out;
    return not_yet(err);
}

size_t ib_u3_kits_payload_max(void *state, const ib_bench_config *cfg)
{
    (void)state;
    (void)cfg;
    return 0;
}

int ib_u3_kits_infer(void *state, const ib_bench_config *cfg, ib_session *const *sessions,
                     ib_bench_batch *b, ib_bench_payload *out, ib_err *err)
{
    (void)state;
    (void)cfg;
    (void)sessions;
    (void)b;
    (void)out;
    return not_yet(err);
}

int ib_u3_kits_accuracy(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *e,
                        size_t n, ib_strbuf *text, double *value, ib_err *err)
{
    (void)state;
    (void)cfg;
    (void)e;
    (void)n;
    (void)text;
    (void)value;
    return not_yet(err);
}
