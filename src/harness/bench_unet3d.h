/*
 * bench_unet3d.h - internal interface between the 3d-unet entry (bench_unet3d.c: variant
 * dispatch, BraTS 2019) and its KiTS19 half (bench_unet3d_kits.c: resampled CT volumes,
 * sliding-window inference with Gaussian importance weighting, kidney/tumour DICE). The
 * functions mirror the ib_benchmark hooks of benchmark.h for the kits19 variant.
 */
#ifndef IB_HARNESS_BENCH_UNET3D_H
#define IB_HARNESS_BENCH_UNET3D_H

#include <stdbool.h>

#include "harness/benchmark.h"

/* cfg->variant: NULL/"" or "brats19" -> *kits = false; "kits19" or "kits19-device" -> true;
 * else IB_EINVAL. */
int ib_u3_variant(const ib_bench_config *cfg, bool *kits, ib_err *err);

/* cfg->variant "kits19-device": the window sums in the window graph on every backend. */
bool ib_u3_kits_sums_forced(const ib_bench_config *cfg);
/* The window graph (model 1 of kits19): write it / check it and describe it. */
int ib_u3_kits_build_sums(const char *path, ib_err *err);
int ib_u3_kits_bind_sums(const ib_model *m, ib_bench_io *io, ib_err *err);

int ib_u3_kits_synthesize(const ib_bench_config *cfg, const char *dir, ib_err *err);
int ib_u3_kits_open(const ib_bench_config *cfg, const char *dir, const ib_bench_io *io,
                    void **state, size_t *total, ib_err *err);
void ib_u3_kits_close(void *state);
int ib_u3_kits_load(void *state, size_t index, ib_bench_sample *out, ib_err *err);
size_t ib_u3_kits_payload_max(void *state, const ib_bench_config *cfg);
/* Model 0's calibration input from a loaded volume: its middle window (calib_inputs). */
int ib_u3_kits_calib_inputs(void *state, const ib_bench_sample *smp, ib_tensor_view *views,
                            void **mem, ib_err *err);
int ib_u3_kits_infer(void *state, const ib_bench_config *cfg, ib_session *const *sessions,
                     ib_bench_batch *b, ib_bench_payload *out, ib_err *err);
int ib_u3_kits_accuracy(void *state, const ib_bench_config *cfg, const ib_bench_acc_entry *e,
                        size_t n, ib_strbuf *text, double *value, ib_err *err);

#endif
