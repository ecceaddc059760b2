/*
 * textdist.c - Levenshtein distance over one row pair on the stack (names are short) and
 * the nearest candidate (textdist.h).
 */
#include "base/textdist.h"

#include <string.h>

#include "base/common.h"

size_t ib_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    size_t prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = IB_MIN(sub, IB_MIN(del, ins));
        }
        memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
    }
    return prev[lb];
}

const char *ib_closest(const char *name, const char *const *cands, size_t n, size_t max_dist)
{
    const char *best = NULL;
    size_t bd = max_dist;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i])
            continue;
        size_t d = ib_edit_distance(name, cands[i]);
        if (d < bd) {
            bd = d;
            best = cands[i];
        }
    }
    return best;
}
