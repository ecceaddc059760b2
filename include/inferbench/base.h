/*
 * base.h - process-wide hooks of the inferbench libraries: the allocator and
 * the diagnostic log sink.
 *
 * These are the only two process-wide settings (as in libuv's
 * uv_replace_allocator and ggml_log_set); everything else lives in handles.
 * Install them before creating any object and do not change them while
 * objects exist.
 */
#ifndef INFERBENCH_BASE_H
#define INFERBENCH_BASE_H

#include <stddef.h>

#include "export.h"

IB_EXTERN_C_BEGIN

/*
 * Allocator callback, realloc-style (lua_Alloc): ptr NULL means allocate,
 * new_size 0 means free (return NULL), otherwise resize. old_size is the size
 * of the block when known, else 0. Must be thread-safe.
 */
typedef void *(*ib_alloc_fn)(void *user, void *ptr, size_t old_size, size_t new_size);

/* ib_alloc_set - replace the allocator; NULL restores the libc one. */
IB_API void ib_alloc_set(ib_alloc_fn fn, void *user);

/* ib_malloc/ib_calloc/ib_realloc/ib_free - allocate through the current hook.
 * Memory from these must be released with ib_free. */
IB_API void *ib_malloc(size_t size);
IB_API void *ib_calloc(size_t count, size_t size);
IB_API void *ib_realloc(void *ptr, size_t size);
IB_API void ib_free(void *ptr);
IB_API char *ib_strdup(const char *s);

enum ib_log_level {
    IB_LOG_LEVEL_ERROR = 0,
    IB_LOG_LEVEL_WARN = 1,
    IB_LOG_LEVEL_INFO = 2,
    IB_LOG_LEVEL_DEBUG = 3,
};

/* Log sink: receives one formatted line without trailing newline. */
typedef void (*ib_log_fn)(void *user, enum ib_log_level level, const char *func, const char *msg);

/* ib_log_set - install a sink (NULL = default: stderr, levels <= max_level). */
IB_API void ib_log_set(ib_log_fn fn, void *user);

/* ib_log_set_level - most verbose level the default sink prints (default WARN). */
IB_API void ib_log_set_level(enum ib_log_level max_level);

IB_EXTERN_C_END

#endif
