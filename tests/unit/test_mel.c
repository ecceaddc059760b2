/*
 * test_mel.c - RNN-T features (src/dataset/mel.c): filterbank values worked out by hand
 * (Slaney scale: 81 mel steps of 45.245 / 81 = 0.5586 mel = 37.24 Hz below 1 kHz; filter 0
 * spans 0 / 37.24 / 74.47 Hz with area norm 2 / 74.47, so bin 1 (31.25 Hz) weighs
 * 31.25 / 37.24 x 0.02686 = 0.02253 and bin 2 (62.5 Hz) (74.47 - 62.5) / 37.24 x 0.02686 =
 * 0.00864), get_seq_len, silence -> all-zero normalised features, bad input, and the whole
 * pipeline against tests/data/rnnt/mel_ref.py (torch.stft + a numpy filterbank) when
 * /usr/bin/python3 has torch.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "dataset/mel.h"
#include "inferbench/base.h"
#include "test.h"

TEST(mel_filterbank_hand_values)
{
    ib_mel *m = NULL;
    ib_err err;
    ASSERT_OK(ib_mel_create(&m, &err));
    const float *fb = ib_mel_filterbank(m);
    ASSERT_DBL_EQ(fb[0], 0.0);
    ASSERT_NEAR(fb[1], 0.022535, 2e-6);
    ASSERT_NEAR(fb[2], 0.0086377, 2e-6);
    ASSERT_DBL_EQ(fb[3], 0.0);
    /* the last filter ends at 8 kHz: bin 256 has weight 0, its peak is below */
    ASSERT_DBL_EQ(fb[79 * 257 + 256], 0.0);
    ASSERT_TRUE((double)fb[79 * 257 + 246] > 0.0032 && (double)fb[79 * 257 + 246] < 0.0033);
    /* every filter has weight somewhere */
    for (int i = 0; i < 80; i++) {
        double s = 0;
        for (int k = 0; k < 257; k++)
            s += (double)fb[i * 257 + k];
        ASSERT_TRUE(s > 0);
    }
    ib_mel_destroy(m);
}

TEST(mel_seq_len)
{
    /* ceil(ceil(n / 160) / 3) */
    ASSERT_UINT_EQ(ib_mel_frames(480), 1);
    ASSERT_UINT_EQ(ib_mel_frames(481), 2);
    ASSERT_UINT_EQ(ib_mel_frames(16000), 34);   /* 100 -> 34 */
    ASSERT_UINT_EQ(ib_mel_frames(105440), 220); /* the first dev-clean utterance: 659 -> 220 */
    ASSERT_UINT_EQ(ib_mel_frames(240000), 500);
}

TEST(mel_silence_is_zero)
{
    /* all-zero audio: power = dither^2 everywhere, every frame's log-mel is the same, so
     * (x - mean) / (0 + 1e-5) is exactly 0 (4800 samples: 31 STFT frames, seq_len 10, all
     * from real frames) */
    ib_mel *m = NULL;
    ib_err err;
    ASSERT_OK(ib_mel_create(&m, &err));
    size_t n = 4800, T = ib_mel_frames(n);
    ASSERT_UINT_EQ(T, 10);
    float *x = ib_calloc(n, sizeof *x), *out = ib_malloc(T * IB_MEL_DIM * sizeof *out);
    float *scr = ib_malloc(ib_mel_scratch_floats(n) * sizeof *scr);
    ASSERT_OK_ERR(ib_mel_compute(m, x, n, out, IB_MEL_DIM, scr, &err), &err);
    for (size_t i = 0; i < T * IB_MEL_DIM; i++)
        ASSERT_DBL_EQ(out[i], 0.0);
    ib_free(x);
    ib_free(out);
    ib_free(scr);
    ib_mel_destroy(m);
}

TEST(mel_bad_input)
{
    ib_mel *m = NULL;
    ib_err err;
    ASSERT_OK(ib_mel_create(&m, &err));
    float x[480] = {0}, out[240], scr[4096];
    ASSERT_STATUS(ib_mel_compute(m, x, 480, out, IB_MEL_DIM, scr, &err), IB_EINVAL);
    ASSERT_STR_CONTAINS(err.msg, "480 samples");
    ASSERT_STATUS(ib_mel_compute(m, x, 480, out, 100, scr, &err), IB_EINVAL);
    ib_mel_destroy(m);
}

static void make_signal(float *x, size_t n)
{
    uint64_t s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double noise = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 0.02;
        double t = (double)i / 16000;
        double env = i < n / 3 ? 1.0 : i < 2 * n / 3 ? 0.2 : 0.6;
        x[i] = (float)(env * (0.3 * sin(2 * 3.141592653589793 * 440 * t) +
                              0.1 * sin(2 * 3.141592653589793 * 2500 * t)) +
                       noise);
        x[i] = (float)lround(x[i] * 32768) / 32768.0f; /* 16-bit PCM values, as read */
    }
}

TEST(mel_matches_torch_reference)
{
    if (ib_test_system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") != 0)
        TEST_SKIP("/usr/bin/python3 with torch and numpy is not installed");
    size_t n = 12345, T = ib_mel_frames(n);
    float *x = ib_malloc(n * sizeof *x);
    make_signal(x, n);
    ib_err err;
    ASSERT_OK(ib_file_write_all("in.f32", x, n * sizeof *x, &err));
    ASSERT_INT_EQ(ib_test_system("/usr/bin/python3 %s/tests/data/rnnt/mel_ref.py in.f32 ref.f32",
                                 ib_test_src_dir()),
                  0);
    char *ref = NULL;
    size_t len = 0;
    ASSERT_OK(ib_file_read_all("ref.f32", 0, &ref, &len, &err));
    ASSERT_UINT_EQ(len, T * IB_MEL_DIM * sizeof(float));
    ib_mel *m = NULL;
    ASSERT_OK(ib_mel_create(&m, &err));
    float *out = ib_malloc(T * IB_MEL_DIM * sizeof *out), *wide = ib_malloc(2 * T * IB_MEL_DIM * 4);
    float *scr = ib_malloc(ib_mel_scratch_floats(n) * sizeof *scr);
    ASSERT_OK(ib_mel_compute(m, x, n, out, IB_MEL_DIM, scr, &err));
    double maxd = 0;
    const float *r = (const float *)(const void *)ref;
    for (size_t i = 0; i < T * IB_MEL_DIM; i++)
        maxd = fmax(maxd, fabs((double)out[i] - (double)r[i]));
    fprintf(stderr, "mel: %zu frames, max |ours - torch| = %.3g\n", T, maxd);
    ASSERT_TRUE(maxd < 5e-4); /* measured 8.7e-5 (float32 FFT and reductions) */
    /* a strided destination (one utterance of a time-major batch of 2) holds the same */
    ASSERT_OK(ib_mel_compute(m, x, n, wide, 2 * IB_MEL_DIM, scr, &err));
    for (size_t t = 0; t < T; t++)
        ASSERT_TRUE(memcmp(wide + t * 2 * IB_MEL_DIM, out + t * IB_MEL_DIM, IB_MEL_DIM * 4) == 0);
    ib_free(ref);
    ib_free(x);
    ib_free(out);
    ib_free(wide);
    ib_free(scr);
    ib_mel_destroy(m);
}
