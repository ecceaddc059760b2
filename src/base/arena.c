/*
 * arena.c - chunked bump allocation; chunks are kept on a list and released
 * together by ib_arena_deinit.
 */
#include <string.h>

#include "base/arena.h"
#include "base/common.h"

struct ib_arena_chunk {
    ib_arena_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void ib_arena_init(ib_arena *a, size_t chunk_size)
{
    a->head = NULL;
    a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
    a->total = 0;
}

void ib_arena_deinit(ib_arena *a)
{
    ib_arena_chunk *c = a->head;
    while (c) {
        ib_arena_chunk *n = c->next;
        ib_free(c);
        c = n;
    }
    a->head = NULL;
    a->total = 0;
}

void *ib_arena_alloc(ib_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size == 0)
        size = 16;
    ib_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > a->chunk_size ? size : a->chunk_size;
        if (cap > SIZE_MAX - sizeof *c)
            return NULL;
        c = ib_malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->used = 0;
        c->cap = cap;
        /* big one-off chunks go behind the head so the head keeps its free space */
        if (a->head && size > a->chunk_size) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->data + c->used;
    c->used += size;
    a->total += size;
    memset(p, 0, size);
    return p;
}

void *ib_arena_memdup(ib_arena *a, const void *p, size_t n)
{
    void *d = ib_arena_alloc(a, n);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

char *ib_arena_strndup(ib_arena *a, const char *s, size_t n)
{
    char *d = ib_arena_alloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *ib_arena_strdup(ib_arena *a, const char *s)
{
    return s ? ib_arena_strndup(a, s, strlen(s)) : NULL;
}
