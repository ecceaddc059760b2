/*
 * log.c - the diagnostic log sink. Default: stderr, WARN and above, one line
 * per message as "inferbench: <level>: <message>".
 */
#include <stdarg.h>
#include <stdio.h>

#include "base/log.h"

static ib_log_fn g_log_fn;
static void *g_log_user;
static enum ib_log_level g_log_level = IB_LOG_LEVEL_WARN;

void ib_log_set(ib_log_fn fn, void *user)
{
    g_log_fn = fn;
    g_log_user = user;
}

void ib_log_set_level(enum ib_log_level max_level)
{
    g_log_level = max_level;
}

static const char *level_name(enum ib_log_level level)
{
    switch (level) {
    case IB_LOG_LEVEL_ERROR: return "error";
    case IB_LOG_LEVEL_WARN: return "warning";
    case IB_LOG_LEVEL_INFO: return "info";
    default: return "debug";
    }
}

void ib_log_write(enum ib_log_level level, const char *func, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    if (!g_log_fn && level > g_log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (g_log_fn)
        g_log_fn(g_log_user, level, func, msg);
    else
        fprintf(stderr, "inferbench: %s: %s\n", level_name(level), msg);
}
