/*
 * mel.h - RNN-T audio features (benchmarks.md §1.5: timed, inside the SUT), as the
 * reference's FilterbankFeatures (speech_recognition/rnnt/pytorch/parts/features.py, with
 * configs/rnnt.toml [input_eval]) computes them for one utterance:
 *
 *   1. pre-emphasis 0.97: y[0] = x[0], y[i] = x[i] - 0.97 x[i-1]
 *   2. torch.stft(n_fft 512, hop 160 (10 ms), win_length 320 (20 ms), center=True with
 *      reflect padding of 256 samples each side, window torch.hann_window(320,
 *      periodic=False) zero-padded to 512 with 96 zeros on the left): 1 + N / 160 frames
 *   3. power |X|^2 + dither^2 (dither 1e-5 with use_deterministic_dithering: the constant
 *      1e-10 is added, no random noise)
 *   4. 80 mel filters: librosa.filters.mel(sr 16000, n_fft 512, n_mels 80, fmin 0, fmax
 *      8000) = Slaney mel scale (linear below 1 kHz, log above), Slaney area normalisation
 *   5. log(x + 1e-20)
 *   6. frame splicing x3: frame j = [f(3j), f(3j+1), f(3j+2)] (zeros past the end) -> 240
 *      dims (dim = 80 * k + mel), every third frame
 *   7. per-feature normalisation over the first seq_len frames: (x - mean) / (std + 1e-5),
 *      std unbiased (torch.std), where seq_len = ceil(ceil(N / 160) / 3) (get_seq_len)
 *   8. truncation to seq_len frames
 * The reference normalises after splicing (the order of features.py's forward), which is
 * what is done here. Output float32 [seq_len, 240], time-major like the reference decoder's
 * feature.permute(2, 0, 1).
 *
 * Thread-safety: one ib_mel may be used from several threads at once (each with its own
 * scratch); create/destroy serialise FFTW's planner internally.
 */
#ifndef IB_DATASET_MEL_H
#define IB_DATASET_MEL_H

#include <stddef.h>

#include "inferbench/status.h"

#define IB_MEL_RATE 16000
#define IB_MEL_N_FFT 512
#define IB_MEL_WIN 320
#define IB_MEL_HOP 160
#define IB_MEL_N_MELS 80
#define IB_MEL_SPLICE 3
#define IB_MEL_DIM (IB_MEL_N_MELS * IB_MEL_SPLICE) /* 240 */
#define IB_MEL_PREEMPH 0.97f
#define IB_MEL_DITHER 1e-5
#define IB_MEL_LOG_GUARD 1e-20f
#define IB_MEL_NORM_EPS 1e-5f
/* shortest input: seq_len >= 2, so the unbiased std is defined (481 samples, 30 ms) */
#define IB_MEL_MIN_SAMPLES 481

typedef struct ib_mel ib_mel;

int ib_mel_create(ib_mel **out, ib_err *err);
void ib_mel_destroy(ib_mel *m);

/* seq_len for n samples: ceil(ceil(n / 160) / 3). */
size_t ib_mel_frames(size_t n_samples);
/* Floats of scratch ib_mel_compute needs for n samples. */
size_t ib_mel_scratch_floats(size_t n_samples);
/* The mel filterbank [80, 257] (float32, as librosa returns it). */
const float *ib_mel_filterbank(const ib_mel *m);

/*
 * ib_mel_compute - the features of n samples into out: frame t, dim d at
 * out[t * frame_stride + d] (frame_stride >= 240; 240 for a dense [seq_len, 240] array,
 * N x 240 to write one utterance of a time-major batch [T, N, 240]).
 * scratch: ib_mel_scratch_floats(n) floats. IB_EINVAL for n < IB_MEL_MIN_SAMPLES.
 */
int ib_mel_compute(const ib_mel *m, const float *x, size_t n, float *out, size_t frame_stride,
                   float *scratch, ib_err *err);

#endif
