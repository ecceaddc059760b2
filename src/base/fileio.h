/*
 * fileio.h - whole-file reads and atomic writes, directory creation, path
 * joining. Every failure names the path and the OS reason in `err`.
 */
#ifndef IB_BASE_FILEIO_H
#define IB_BASE_FILEIO_H

#include <stdbool.h>
#include <stddef.h>

#include "base/common.h"

/* Read a whole file into a NUL-terminated buffer (freed with ib_free).
 * max_bytes = 0 means no limit; larger files fail with IB_EFORMAT. */
int ib_file_read_all(const char *path, size_t max_bytes, char **out, size_t *out_len, ib_err *err);

/* Write a file atomically (temporary file in the same folder + rename). */
int ib_file_write_all(const char *path, const void *data, size_t len, ib_err *err);

/* mkdir -p; existing directories are fine. */
int ib_mkdirs(const char *path, ib_err *err);

bool ib_path_exists(const char *path);
bool ib_path_is_dir(const char *path);

/* rm -rf path (no symlink followed); a missing path is fine. */
int ib_remove_tree(const char *path, ib_err *err);

/* rename(2) with the paths and the OS reason in err. Atomic within one file system; a
 * folder replaces an empty folder. */
int ib_rename(const char *from, const char *to, ib_err *err);

/* The absolute, symlink-free form of an existing path into out (size n): IB_ENOTFOUND when
 * it does not exist, IB_EINVAL when it does not fit. */
int ib_path_absolute(const char *path, char *out, size_t n);

/* Join a and b with one '/' into out (size n); IB_EINVAL when it does not fit. */
int ib_path_join(char *out, size_t n, const char *a, const char *b);

#endif
