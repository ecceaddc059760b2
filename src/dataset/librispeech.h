/*
 * librispeech.h - LibriSpeech dev-clean for RNN-T (benchmarks.md §1.5, §5): the reference
 * JSON manifest (dev-clean-wav.json as utils/convert_librispeech.py writes it) or the
 * original layout (<spk>/<chapter>/<spk>-<chapter>-<utt>.flac + <spk>-<chapter>.trans.txt),
 * the <= 15 s filter of the reference QSL (Manifest(max_duration=15.0): an utterance is
 * dropped when its duration is > 15.0 s), transcripts normalised as parts/manifest.py
 * (metrics/wer.h), and the synthetic generator (synth_librispeech.c).
 *
 * Sample order (= qsl_idx): manifest order after the filter, as the reference QSL. The
 * original layout has no order of its own (the reference manifest lists files in the
 * order glob() met them on the converting machine), so without a manifest the order is
 * sorted speaker, chapter (numerically), then trans.txt line order; such a run cannot be
 * compared index by index with the reference's accuracy log.
 *
 * Thread-safety: an opened set is read-only; several threads may read it.
 */
#ifndef IB_DATASET_LIBRISPEECH_H
#define IB_DATASET_LIBRISPEECH_H

#include <stddef.h>
#include <stdint.h>

#include "inferbench/status.h"

#define IB_LIBRI_RATE 16000
#define IB_LIBRI_MAX_DURATION 15.0 /* QSL.py: Manifest(..., max_duration=15.0) */
#define IB_LIBRI_MANIFEST "dev-clean-wav.json"

typedef struct ib_libri_utt {
    char *path;        /* audio file (absolute or relative to the cwd) */
    char *transcript;  /* normalised (28-label alphabet) */
    uint64_t num_samples;
    double duration;   /* seconds (original_duration, or num_samples / 16000) */
} ib_libri_utt;

typedef struct ib_librispeech {
    size_t n;          /* kept utterances, qsl order */
    ib_libri_utt *utt;
    size_t n_listed;   /* before the duration filter */
    double kept_seconds, filtered_seconds;
    int from_manifest; /* 1: manifest order; 0: sorted layout order */
} ib_librispeech;

/*
 * ib_librispeech_open - dir/dev-clean-wav.json when present (file paths relative to dir,
 * as the reference joins dataset_dir and fname), else the layout under dir (or under
 * dir/dev-clean). Errors (IB_EFORMAT unless said): JSON that is not the manifest shape
 * (the message names the JSON path, e.g. "[3].files[0].fname"), a listed audio file that
 * is missing (IB_ENOTFOUND), a .flac without a transcript line, a transcript line without
 * its .flac, a malformed trans.txt line (file:line), no utterances at all.
 * max_duration <= 0 means IB_LIBRI_MAX_DURATION. *out: ib_librispeech_free.
 */
int ib_librispeech_open(const char *dir, double max_duration, ib_librispeech **out, ib_err *err);
void ib_librispeech_free(ib_librispeech *d);

/*
 * ib_librispeech_synthesize - a SYNTHETIC dev-clean in both real formats under dir:
 * dev-clean/<spk>/<chapter>/<id>.flac + <spk>-<chapter>.trans.txt (upper-case made-up words) and
 * dev-clean-wav/... .wav + dev-clean-wav.json in the reference manifest shape; n_kept
 * utterances of tones, noise and silence between min_s and max_s seconds (<= 15), plus one
 * of 15.5 s that the filter drops. 16 kHz mono 16-bit. IB_EINVAL for n_kept == 0.
 */
int ib_librispeech_synthesize(const char *dir, size_t n_kept, double min_s, double max_s,
                              uint64_t seed, ib_err *err);

#endif
