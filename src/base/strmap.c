/*
 * strmap.c - linear-probing hash map from borrowed C strings to int64.
 * Grows at 50% load; no deletion (not needed by its users).
 */
#include <string.h>

#include "base/common.h"
#include "base/strmap.h"

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) {
        h ^= (unsigned char)*s++;
        h *= 1099511628211ull;
    }
    return h;
}

void ib_strmap_init(ib_strmap *m)
{
    m->slots = NULL;
    m->cap = m->len = 0;
}

void ib_strmap_deinit(ib_strmap *m)
{
    ib_free(m->slots);
    ib_strmap_init(m);
}

static void insert(ib_strmap_slot *slots, size_t cap, const char *key, int64_t value,
                   size_t *len)
{
    size_t i = (size_t)hash(key) & (cap - 1);
    while (slots[i].key) {
        if (strcmp(slots[i].key, key) == 0) {
            slots[i].value = value;
            return;
        }
        i = (i + 1) & (cap - 1);
    }
    slots[i].key = key;
    slots[i].value = value;
    (*len)++;
}

int ib_strmap_put(ib_strmap *m, const char *key, int64_t value)
{
    if ((m->len + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        ib_strmap_slot *s = ib_calloc(cap, sizeof *s);
        if (!s)
            return IB_ENOMEM;
        size_t len = 0;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].key)
                insert(s, cap, m->slots[i].key, m->slots[i].value, &len);
        ib_free(m->slots);
        m->slots = s;
        m->cap = cap;
        m->len = len;
    }
    insert(m->slots, m->cap, key, value, &m->len);
    return IB_OK;
}

bool ib_strmap_get(const ib_strmap *m, const char *key, int64_t *value)
{
    if (!m->cap)
        return false;
    size_t i = (size_t)hash(key) & (m->cap - 1);
    while (m->slots[i].key) {
        if (strcmp(m->slots[i].key, key) == 0) {
            if (value)
                *value = m->slots[i].value;
            return true;
        }
        i = (i + 1) & (m->cap - 1);
    }
    return false;
}
