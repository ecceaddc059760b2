/*
 * alloc.c - the replaceable allocator behind ib_malloc/ib_free.
 *
 * The hook is process-wide (like libuv's uv_replace_allocator) so that tests
 * can inject allocation failures. The default hook is libc malloc/realloc/free.
 */
#include <stdlib.h>
#include <string.h>

#include "base/common.h"

static void *default_alloc(void *user, void *ptr, size_t old_size, size_t new_size)
{
    IB_UNUSED(user);
    IB_UNUSED(old_size);
    if (new_size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, new_size);
}

static ib_alloc_fn g_alloc = default_alloc;
static void *g_alloc_user;

void ib_alloc_set(ib_alloc_fn fn, void *user)
{
    g_alloc = fn ? fn : default_alloc;
    g_alloc_user = fn ? user : NULL;
}

void *ib_malloc(size_t size)
{
    return g_alloc(g_alloc_user, NULL, 0, size ? size : 1);
}

void *ib_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    void *p = ib_malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *ib_realloc(void *ptr, size_t size)
{
    return g_alloc(g_alloc_user, ptr, 0, size ? size : 1);
}

void ib_free(void *ptr)
{
    if (ptr)
        g_alloc(g_alloc_user, ptr, 0, 0);
}

char *ib_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = ib_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
