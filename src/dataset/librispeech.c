/*
 * librispeech.c - the RNN-T dataset reader (librispeech.h): the reference manifest through
 * jansson (parts/manifest.py Manifest: files[] entry with speed 1, original_duration,
 * transcript) or the dev-clean layout (utils/convert_librispeech.py build_input_arr: one
 * utterance per trans.txt line "<id> TEXT", audio <id>.flac in the same folder).
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/common.h"
#include "base/fileio.h"
#include "dataset/audio.h"
#include "dataset/librispeech.h"
#include "text/transcript.h"

typedef struct builder {
    ib_librispeech *d;
    size_t cap;
    double max_s;
} builder;

static int add_utt(builder *b, const char *path, const char *raw_text, uint64_t num_samples,
                   double duration, ib_err *err)
{
    ib_librispeech *d = b->d;
    d->n_listed++;
    /* Manifest: `if max_duration is not None and data["duration"] > max_duration` drops it */
    if (duration > b->max_s) {
        d->filtered_seconds += duration;
        return IB_OK;
    }
    if (d->n == b->cap) {
        size_t nc = b->cap ? 2 * b->cap : 64;
        ib_libri_utt *u = ib_realloc(d->utt, nc * sizeof *u);
        if (!u)
            return ib_err_set(err, IB_ENOMEM, "librispeech: out of memory");
        d->utt = u;
        b->cap = nc;
    }
    ib_libri_utt *u = &d->utt[d->n];
    u->path = ib_strdup(path);
    u->transcript = ib_transcript_normalize(raw_text);
    u->num_samples = num_samples;
    u->duration = duration;
    if (!u->path || !u->transcript) {
        ib_free(u->path);
        ib_free(u->transcript);
        return ib_err_set(err, IB_ENOMEM, "librispeech: out of memory");
    }
    d->n++;
    d->kept_seconds += duration;
    return IB_OK;
}

void ib_librispeech_free(ib_librispeech *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        ib_free(d->utt[i].path);
        ib_free(d->utt[i].transcript);
    }
    ib_free(d->utt);
    ib_free(d);
}

/* ---- the reference manifest ------------------------------------------------------------- */

static int manifest_entry(builder *b, const char *dir, const char *mpath, size_t i, json_t *e,
                          ib_err *err)
{
    if (!json_is_object(e))
        return ib_err_set(err, IB_EFORMAT, "%s: [%zu]: expected an object", mpath, i);
    json_t *files = json_object_get(e, "files"), *dur = json_object_get(e, "original_duration");
    json_t *tr = json_object_get(e, "transcript");
    if (!json_is_array(files))
        return ib_err_set(err, IB_EFORMAT, "%s: [%zu].files: missing or not an array", mpath, i);
    if (!json_is_number(dur))
        return ib_err_set(err, IB_EFORMAT, "%s: [%zu].original_duration: missing or not a number",
                          mpath, i);
    if (!json_is_string(tr))
        return ib_err_set(err, IB_EFORMAT,
                          "%s: [%zu].transcript: missing or not a string (text_filepath "
                          "manifests are not read; inline the transcript)",
                          mpath, i);
    /* Manifest(filter_speed=1.0): the files[] entry whose speed is 1; the QSL reads [0] */
    const char *fname = NULL;
    uint64_t ns = 0;
    size_t k;
    json_t *f;
    json_array_foreach(files, k, f)
    {
        json_t *sp = json_object_get(f, "speed"), *fn = json_object_get(f, "fname");
        if (!json_is_number(sp))
            return ib_err_set(err, IB_EFORMAT, "%s: [%zu].files[%zu].speed: missing or not a number",
                              mpath, i, k);
        if (json_number_value(sp) != 1.0)
            continue;
        if (!json_is_string(fn))
            return ib_err_set(err, IB_EFORMAT, "%s: [%zu].files[%zu].fname: missing or not a string",
                              mpath, i, k);
        fname = json_string_value(fn);
        json_t *nsj = json_object_get(f, "num_samples");
        if (json_is_integer(nsj) && json_integer_value(nsj) >= 0)
            ns = (uint64_t)json_integer_value(nsj);
        break;
    }
    if (!fname)
        return ib_err_set(err, IB_EFORMAT, "%s: [%zu].files: no entry with speed 1", mpath, i);
    double duration = json_number_value(dur);
    if (!ns)
        ns = (uint64_t)(duration * IB_LIBRI_RATE + 0.5);
    char path[4096];
    if (ib_path_join(path, sizeof path, dir, fname))
        return ib_err_set(err, IB_EINVAL, "%s: [%zu].files: path too long", mpath, i);
    if (duration <= b->max_s && !ib_path_exists(path))
        return ib_err_set(err, IB_ENOTFOUND, "%s: [%zu]: audio file %s does not exist", mpath, i,
                          path);
    return add_utt(b, path, json_string_value(tr), ns, duration, err);
}

static int open_manifest(builder *b, const char *dir, const char *mpath, ib_err *err)
{
    json_error_t je;
    json_t *root = json_load_file(mpath, 0, &je);
    if (!root)
        return ib_err_set(err, IB_EFORMAT, "%s:%d:%d: invalid JSON: %s", mpath, je.line,
                          je.column, je.text);
    int rc = IB_OK;
    if (!json_is_array(root))
        rc = ib_err_set(err, IB_EFORMAT, "%s: expected a JSON array of utterances (the "
                                         "dev-clean-wav.json shape)",
                        mpath);
    size_t i;
    json_t *e;
    if (!rc)
        json_array_foreach(root, i, e)
        {
            if ((rc = manifest_entry(b, dir, mpath, i, e, err)))
                break;
        }
    json_decref(root);
    b->d->from_manifest = 1;
    return rc;
}

/* ---- the dev-clean layout ----------------------------------------------------------------- */

/* Numeric sub-folder names of dir, sorted by value. */
static int list_numeric(const char *dir, long **out, size_t *n, ib_err *err)
{
    *out = NULL;
    *n = 0;
    DIR *dh = opendir(dir);
    if (!dh)
        return ib_err_set(err, IB_EIO, "%s: cannot list the folder", dir);
    size_t cap = 0;
    struct dirent *de;
    int rc = IB_OK;
    while ((de = readdir(dh))) {
        char *end = NULL;
        long v = strtol(de->d_name, &end, 10);
        char sub[4096];
        if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end || v < 0 ||
            ib_path_join(sub, sizeof sub, dir, de->d_name) || !ib_path_is_dir(sub))
            continue;
        if (*n == cap) {
            size_t nc = cap ? 2 * cap : 16;
            long *p = ib_realloc(*out, nc * sizeof *p);
            if (!p) {
                rc = ib_err_set(err, IB_ENOMEM, "librispeech: out of memory");
                break;
            }
            *out = p;
            cap = nc;
        }
        (*out)[(*n)++] = v;
    }
    closedir(dh);
    for (size_t i = 1; i < *n; i++) /* insertion sort: a few dozen names */
        for (size_t j = i; j > 0 && (*out)[j - 1] > (*out)[j]; j--) {
            long t = (*out)[j];
            (*out)[j] = (*out)[j - 1];
            (*out)[j - 1] = t;
        }
    return rc;
}

static int chapter(builder *b, const char *cdir, long spk, long ch, ib_err *err)
{
    char tpath[4096], name[128];
    snprintf(name, sizeof name, "%ld-%ld.trans.txt", spk, ch);
    if (ib_path_join(tpath, sizeof tpath, cdir, name))
        return ib_err_set(err, IB_EINVAL, "%s: path too long", cdir);
    char *text = NULL;
    size_t len = 0;
    int rc = ib_file_read_all(tpath, 64u << 20, &text, &len, err);
    if (rc)
        return ib_err_set(err, rc == IB_EIO ? IB_ENOTFOUND : rc,
                          "%s: no transcript file %s for this chapter", cdir, name);
    size_t lines = 0, listed0 = b->d->n_listed;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%ld-%ld-", spk, ch);
    for (char *line = text, *next; line && *line && !rc; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lines++;
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[--l] = '\0';
        if (!l)
            continue;
        /* build_input_arr: fname, _, transcript = line.partition(" ") */
        char *sp = strchr(line, ' ');
        size_t pl = strlen(prefix);
        if (!sp || (size_t)(sp - line) <= pl || strncmp(line, prefix, pl) != 0) {
            rc = ib_err_set(err, IB_EFORMAT,
                            "%s:%zu: expected \"%sNNNN TRANSCRIPT\" (utterance id, one space, "
                            "the text)",
                            tpath, lines, prefix);
            break;
        }
        *sp = '\0';
        char apath[4096], fname[300];
        snprintf(fname, sizeof fname, "%s.flac", line);
        if (ib_path_join(apath, sizeof apath, cdir, fname)) {
            rc = ib_err_set(err, IB_EINVAL, "%s: path too long", cdir);
            break;
        }
        ib_audio_info ai;
        if (!ib_path_exists(apath)) {
            rc = ib_err_set(err, IB_ENOTFOUND, "%s:%zu: utterance %s has no audio file %s",
                            tpath, lines, line, apath);
            break;
        }
        if ((rc = ib_audio_probe(apath, &ai, err)))
            break;
        if (ai.rate != IB_LIBRI_RATE || ai.channels != 1) {
            rc = ib_err_set(err, IB_EUNSUPPORTED,
                            "%s: %d Hz, %d channel(s); RNN-T takes %d Hz mono (sox IN -r 16000 "
                            "-c 1 OUT)",
                            apath, ai.rate, ai.channels, IB_LIBRI_RATE);
            break;
        }
        rc = add_utt(b, apath, sp + 1, ai.frames, (double)ai.frames / IB_LIBRI_RATE, err);
    }
    ib_free(text);
    if (rc)
        return rc;
    /* every .flac of the chapter needs its transcript line */
    size_t flacs = 0;
    DIR *dh = opendir(cdir);
    struct dirent *de;
    while (dh && (de = readdir(dh))) {
        size_t l = strlen(de->d_name);
        if (l > 5 && strcmp(de->d_name + l - 5, ".flac") == 0)
            flacs++;
    }
    if (dh)
        closedir(dh);
    size_t listed = b->d->n_listed - listed0;
    if (flacs != listed)
        return ib_err_set(err, IB_EFORMAT,
                          "%s: %zu .flac files but %zu transcript lines in %s (a missing "
                          "transcript line?)",
                          cdir, flacs, listed, name);
    return IB_OK;
}

static int open_layout(builder *b, const char *root, ib_err *err)
{
    long *spk = NULL;
    size_t ns = 0;
    int rc = list_numeric(root, &spk, &ns, err);
    for (size_t i = 0; i < ns && !rc; i++) {
        char sdir[4096], num[32];
        snprintf(num, sizeof num, "%ld", spk[i]);
        if (ib_path_join(sdir, sizeof sdir, root, num)) {
            rc = ib_err_set(err, IB_EINVAL, "%s: path too long", root);
            break;
        }
        long *chs = NULL;
        size_t nc = 0;
        rc = list_numeric(sdir, &chs, &nc, err);
        for (size_t j = 0; j < nc && !rc; j++) {
            char cdir[4096];
            snprintf(num, sizeof num, "%ld", chs[j]);
            if (ib_path_join(cdir, sizeof cdir, sdir, num))
                rc = ib_err_set(err, IB_EINVAL, "%s: path too long", sdir);
            else
                rc = chapter(b, cdir, spk[i], chs[j], err);
        }
        ib_free(chs);
    }
    ib_free(spk);
    return rc;
}

int ib_librispeech_open(const char *dir, double max_duration, ib_librispeech **out, ib_err *err)
{
    *out = NULL;
    builder b = {ib_calloc(1, sizeof(ib_librispeech)), 0,
                 max_duration > 0 ? max_duration : IB_LIBRI_MAX_DURATION};
    if (!b.d)
        return ib_err_set(err, IB_ENOMEM, "librispeech: out of memory");
    char path[4096];
    int rc = ib_path_join(path, sizeof path, dir, IB_LIBRI_MANIFEST);
    if (rc) {
        rc = ib_err_set(err, IB_EINVAL, "%s: path too long", dir);
    } else if (ib_path_exists(path)) {
        rc = open_manifest(&b, dir, path, err);
    } else if (!ib_path_is_dir(dir)) {
        rc = ib_err_set(err, IB_ENOTFOUND, "%s: no such folder", dir);
    } else {
        char sub[4096];
        int has_sub = !ib_path_join(sub, sizeof sub, dir, "dev-clean") && ib_path_is_dir(sub);
        rc = open_layout(&b, has_sub ? sub : dir, err);
    }
    if (!rc && b.d->n == 0)
        rc = ib_err_set(err, IB_EFORMAT,
                        "%s: no utterances of <= %.1f s (expected %s or the dev-clean layout "
                        "<spk>/<chapter>/*.flac + *.trans.txt; %zu listed)",
                        dir, b.max_s, IB_LIBRI_MANIFEST, b.d->n_listed);
    if (rc) {
        ib_librispeech_free(b.d);
        return rc;
    }
    *out = b.d;
    return IB_OK;
}
