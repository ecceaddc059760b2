/*
 * audio.h - 16-bit PCM audio files through libsndfile (WAV and FLAC), for the RNN-T
 * dataset (benchmarks.md §1.5, §5): the reference reads them with soundfile as float32
 * (parts/segment.py AudioSegment.from_file: sf.read(dtype="float32"), i.e. PCM / 32768).
 *
 * Thread-safety: independent calls may run on several threads (libsndfile handles are
 * per call).
 */
#ifndef IB_DATASET_AUDIO_H
#define IB_DATASET_AUDIO_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"

enum ib_audio_format {
    IB_AUDIO_WAV = 0,  /* RIFF WAVE, PCM 16 */
    IB_AUDIO_FLAC = 1, /* FLAC, 16 bit */
};

typedef struct ib_audio_info {
    int rate;
    int channels;
    uint64_t frames;
} ib_audio_info;

/* Header only: rate, channels, frames. Errors: IB_EIO (missing), IB_EFORMAT (not audio). */
int ib_audio_probe(const char *path, ib_audio_info *out, ib_err *err);

/*
 * ib_audio_read - the whole file as float32 (sample / 32768 for 16-bit PCM, as soundfile
 * reads it). The file must be mono at `rate` Hz (16000 for LibriSpeech): the reference
 * resamples other rates with librosa, which is not reproduced here, so another rate, or
 * more than one channel, is IB_EUNSUPPORTED naming the file and the fix (sox -r 16000 -c 1).
 * A file shorter than its header says (a truncated WAV data chunk, a FLAC stream that ends
 * early or loses sync) is IB_EFORMAT. *samples: ib_free.
 */
int ib_audio_read(const char *path, int rate, float **samples, size_t *n, ib_err *err);

/* Write n mono 16-bit samples at `rate` Hz as WAV or FLAC. */
int ib_audio_write(const char *path, enum ib_audio_format fmt, int rate, const int16_t *s,
                   size_t n, ib_err *err);

#endif
