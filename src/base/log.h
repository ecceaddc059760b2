/*
 * log.h - diagnostic logging for library code (never result data).
 * IB_LOG_* add the calling function's name; hot paths must not log.
 */
#ifndef IB_BASE_LOG_H
#define IB_BASE_LOG_H

#include "base/common.h"

void ib_log_write(enum ib_log_level level, const char *func, const char *fmt, ...) IB_PRINTF(3, 4);

#define IB_LOG_ERROR(...) ib_log_write(IB_LOG_LEVEL_ERROR, __func__, __VA_ARGS__)
#define IB_LOG_WARN(...) ib_log_write(IB_LOG_LEVEL_WARN, __func__, __VA_ARGS__)
#define IB_LOG_INFO(...) ib_log_write(IB_LOG_LEVEL_INFO, __func__, __VA_ARGS__)
#define IB_LOG_DEBUG(...) ib_log_write(IB_LOG_LEVEL_DEBUG, __func__, __VA_ARGS__)

#endif
