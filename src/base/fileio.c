/*
 * fileio.c - file helpers on POSIX calls; errno is turned into a message at
 * the failing call.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"

int ib_file_read_all(const char *path, size_t max_bytes, char **out, size_t *out_len, ib_err *err)
{
    *out = NULL;
    if (out_len)
        *out_len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ib_err_set(err, errno == ENOENT ? IB_ENOTFOUND : IB_EIO, "%s: cannot open: %s",
                          path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return ib_err_set(err, IB_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return ib_err_set(err, IB_EIO, "%s: is a directory, expected a file", path);
    }
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
    if (max_bytes && cap > max_bytes + 1) {
        close(fd);
        return ib_err_set(err, IB_EFORMAT, "%s: file is larger than the %zu-byte limit", path,
                          max_bytes);
    }
    char *buf = ib_malloc(cap);
    size_t len = 0;
    if (!buf) {
        close(fd);
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory reading file", path);
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (max_bytes && len >= max_bytes) {
                ib_free(buf);
                close(fd);
                return ib_err_set(err, IB_EFORMAT, "%s: file is larger than the %zu-byte limit",
                                  path, max_bytes);
            }
            char *nb = ib_realloc(buf, cap * 2);
            if (!nb) {
                ib_free(buf);
                close(fd);
                return ib_err_set(err, IB_ENOMEM, "%s: out of memory reading file", path);
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            ib_free(buf);
            close(fd);
            return ib_err_set(err, IB_EIO, "%s: read failed: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    *out = buf;
    if (out_len)
        *out_len = len;
    return IB_OK;
}

int ib_file_write_all(const char *path, const void *data, size_t len, ib_err *err)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp)
        return ib_err_set(err, IB_EINVAL, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return ib_err_set(err, IB_EIO, "%s: cannot create: %s", path, strerror(errno));
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            return ib_err_set(err, IB_EIO, "%s: write failed: %s", path, strerror(e));
        }
        p += w;
        left -= (size_t)w;
    }
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return ib_err_set(err, IB_EIO, "%s: close failed: %s", path, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return ib_err_set(err, IB_EIO, "%s: rename failed: %s", path, strerror(e));
    }
    return IB_OK;
}

int ib_mkdirs(const char *path, ib_err *err)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0)
        return IB_OK;
    if (n >= sizeof buf)
        return ib_err_set(err, IB_EINVAL, "%s: path too long", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
                int e = errno; /* the caller's choice of folder, not a fault of the machine */
                bool user = e == EACCES || e == EROFS || e == EPERM || e == ENOTDIR;
                return ib_err_set(err, user ? IB_EINVAL : IB_EIO,
                                  "%s: cannot create directory: %s", buf, strerror(e));
            }
            if (!ib_path_is_dir(buf))
                return ib_err_set(err, IB_EINVAL, "%s: exists and is not a directory", buf);
            buf[i] = c;
        }
    }
    return IB_OK;
}

bool ib_path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

bool ib_path_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ib_path_join(char *out, size_t n, const char *a, const char *b)
{
    size_t la = strlen(a);
    const char *sep = (la > 0 && a[la - 1] != '/') ? "/" : "";
    if (!*a)
        sep = "";
    int w = snprintf(out, n, "%s%s%s", a, sep, b);
    return (w < 0 || (size_t)w >= n) ? IB_EINVAL : IB_OK;
}

int ib_path_absolute(const char *path, char *out, size_t n)
{
    char *r = realpath(path, NULL);
    if (!r)
        return IB_ENOTFOUND;
    int k = snprintf(out, n, "%s", r);
    free(r);
    return k < 0 || (size_t)k >= n ? IB_EINVAL : IB_OK;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int ib_remove_tree(const char *path, ib_err *err)
{
    if (!ib_path_exists(path))
        return IB_OK;
    /* depth first, no symlinks followed, every entry removed (files and folders) */
    if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        return ib_err_set(err, IB_EIO, "%s: cannot remove: %s", path, strerror(errno));
    return IB_OK;
}

int ib_rename(const char *from, const char *to, ib_err *err)
{
    if (rename(from, to) != 0)
        return ib_err_set(err, IB_EIO, "cannot move %s to %s: %s", from, to, strerror(errno));
    return IB_OK;
}
