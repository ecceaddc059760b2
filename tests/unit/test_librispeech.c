/*
 * test_librispeech.c - RNN-T audio and dataset (src/dataset/audio.c, librispeech.c,
 * synth_librispeech.c): WAV/FLAC round trips at soundfile's scale (PCM / 32768), every
 * audio error (missing, not audio, wrong rate, truncated WAV and FLAC), the synthetic
 * dev-clean read through the manifest and the layout (same utterances, <= 15 s filter,
 * order), and the manifest/layout errors.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "dataset/audio.h"
#include "dataset/librispeech.h"
#include "inferbench/base.h"
#include "test.h"

static void write_text(const char *path, const char *text)
{
    ib_err err;
    ASSERT_OK_ERR(ib_file_write_all(path, text, strlen(text), &err), &err);
}

TEST(audio_roundtrip_wav_flac)
{
    int16_t s[1000];
    for (int i = 0; i < 1000; i++)
        s[i] = (int16_t)((i * 7919) % 65536 - 32768);
    s[0] = -32768;
    s[1] = 32767;
    s[2] = 0;
    ib_err err;
    const char *names[2] = {"a.wav", "a.flac"};
    for (int f = 0; f < 2; f++) {
        ASSERT_OK_ERR(ib_audio_write(names[f], (enum ib_audio_format)f, 16000, s, 1000, &err),
                      &err);
        ib_audio_info ai;
        ASSERT_OK_ERR(ib_audio_probe(names[f], &ai, &err), &err);
        ASSERT_INT_EQ(ai.rate, 16000);
        ASSERT_INT_EQ(ai.channels, 1);
        ASSERT_UINT_EQ(ai.frames, 1000);
        float *x = NULL;
        size_t n = 0;
        ASSERT_OK_ERR(ib_audio_read(names[f], 16000, &x, &n, &err), &err);
        ASSERT_UINT_EQ(n, 1000);
        for (int i = 0; i < 1000; i++)
            ASSERT_DBL_EQ(x[i], s[i] / 32768.0);
        ASSERT_DBL_EQ(x[0], -1.0);
        ib_free(x);
    }
}

TEST(audio_bad_files)
{
    ib_err err;
    float *x = NULL;
    size_t n = 0;
    ASSERT_STATUS(ib_audio_read("missing.wav", 16000, &x, &n, &err), IB_EIO);
    ASSERT_STR_CONTAINS(err.msg, "missing.wav");
    write_text("text.wav", "this is not a RIFF file at all, just some words\n");
    ASSERT_STATUS(ib_audio_read("text.wav", 16000, &x, &n, &err), IB_EFORMAT);
    /* wrong rate: named with the fix */
    int16_t s[32000] = {0};
    for (int i = 0; i < 32000; i++)
        s[i] = (int16_t)(i % 200 * 100 - 10000);
    ASSERT_OK(ib_audio_write("r8k.wav", IB_AUDIO_WAV, 8000, s, 8000, &err));
    ASSERT_STATUS(ib_audio_read("r8k.wav", 16000, &x, &n, &err), IB_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(err.msg, "8000 Hz");
    ASSERT_STR_CONTAINS(err.msg, "sox");
    /* truncated WAV: header says 64,000 data bytes, 40,000 bytes remain */
    ASSERT_OK(ib_audio_write("full.wav", IB_AUDIO_WAV, 16000, s, 32000, &err));
    ASSERT_OK(ib_audio_write("full.flac", IB_AUDIO_FLAC, 16000, s, 32000, &err));
    char *data = NULL;
    size_t len = 0;
    ASSERT_OK(ib_file_read_all("full.wav", 0, &data, &len, &err));
    ASSERT_UINT_EQ(len, 64044);
    ASSERT_OK(ib_file_write_all("cut.wav", data, 40000, &err));
    ib_free(data);
    ASSERT_STATUS(ib_audio_read("cut.wav", 16000, &x, &n, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "truncated");
    /* truncated FLAC: the decoder stops before the frames its STREAMINFO lists */
    ASSERT_OK(ib_file_read_all("full.flac", 0, &data, &len, &err));
    ASSERT_OK(ib_file_write_all("cut.flac", data, len / 2, &err));
    ib_free(data);
    ASSERT_STATUS(ib_audio_read("cut.flac", 16000, &x, &n, &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "truncated");
    ASSERT_NULL(x);
    /* the intact files read */
    ASSERT_OK(ib_audio_read("full.flac", 16000, &x, &n, &err));
    ASSERT_UINT_EQ(n, 32000);
    ib_free(x);
}

TEST(audio_librispeech_synth_both_readers)
{
    ib_err err;
    ASSERT_OK_ERR(ib_librispeech_synthesize("ds", 7, 0.3, 1.0, 5, &err), &err);
    ib_librispeech *m = NULL, *l = NULL;
    ASSERT_OK_ERR(ib_librispeech_open("ds", 0, &m, &err), &err);
    ASSERT_INT_EQ(m->from_manifest, 1);
    ASSERT_UINT_EQ(m->n_listed, 8); /* 7 + the 15.5 s one */
    ASSERT_UINT_EQ(m->n, 7);
    ASSERT_NEAR(m->filtered_seconds, 15.5, 1e-9);
    /* the layout: the same utterances (sorted speaker/chapter order) read from FLAC */
    ASSERT_OK_ERR(ib_librispeech_open("ds/dev-clean", 0, &l, &err), &err);
    ASSERT_INT_EQ(l->from_manifest, 0);
    ASSERT_UINT_EQ(l->n, 7);
    ASSERT_UINT_EQ(l->n_listed, 8);
    size_t matched = 0;
    for (size_t i = 0; i < m->n; i++) {
        ASSERT_TRUE(m->utt[i].duration >= 0.3 && m->utt[i].duration <= 1.0);
        ASSERT_TRUE(strlen(m->utt[i].transcript) > 0);
        const char *base = strrchr(m->utt[i].path, '/') + 1;
        for (size_t j = 0; j < l->n; j++) {
            const char *lb = strrchr(l->utt[j].path, '/') + 1;
            if (strncmp(base, lb, strlen(lb) - 5) != 0)
                continue;
            matched++;
            ASSERT_STR_EQ(m->utt[i].transcript, l->utt[j].transcript);
            ASSERT_UINT_EQ(m->utt[i].num_samples, l->utt[j].num_samples);
            float *a = NULL, *b = NULL;
            size_t na = 0, nb = 0;
            ASSERT_OK(ib_audio_read(m->utt[i].path, 16000, &a, &na, &err));
            ASSERT_OK(ib_audio_read(l->utt[j].path, 16000, &b, &nb, &err));
            ASSERT_UINT_EQ(na, nb);
            ASSERT_UINT_EQ(na, m->utt[i].num_samples);
            ASSERT_TRUE(memcmp(a, b, na * sizeof *a) == 0);
            ib_free(a);
            ib_free(b);
        }
    }
    ASSERT_UINT_EQ(matched, 7);
    /* layout order: speaker 1272 before 2277, chapters ascending */
    ASSERT_STR_CONTAINS(l->utt[0].path, "/1272/128104/");
    ASSERT_STR_CONTAINS(l->utt[l->n - 1].path, "/2277/");
    /* the trans.txt text was upper case; the transcript is normalised */
    for (size_t j = 0; j < l->n; j++)
        for (const char *p = l->utt[j].transcript; *p; p++)
            ASSERT_TRUE((*p >= 'a' && *p <= 'z') || *p == ' ' || *p == '\'');
    /* a smaller limit filters more; the manifest order is kept */
    ib_librispeech *m2 = NULL;
    ASSERT_OK(ib_librispeech_open("ds", 0.6, &m2, &err));
    ASSERT_TRUE(m2->n < 7);
    size_t k = 0;
    for (size_t i = 0; i < m->n && k < m2->n; i++)
        if (strcmp(m->utt[i].path, m2->utt[k].path) == 0)
            k++;
    ASSERT_UINT_EQ(k, m2->n);
    ib_librispeech_free(m);
    ib_librispeech_free(l);
    ib_librispeech_free(m2);
    /* deterministic per seed */
    ASSERT_OK(ib_librispeech_synthesize("ds2", 7, 0.3, 1.0, 5, &err));
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    ASSERT_OK(ib_file_read_all("ds/dev-clean-wav.json", 0, &t1, &n1, &err));
    ASSERT_OK(ib_file_read_all("ds2/dev-clean-wav.json", 0, &t2, &n2, &err));
    ASSERT_UINT_EQ(n1, n2);
    ASSERT_TRUE(memcmp(t1, t2, n1) == 0);
    ib_free(t1);
    ib_free(t2);
    ASSERT_STATUS(ib_librispeech_synthesize("ds3", 0, 0.3, 1.0, 5, &err), IB_EINVAL);
}

static int open_rc(const char *dir, ib_err *err)
{
    ib_librispeech *d = NULL;
    int rc = ib_librispeech_open(dir, 0, &d, err);
    ib_librispeech_free(d);
    return rc;
}

TEST(audio_librispeech_manifest_errors)
{
    ib_err err;
    ASSERT_OK(ib_mkdirs("m", &err));
    ASSERT_OK(ib_mkdirs("m/dev-clean-wav", &err));
    int16_t s[8000] = {0};
    ASSERT_OK(ib_audio_write("m/dev-clean-wav/a.wav", IB_AUDIO_WAV, 16000, s, 8000, &err));
    struct {
        const char *json;
        int rc;
        const char *msg;
    } cases[] = {
        {"{\"files\": []}", IB_EFORMAT, "JSON array"},
        {"[{\"files\": [], \"original_duration\": 0.5, \"transcript\": \"a\"", IB_EFORMAT,
         "invalid JSON"},
        {"[{\"original_duration\": 0.5, \"transcript\": \"a\"}]", IB_EFORMAT, "[0].files"},
        {"[{\"files\": [{\"fname\": \"dev-clean-wav/a.wav\", \"speed\": 1}], \"transcript\": "
         "\"a\"}]",
         IB_EFORMAT, "[0].original_duration"},
        {"[{\"files\": [{\"fname\": \"dev-clean-wav/a.wav\", \"speed\": 1}], "
         "\"original_duration\": 0.5}]",
         IB_EFORMAT, "[0].transcript"},
        {"[{\"files\": [{\"fname\": \"dev-clean-wav/a.wav\", \"speed\": 1.1}], "
         "\"original_duration\": 0.5, \"transcript\": \"a\"}]",
         IB_EFORMAT, "no entry with speed 1"},
        {"[{\"files\": [{\"fname\": 3, \"speed\": 1}], \"original_duration\": 0.5, "
         "\"transcript\": \"a\"}]",
         IB_EFORMAT, "[0].files[0].fname"},
        {"[{\"files\": [{\"fname\": \"dev-clean-wav/a.wav\", \"speed\": 1}], "
         "\"original_duration\": 0.5, \"transcript\": \"a\"}, {\"files\": [{\"fname\": "
         "\"dev-clean-wav/nope.wav\", \"speed\": 1}], \"original_duration\": 0.5, "
         "\"transcript\": \"b\"}]",
         IB_ENOTFOUND, "[1]: audio file"},
        {"[{\"files\": [{\"fname\": \"dev-clean-wav/a.wav\", \"speed\": 1}], "
         "\"original_duration\": 16.0, \"transcript\": \"a\"}]",
         IB_EFORMAT, "no utterances of <= 15.0 s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_text("m/dev-clean-wav.json", cases[i].json);
        ib_err_clear(&err);
        ASSERT_STATUS(open_rc("m", &err), cases[i].rc);
        ASSERT_STR_CONTAINS(err.msg, cases[i].msg);
    }
    /* a > 15 s entry whose file is absent is filtered, not an error (never loaded) */
    write_text("m/dev-clean-wav.json",
               "[{\"files\": [{\"fname\": \"dev-clean-wav/a.wav\", \"speed\": 1}], "
               "\"original_duration\": 0.5, \"transcript\": \"A B.\"}, {\"files\": [{\"fname\": "
               "\"x.wav\", \"speed\": 1}], \"original_duration\": 15.01, \"transcript\": \"b\"}]");
    ib_librispeech *d = NULL;
    ASSERT_OK_ERR(ib_librispeech_open("m", 0, &d, &err), &err);
    ASSERT_UINT_EQ(d->n, 1);
    ASSERT_STR_EQ(d->utt[0].transcript, "a b");
    ASSERT_UINT_EQ(d->utt[0].num_samples, 8000); /* from original_duration (no num_samples) */
    ib_librispeech_free(d);
}

TEST(audio_librispeech_layout_errors)
{
    ib_err err;
    int16_t s[4000] = {0};
    ASSERT_OK(ib_mkdirs("L/84/121123", &err));
    ASSERT_OK(ib_audio_write("L/84/121123/84-121123-0000.flac", IB_AUDIO_FLAC, 16000, s, 4000,
                             &err));
    ASSERT_OK(ib_audio_write("L/84/121123/84-121123-0001.flac", IB_AUDIO_FLAC, 16000, s, 4000,
                             &err));
    /* no trans.txt */
    ASSERT_STATUS(open_rc("L", &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, "84-121123.trans.txt");
    /* a flac without its line */
    write_text("L/84/121123/84-121123.trans.txt", "84-121123-0000 GO DO YOU HEAR\n");
    ASSERT_STATUS(open_rc("L", &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "missing transcript line");
    /* a line without its flac */
    write_text("L/84/121123/84-121123.trans.txt",
               "84-121123-0000 GO DO YOU HEAR\n84-121123-0001 BUT IN LESS THAN FIVE MINUTES\n"
               "84-121123-0002 THE STAIRCASE GROANED\n");
    ASSERT_STATUS(open_rc("L", &err), IB_ENOTFOUND);
    ASSERT_STR_CONTAINS(err.msg, ":3: utterance 84-121123-0002 has no audio file");
    /* malformed lines */
    write_text("L/84/121123/84-121123.trans.txt", "84-121123-0000 GO\n84-121123-0001\n");
    ASSERT_STATUS(open_rc("L", &err), IB_EFORMAT);
    ASSERT_STR_CONTAINS(err.msg, "84-121123.trans.txt:2:");
    write_text("L/84/121123/84-121123.trans.txt", "84-121123-0000 GO\n99-1-0001 X\n");
    ASSERT_STATUS(open_rc("L", &err), IB_EFORMAT);
    /* wrong rate found at open */
    write_text("L/84/121123/84-121123.trans.txt",
               "84-121123-0000 GO DO YOU HEAR\n84-121123-0001 BUT IN LESS\n");
    ASSERT_OK(ib_audio_write("L/84/121123/84-121123-0001.flac", IB_AUDIO_FLAC, 8000, s, 4000,
                             &err));
    ASSERT_STATUS(open_rc("L", &err), IB_EUNSUPPORTED);
    ASSERT_OK(ib_audio_write("L/84/121123/84-121123-0001.flac", IB_AUDIO_FLAC, 16000, s, 4000,
                             &err));
    ib_librispeech *d = NULL;
    ASSERT_OK_ERR(ib_librispeech_open("L", 0, &d, &err), &err);
    ASSERT_UINT_EQ(d->n, 2);
    ASSERT_STR_EQ(d->utt[1].transcript, "but in less");
    ASSERT_NEAR(d->utt[1].duration, 0.25, 1e-12);
    ib_librispeech_free(d);
    /* nothing there */
    ASSERT_OK(ib_mkdirs("empty", &err));
    ASSERT_STATUS(open_rc("empty", &err), IB_EFORMAT);
    ASSERT_STATUS(open_rc("nowhere", &err), IB_ENOTFOUND);
}
