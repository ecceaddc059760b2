/*
 * arena.h - a bump allocator for metadata that lives and dies together
 * (model graphs, parsed configs). Freed in one call (ggml context style).
 * Not thread-safe; one owner.
 */
#ifndef IB_BASE_ARENA_H
#define IB_BASE_ARENA_H

#include <stddef.h>

typedef struct ib_arena_chunk ib_arena_chunk;
typedef struct ib_arena {
    ib_arena_chunk *head;
    size_t chunk_size; /* default 64 KiB; larger requests get their own chunk */
    size_t total;      /* bytes handed out */
} ib_arena;

void ib_arena_init(ib_arena *a, size_t chunk_size);
void ib_arena_deinit(ib_arena *a);
/* 16-byte aligned, zero-filled; NULL on OOM. */
void *ib_arena_alloc(ib_arena *a, size_t size);
char *ib_arena_strdup(ib_arena *a, const char *s);
char *ib_arena_strndup(ib_arena *a, const char *s, size_t n);
void *ib_arena_memdup(ib_arena *a, const void *p, size_t n);

#endif
