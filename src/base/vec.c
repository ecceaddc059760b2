/*
 * vec.c - storage growth for the IB_VEC macros (geometric, overflow-checked).
 */
#include "base/vec.h"

int ib_vec_grow(void **data, size_t *cap, size_t esz, size_t n)
{
    size_t c = *cap ? *cap : 8;
    while (c < n) {
        if (c > SIZE_MAX / 2)
            return IB_ENOMEM;
        c *= 2;
    }
    if (c > SIZE_MAX / esz)
        return IB_ENOMEM;
    void *p = ib_realloc(*data, c * esz);
    if (!p)
        return IB_ENOMEM;
    *data = p;
    *cap = c;
    return IB_OK;
}
