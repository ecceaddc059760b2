/*
 * export.h - symbol visibility for the inferbench libraries.
 *
 * Every public function is declared with IB_API. The libraries are built with
 * -fvisibility=hidden, so only IB_API symbols are exported from libinferbench.so.
 */
#ifndef INFERBENCH_EXPORT_H
#define INFERBENCH_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define IB_API __attribute__((visibility("default")))
#else
#define IB_API
#endif

#ifdef __cplusplus
#define IB_EXTERN_C_BEGIN extern "C" {
#define IB_EXTERN_C_END }
#else
#define IB_EXTERN_C_BEGIN
#define IB_EXTERN_C_END
#endif

#endif
