/*
 * strmap.h - a string -> int64 hash map (open addressing, FNV-1a). Keys are
 * borrowed: they must outlive the map (typically arena strings).
 */
#ifndef IB_BASE_STRMAP_H
#define IB_BASE_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ib_strmap_slot {
    const char *key;
    int64_t value;
} ib_strmap_slot;

typedef struct ib_strmap {
    ib_strmap_slot *slots;
    size_t cap; /* power of two */
    size_t len;
} ib_strmap;

void ib_strmap_init(ib_strmap *m);
void ib_strmap_deinit(ib_strmap *m);
/* Insert or replace; IB_OK or IB_ENOMEM. */
int ib_strmap_put(ib_strmap *m, const char *key, int64_t value);
/* True and *value set when present. */
bool ib_strmap_get(const ib_strmap *m, const char *key, int64_t *value);

#endif
