/*
 * audio.c - WAV/FLAC through libsndfile (audio.h). libsndfile clamps a WAV whose data
 * chunk runs past the end of the file and only notes it in its log ("data : N (should be
 * M)"), so that log is checked; a FLAC decoder that stops early returns fewer frames.
 */
#include <sndfile.h>
#include <string.h>

#include "base/common.h"
#include "dataset/audio.h"

static SNDFILE *open_read(const char *path, SF_INFO *info, ib_err *err, int *rc)
{
    memset(info, 0, sizeof *info);
    SNDFILE *f = sf_open(path, SFM_READ, info);
    if (!f) {
        const char *why = sf_strerror(NULL);
        *rc = strstr(why, "No such file") || strstr(why, "ystem error")
                  ? ib_err_set(err, IB_EIO, "%s: cannot open: %s", path, why)
                  : ib_err_set(err, IB_EFORMAT, "%s: not a WAV or FLAC file libsndfile reads: %s",
                               path, why);
    }
    return f;
}

int ib_audio_probe(const char *path, ib_audio_info *out, ib_err *err)
{
    SF_INFO info;
    int rc = IB_OK;
    SNDFILE *f = open_read(path, &info, err, &rc);
    if (!f)
        return rc;
    out->rate = info.samplerate;
    out->channels = info.channels;
    out->frames = info.frames > 0 ? (uint64_t)info.frames : 0;
    sf_close(f);
    return IB_OK;
}

int ib_audio_read(const char *path, int rate, float **samples, size_t *n, ib_err *err)
{
    *samples = NULL;
    *n = 0;
    SF_INFO info;
    int rc = IB_OK;
    SNDFILE *f = open_read(path, &info, err, &rc);
    if (!f)
        return rc;
    if (info.channels != 1 || info.samplerate != rate) {
        sf_close(f);
        return ib_err_set(err, IB_EUNSUPPORTED,
                          "%s: %d Hz, %d channel(s); the RNN-T reference input is %d Hz mono "
                          "(convert with: sox IN -r %d -c 1 OUT.wav)",
                          path, info.samplerate, info.channels, rate, rate);
    }
    char log[4096] = "";
    sf_command(f, SFC_GET_LOG_INFO, log, sizeof log);
    const char *d = strstr(log, "\ndata");
    const char *nl = d ? strchr(d + 1, '\n') : NULL;
    const char *sb = d ? strstr(d, "should be") : NULL;
    if (sb && (!nl || sb < nl)) {
        sf_close(f);
        return ib_err_set(err, IB_EFORMAT,
                          "%s: truncated: the WAV header's data chunk is longer than the file "
                          "(%.*s)",
                          path, (int)(nl ? nl - d - 1 : 40), d + 1);
    }
    size_t frames = info.frames > 0 ? (size_t)info.frames : 0;
    float *buf = ib_malloc((frames ? frames : 1) * sizeof *buf);
    if (!buf) {
        sf_close(f);
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory for %zu samples", path, frames);
    }
    sf_command(f, SFC_SET_NORM_FLOAT, NULL, SF_TRUE);
    sf_count_t got = sf_readf_float(f, buf, (sf_count_t)frames);
    int e = sf_error(f);
    if (got != (sf_count_t)frames || e != SF_ERR_NO_ERROR) {
        rc = ib_err_set(err, IB_EFORMAT,
                        "%s: truncated or corrupt: %lld of the %zu samples its header lists "
                        "could be decoded (%s)",
                        path, (long long)got, frames, sf_strerror(f));
        sf_close(f);
        ib_free(buf);
        return rc;
    }
    sf_close(f);
    *samples = buf;
    *n = frames;
    return IB_OK;
}

int ib_audio_write(const char *path, enum ib_audio_format fmt, int rate, const int16_t *s,
                   size_t n, ib_err *err)
{
    SF_INFO info;
    memset(&info, 0, sizeof info);
    info.samplerate = rate;
    info.channels = 1;
    info.format = (fmt == IB_AUDIO_FLAC ? SF_FORMAT_FLAC : SF_FORMAT_WAV) | SF_FORMAT_PCM_16;
    SNDFILE *f = sf_open(path, SFM_WRITE, &info);
    if (!f)
        return ib_err_set(err, IB_EIO, "%s: cannot write: %s", path, sf_strerror(NULL));
    sf_count_t w = sf_write_short(f, s, (sf_count_t)n);
    int rc = IB_OK;
    if (w != (sf_count_t)n)
        rc = ib_err_set(err, IB_EIO, "%s: short write (%lld of %zu samples): %s", path,
                        (long long)w, n, sf_strerror(f));
    if (sf_close(f) && !rc)
        rc = ib_err_set(err, IB_EIO, "%s: cannot finish the file", path);
    return rc;
}
