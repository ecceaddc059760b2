/*
 * replay_main.c - runs a libFuzzer target over every file of a corpus folder
 * (SQLite fuzzcheck style), so `make check` replays the corpus with gcc.
 * A crash or a sanitizer report fails the run; the exit code is 0 otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
        fclose(f);
        free(buf);
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "%s: no such corpus\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += run_file(argv[i]);
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char p[8192];
            if (e->d_name[0] == '.')
                continue;
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            bad += run_file(p);
            files++;
        }
        if (d)
            closedir(d);
    }
    printf("replayed %d corpus files, %d unreadable\n", files, bad);
    return bad ? 1 : 0;
}
