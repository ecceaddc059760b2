/*
 * synth_librispeech.c - a SYNTHETIC LibriSpeech dev-clean (librispeech.h): made-up
 * transcripts over the 28-character alphabet and audio of tones, noise and silence, written
 * as real FLAC files in the original layout and as WAV files with the reference manifest
 * (the shape utils/convert_librispeech.py writes), so both readers run on it. The audio
 * carries no speech: a model cannot transcribe it; it exercises loading, features,
 * batching and decoding.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "base/rng.h"
#include "base/strbuf.h"
#include "dataset/audio.h"
#include "dataset/librispeech.h"

static double unif(uint64_t *s)
{
    return (double)(ib_splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

static const char *const k_words[] = {
    "THE", "AND", "OF", "HE", "WAS", "BARLEN", "MOROSK", "TIVE", "QUALM", "ZEPHRIN",
    "JOX", "WIFE'S", "DON'T", "KELVA", "SUNDER", "PRAIM", "OVERLY", "YAWN", "GLIB", "NIX",
};

/* Tones, noise and silence in 0.1..0.5 s segments, 16-bit. */
static void make_audio(int16_t *a, size_t n, uint64_t *rng)
{
    size_t i = 0;
    while (i < n) {
        size_t seg = (size_t)(IB_LIBRI_RATE * (0.1 + 0.4 * unif(rng)));
        if (seg > n - i)
            seg = n - i;
        unsigned kind = (unsigned)(ib_splitmix64(rng) % 3);
        double f1 = 100 + 3900 * unif(rng), f2 = 100 + 3900 * unif(rng);
        double amp = 0.05 + 0.4 * unif(rng);
        for (size_t k = 0; k < seg; k++, i++) {
            double t = (double)i / IB_LIBRI_RATE, v = 0;
            if (kind == 0)
                v = amp * (0.6 * sin(2 * 3.14159265358979323846 * f1 * t) + 0.4 * sin(2 * 3.14159265358979323846 * f2 * t));
            else if (kind == 1)
                v = amp * (2 * unif(rng) - 1);
            else
                v = 0.001 * (2 * unif(rng) - 1); /* near-silence */
            long q = lround(v * 32767);
            a[i] = (int16_t)(q > 32767 ? 32767 : q < -32768 ? -32768 : q);
        }
    }
}

int ib_librispeech_synthesize(const char *dir, size_t n_kept, double min_s, double max_s,
                              uint64_t seed, ib_err *err)
{
    if (strlen(dir) > 3000 || n_kept == 0 || min_s <= 0 || max_s < min_s || max_s > IB_LIBRI_MAX_DURATION)
        return ib_err_set(err, IB_EINVAL,
                          "librispeech synth: need >= 1 utterance of 0 < min <= max <= 15 s");
    uint64_t rng = seed ^ 0x6c69627269737065ull; /* "librispe" */
    size_t total = n_kept + 1, long_at = n_kept / 2; /* one > 15 s utterance in the middle */
    json_t *manifest = json_array();
    int16_t *pcm = ib_malloc(sizeof *pcm * (size_t)(15.5 * IB_LIBRI_RATE + 1));
    ib_strbuf trans[4];
    for (int c = 0; c < 4; c++)
        ib_strbuf_init(&trans[c]);
    int rc = manifest && pcm ? IB_OK : ib_err_set(err, IB_ENOMEM, "out of memory");
    static const long spk[2] = {1272, 2277}, chs[2][2] = {{128104, 135031}, {149896, 149897}};
    size_t per_ch[4] = {0, 0, 0, 0};
    for (size_t u = 0; u < total && !rc; u++) {
        int c = (int)(u % 4), s = c / 2;
        long ch = chs[s][c % 2];
        char rel[512], flac_dir[4096], wav_dir[4096], path[4300];
        snprintf(rel, sizeof rel, "%ld/%ld", spk[s], ch);
        char id[64];
        snprintf(id, sizeof id, "%ld-%ld-%04zu", spk[s], ch, per_ch[c]++);
        double dur = u == long_at ? 15.5 : min_s + (max_s - min_s) * unif(&rng);
        size_t n = (size_t)(dur * IB_LIBRI_RATE);
        make_audio(pcm, n, &rng);
        char text[256] = "", lower[256];
        size_t nw = 2 + (size_t)(ib_splitmix64(&rng) % 7);
        for (size_t w = 0; w < nw; w++) {
            if (w)
                strcat(text, " ");
            strcat(text, k_words[ib_splitmix64(&rng) % IB_ARRAY_LEN(k_words)]);
        }
        for (size_t k = 0; k <= strlen(text); k++)
            lower[k] = (char)(text[k] >= 'A' && text[k] <= 'Z' ? text[k] - 'A' + 'a' : text[k]);
        snprintf(flac_dir, sizeof flac_dir, "%s/dev-clean/%s", dir, rel);
        snprintf(wav_dir, sizeof wav_dir, "%s/dev-clean-wav/%s", dir, rel);
        if ((rc = ib_mkdirs(flac_dir, err)) || (rc = ib_mkdirs(wav_dir, err)))
            break;
        snprintf(path, sizeof path, "%s/%s.flac", flac_dir, id);
        if ((rc = ib_audio_write(path, IB_AUDIO_FLAC, IB_LIBRI_RATE, pcm, n, err)))
            break;
        snprintf(path, sizeof path, "%s/%s.wav", wav_dir, id);
        if ((rc = ib_audio_write(path, IB_AUDIO_WAV, IB_LIBRI_RATE, pcm, n, err)))
            break;
        if (ib_strbuf_printf(&trans[c], "%s %s\n", id, text)) {
            rc = ib_err_set(err, IB_ENOMEM, "out of memory");
            break;
        }
        /* the manifest entry as preprocessing_utils.py writes it (sox file_info fields) */
        char fname[600];
        snprintf(fname, sizeof fname, "dev-clean-wav/%s/%s.wav", rel, id);
        double d = (double)n / IB_LIBRI_RATE;
        json_t *file = json_pack("{s:i,s:f,s:i,s:f,s:I,s:s,s:b,s:s,s:i}", "channels", 1,
                                 "sample_rate", 16000.0, "bitrate", 16, "duration", d,
                                 "num_samples", (json_int_t)n, "encoding", "Signed Integer PCM",
                                 "silent", 0, "fname", fname, "speed", 1);
        json_t *e = json_pack("{s:[o],s:f,s:I,s:s}", "files", file, "original_duration", d,
                              "original_num_samples", (json_int_t)n, "transcript", lower);
        if (!file || !e || json_array_append_new(manifest, e)) {
            rc = ib_err_set(err, IB_ENOMEM, "out of memory");
            break;
        }
    }
    for (int c = 0; c < 4 && !rc; c++) {
        if (!trans[c].len)
            continue;
        int s = c / 2;
        char path[4096];
        snprintf(path, sizeof path, "%s/dev-clean/%ld/%ld/%ld-%ld.trans.txt", dir, spk[s],
                 chs[s][c % 2], spk[s], chs[s][c % 2]);
        rc = ib_file_write_all(path, trans[c].data, trans[c].len, err);
    }
    if (!rc) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, IB_LIBRI_MANIFEST);
        if (json_dump_file(manifest, path, JSON_INDENT(2)))
            rc = ib_err_set(err, IB_EIO, "%s: cannot write", path);
    }
    for (int c = 0; c < 4; c++)
        ib_strbuf_deinit(&trans[c]);
    json_decref(manifest);
    ib_free(pcm);
    return rc;
}
