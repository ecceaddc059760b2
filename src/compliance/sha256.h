/*
 * sha256.h - SHA-256 (FIPS 180-4), for the "hash=" line that truncate_accuracy_log.py
 * appends to accuracy.txt: the digest of the full mlperf_log_accuracy.json.
 */
#ifndef IB_COMPLIANCE_SHA256_H
#define IB_COMPLIANCE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "base/common.h"

typedef struct ib_sha256 {
    uint32_t h[8];
    uint64_t total;   /* bytes hashed so far */
    uint8_t buf[64];
    size_t used;
} ib_sha256;

void ib_sha256_init(ib_sha256 *s);
void ib_sha256_update(ib_sha256 *s, const void *data, size_t n);
/* Finish and write the 32-byte digest. */
void ib_sha256_final(ib_sha256 *s, uint8_t out[32]);
/* Digest of a buffer as 64 lower-case hex digits plus NUL. */
void ib_sha256_hex(const void *data, size_t n, char out[65]);
/* Digest of a file as lower-case hex (streams it; any size). */
int ib_sha256_file_hex(const char *path, char out[65], ib_err *err);

#endif
