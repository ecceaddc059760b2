/*
 * textdist.h - "did you mean" support: the Levenshtein distance of two short strings and
 * the closest of a set of candidates. Used for user.conf keys, CLI options and commands.
 */
#ifndef IB_BASE_TEXTDIST_H
#define IB_BASE_TEXTDIST_H

#include <stddef.h>

/* Levenshtein distance of a and b (insert, delete, substitute, each 1); strings longer
 * than 63 bytes count as far apart (returns 99). Thread-safety: reentrant. */
size_t ib_edit_distance(const char *a, const char *b);

/* The candidate closest to name at a distance below max_dist (the first on ties), or NULL.
 * NULL entries of cands are skipped. */
const char *ib_closest(const char *name, const char *const *cands, size_t n, size_t max_dist);

#endif
