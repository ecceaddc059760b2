/*
 * mel.c - the RNN-T filterbank features (mel.h) with FFTW (single precision r2c of 512
 * points per frame). Constants and order: speech_recognition/rnnt/pytorch/parts/features.py
 * (FilterbankFeatures.forward) and configs/rnnt.toml [input_eval]; the filterbank follows
 * librosa.filters.mel (htk=False, norm="slaney").
 */
#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "base/common.h"
#include "dataset/mel.h"

#define N_BINS (IB_MEL_N_FFT / 2 + 1) /* 257 */

struct ib_mel {
    float window[IB_MEL_N_FFT]; /* hann(320, periodic=False) centred in 512 */
    float fb[IB_MEL_N_MELS * N_BINS];
    int lo[IB_MEL_N_MELS], hi[IB_MEL_N_MELS]; /* non-zero bins [lo, hi) of each filter */
    fftwf_plan plan;
};

/* FFTW's planner is process-wide and not thread-safe: plan creation and destruction take
 * this lock (fftwf_execute_dft_r2c on an existing plan is thread-safe). */
static pthread_mutex_t g_fftw_lock = PTHREAD_MUTEX_INITIALIZER;

/* librosa hz_to_mel / mel_to_hz with htk=False (Slaney). */
static double hz_to_mel(double f)
{
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    return f >= min_log_hz ? min_log_mel + log(f / min_log_hz) / logstep : f / f_sp;
}

static double mel_to_hz(double m)
{
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    return m >= min_log_mel ? min_log_hz * exp(logstep * (m - min_log_mel)) : f_sp * m;
}

static void make_filterbank(ib_mel *m)
{
    double mel_f[IB_MEL_N_MELS + 2], fft_f[N_BINS];
    double lo = hz_to_mel(0.0), hi = hz_to_mel(IB_MEL_RATE / 2.0);
    /* mel_frequencies: np.linspace(min_mel, max_mel, n_mels + 2) mapped back to Hz */
    for (int i = 0; i < IB_MEL_N_MELS + 2; i++)
        mel_f[i] = mel_to_hz(lo + (hi - lo) * i / (IB_MEL_N_MELS + 1));
    for (int k = 0; k < N_BINS; k++) /* fft_frequencies: np.linspace(0, sr / 2, 257) */
        fft_f[k] = (IB_MEL_RATE / 2.0) * k / (N_BINS - 1);
    for (int i = 0; i < IB_MEL_N_MELS; i++) {
        double d0 = mel_f[i + 1] - mel_f[i], d1 = mel_f[i + 2] - mel_f[i + 1];
        double enorm = 2.0 / (mel_f[i + 2] - mel_f[i]); /* norm="slaney" */
        m->lo[i] = N_BINS;
        m->hi[i] = 0;
        for (int k = 0; k < N_BINS; k++) {
            double lower = (fft_f[k] - mel_f[i]) / d0, upper = (mel_f[i + 2] - fft_f[k]) / d1;
            double w = fmax(0.0, fmin(lower, upper)) * enorm;
            m->fb[i * N_BINS + k] = (float)w;
            if (w > 0) {
                if (k < m->lo[i])
                    m->lo[i] = k;
                m->hi[i] = k + 1;
            }
        }
        if (m->hi[i] == 0)
            m->lo[i] = 0;
    }
}

int ib_mel_create(ib_mel **out, ib_err *err)
{
    *out = NULL;
    ib_mel *m = ib_calloc(1, sizeof *m);
    if (!m)
        return ib_err_set(err, IB_ENOMEM, "mel: out of memory");
    /* torch.hann_window(320, periodic=False): 0.5 - 0.5 cos(2 pi n / 319); torch.stft pads
     * it to n_fft with (512 - 320) / 2 = 96 zeros on the left */
    const int left = (IB_MEL_N_FFT - IB_MEL_WIN) / 2;
    for (int n = 0; n < IB_MEL_WIN; n++)
        m->window[left + n] =
            (float)(0.5 - 0.5 * cos(2.0 * 3.14159265358979323846 * n / (IB_MEL_WIN - 1)));
    make_filterbank(m);
    float *in = fftwf_malloc(sizeof(float) * IB_MEL_N_FFT);
    fftwf_complex *o = fftwf_malloc(sizeof(fftwf_complex) * N_BINS);
    if (in && o) {
        pthread_mutex_lock(&g_fftw_lock);
        m->plan = fftwf_plan_dft_r2c_1d(IB_MEL_N_FFT, in, o, FFTW_ESTIMATE | FFTW_UNALIGNED);
        pthread_mutex_unlock(&g_fftw_lock);
    }
    fftwf_free(in);
    fftwf_free(o);
    if (!m->plan) {
        ib_free(m);
        return ib_err_set(err, IB_ENOMEM, "mel: cannot create the FFTW plan");
    }
    *out = m;
    return IB_OK;
}

void ib_mel_destroy(ib_mel *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&g_fftw_lock);
    fftwf_destroy_plan(m->plan);
    pthread_mutex_unlock(&g_fftw_lock);
    ib_free(m);
}

const float *ib_mel_filterbank(const ib_mel *m)
{
    return m->fb;
}

size_t ib_mel_frames(size_t n)
{
    /* get_seq_len: (n + hop - 1) // hop, then (x + splice - 1) // splice */
    size_t t = (n + IB_MEL_HOP - 1) / IB_MEL_HOP;
    return (t + IB_MEL_SPLICE - 1) / IB_MEL_SPLICE;
}

static size_t stft_frames(size_t n)
{
    return 1 + n / IB_MEL_HOP;
}

size_t ib_mel_scratch_floats(size_t n)
{
    /* padded signal, log-mel [F, 80], one frame in, 257 complex out (+ alignment slack) */
    return (n + IB_MEL_N_FFT) + stft_frames(n) * IB_MEL_N_MELS + IB_MEL_N_FFT + 2 * N_BINS + 16;
}

int ib_mel_compute(const ib_mel *m, const float *x, size_t n, float *out, size_t frame_stride,
                   float *scratch, ib_err *err)
{
    if (n < IB_MEL_MIN_SAMPLES)
        return ib_err_set(err, IB_EINVAL,
                          "mel: an utterance of %zu samples is shorter than %d (30 ms), too "
                          "short for the per-feature standard deviation",
                          n, IB_MEL_MIN_SAMPLES);
    if (frame_stride < IB_MEL_DIM)
        return ib_err_set(err, IB_EINVAL, "mel: frame stride %zu < %d", frame_stride, IB_MEL_DIM);
    const size_t pad = IB_MEL_N_FFT / 2, F = stft_frames(n), T = ib_mel_frames(n);
    float *sig = scratch;                  /* n + 512 */
    float *lm = sig + n + IB_MEL_N_FFT;    /* F x 80 */
    float *fin = lm + F * IB_MEL_N_MELS;   /* 512 */
    float *fo = fin + IB_MEL_N_FFT;        /* 257 complex */
    /* pre-emphasis, then the reflect padding of center=True (sig[pad + i] = y[i]) */
    float *y = sig + pad;
    y[0] = x[0];
    for (size_t i = 1; i < n; i++)
        y[i] = x[i] - IB_MEL_PREEMPH * x[i - 1];
    for (size_t k = 1; k <= pad; k++) {
        sig[pad - k] = y[k];
        y[n - 1 + k] = y[n - 1 - k];
    }
    const float dither2 = (float)(IB_MEL_DITHER * IB_MEL_DITHER);
    const int left = (IB_MEL_N_FFT - IB_MEL_WIN) / 2;
    for (size_t t = 0; t < F; t++) {
        const float *fr = sig + t * IB_MEL_HOP;
        memset(fin, 0, sizeof(float) * IB_MEL_N_FFT);
        for (int k = left; k < left + IB_MEL_WIN; k++)
            fin[k] = fr[k] * m->window[k];
        fftwf_execute_dft_r2c(m->plan, fin, (fftwf_complex *)fo);
        float pw[N_BINS];
        for (int k = 0; k < N_BINS; k++)
            pw[k] = fo[2 * k] * fo[2 * k] + fo[2 * k + 1] * fo[2 * k + 1] + dither2;
        for (int i = 0; i < IB_MEL_N_MELS; i++) {
            const float *w = m->fb + i * N_BINS;
            float s = 0;
            for (int k = m->lo[i]; k < m->hi[i]; k++)
                s += w[k] * pw[k];
            lm[t * IB_MEL_N_MELS + (size_t)i] = logf(s + IB_MEL_LOG_GUARD);
        }
    }
    /* splice x3 (the first T of the ceil(F / 3) spliced frames are kept) */
    for (size_t j = 0; j < T; j++)
        for (int s = 0; s < IB_MEL_SPLICE; s++) {
            size_t src = 3 * j + (size_t)s;
            float *o = out + j * frame_stride + (size_t)s * IB_MEL_N_MELS;
            if (src < F)
                memcpy(o, lm + src * IB_MEL_N_MELS, sizeof(float) * IB_MEL_N_MELS);
            else
                memset(o, 0, sizeof(float) * IB_MEL_N_MELS);
        }
    /* per_feature: mean and unbiased std over the T frames, std += 1e-5 */
    for (size_t d = 0; d < IB_MEL_DIM; d++) {
        double sum = 0, sq = 0;
        for (size_t j = 0; j < T; j++)
            sum += (double)out[j * frame_stride + d];
        double mean = sum / (double)T;
        for (size_t j = 0; j < T; j++) {
            double v = (double)out[j * frame_stride + d] - mean;
            sq += v * v;
        }
        float sd = (float)sqrt(sq / (double)(T - 1)) + IB_MEL_NORM_EPS, mf = (float)mean;
        for (size_t j = 0; j < T; j++)
            out[j * frame_stride + d] = (out[j * frame_stride + d] - mf) / sd;
    }
    return IB_OK;
}
