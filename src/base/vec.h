/*
 * vec.h - a typed growable array by macros over a {data,len,cap} struct.
 *
 *   IB_VEC(int) v = {0};
 *   if (IB_VEC_PUSH(&v, 42)) goto fail;   // returns IB_ENOMEM on failure
 *   ib_free(v.data);
 */
#ifndef IB_BASE_VEC_H
#define IB_BASE_VEC_H

#include <stddef.h>

#include "base/common.h"

#define IB_VEC(T)                                                                                  \
    struct {                                                                                       \
        T *data;                                                                                   \
        size_t len;                                                                                \
        size_t cap;                                                                                \
    }

/* Grow storage for at least n elements of size esz; returns IB_OK/IB_ENOMEM. */
int ib_vec_grow(void **data, size_t *cap, size_t esz, size_t n);

#define IB_VEC_RESERVE(v, n)                                                                       \
    ((n) <= (v)->cap ? IB_OK                                                                       \
                     : ib_vec_grow((void **)&(v)->data, &(v)->cap, sizeof(*(v)->data), (n)))
#define IB_VEC_PUSH(v, x)                                                                          \
    (IB_VEC_RESERVE((v), (v)->len + 1) ? IB_ENOMEM : ((v)->data[(v)->len++] = (x), IB_OK))
#define IB_VEC_FREE(v)                                                                             \
    do {                                                                                           \
        ib_free((v)->data);                                                                        \
        (v)->data = NULL;                                                                          \
        (v)->len = (v)->cap = 0;                                                                   \
    } while (0)

#endif
