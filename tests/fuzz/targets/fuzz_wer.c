/*
 * fuzz_wer.c - libFuzzer target for the RNN-T text path (src/metrics/wer.c): the input is
 * two texts separated by the first NUL byte (hypothesis, reference), arbitrary bytes
 * (invalid UTF-8 included). Normalised text must hold only the 28 labels (a space may
 * remain at an end: the reference strips before it drops non-labels); the word distance must be 0 against itself, symmetric, and at most the longer
 * word count.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inferbench/base.h"
#include "metrics/wer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dup_n(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

static void check_norm(const char *n)
{
    size_t l = strlen(n);
    for (size_t i = 0; i < l; i++)
        if (!strchr(IB_TRANSCRIPT_LABELS, n[i]))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t a = nul ? (size_t)(nul - data) : size;
    char *h = dup_n(data, a), *r = dup_n(nul ? nul + 1 : data + size, nul ? size - a - 1 : 0);
    if (!h || !r)
        abort();
    char *nh = ib_transcript_normalize(h), *nr = ib_transcript_normalize(r);
    if (!nh || !nr)
        abort();
    check_norm(nh);
    check_norm(nr);
    size_t d1 = 0, w1 = 0, d2 = 0, w2 = 0, d0 = 0, w0 = 0;
    if (ib_wer_distance(nh, nr, &d1, &w1) || ib_wer_distance(nr, nh, &d2, &w2) ||
        ib_wer_distance(nh, nh, &d0, &w0))
        abort();
    if (d1 != d2 || d0 != 0 || d1 > (w1 > w2 ? w1 : w2))
        abort();
    ib_free(nh);
    ib_free(nr);
    free(h);
    free(r);
    return 0;
}
