/*
 * results_select.c - in-place multi-selection (introselect) for percentiles.
 *
 * Three-way partitioning around a median-of-three pivot handles the long runs
 * of equal latencies a fast SUT produces; only sub-ranges that still contain a
 * requested rank are processed, and a depth limit switches to heapsort so the
 * worst case stays O(N log N). Instantiated for int64_t and uint64_t.
 */
#include "loadgen/results_select.h"

#define IB_SEL_MAX_RANKS 64
#define IB_SEL_SMALL 24

#define IB_DEFINE_SELECT(NAME, T)                                                                  \
    static void NAME##_swap(T *a, size_t i, size_t j)                                              \
    {                                                                                              \
        T t = a[i];                                                                                \
        a[i] = a[j];                                                                               \
        a[j] = t;                                                                                  \
    }                                                                                              \
    static void NAME##_isort(T *a, size_t n)                                                       \
    {                                                                                              \
        for (size_t i = 1; i < n; i++) {                                                           \
            T v = a[i];                                                                            \
            size_t j = i;                                                                          \
            while (j > 0 && a[j - 1] > v) {                                                        \
                a[j] = a[j - 1];                                                                   \
                j--;                                                                               \
            }                                                                                      \
            a[j] = v;                                                                              \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_sift(T *a, size_t start, size_t n)                                          \
    {                                                                                              \
        size_t root = start;                                                                       \
        while (2 * root + 1 < n) {                                                                 \
            size_t child = 2 * root + 1;                                                           \
            if (child + 1 < n && a[child] < a[child + 1])                                          \
                child++;                                                                           \
            if (!(a[root] < a[child]))                                                             \
                return;                                                                            \
            NAME##_swap(a, root, child);                                                           \
            root = child;                                                                          \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_heapsort(T *a, size_t n)                                                    \
    {                                                                                              \
        if (n < 2)                                                                                 \
            return;                                                                                \
        for (size_t s = n / 2; s-- > 0;)                                                           \
            NAME##_sift(a, s, n);                                                                  \
        for (size_t end = n - 1; end > 0; end--) {                                                 \
            NAME##_swap(a, 0, end);                                                                \
            NAME##_sift(a, 0, end);                                                                \
        }                                                                                          \
    }                                                                                              \
    static T NAME##_median3(T x, T y, T z)                                                         \
    {                                                                                              \
        if (x < y)                                                                                 \
            return y < z ? y : (x < z ? z : x);                                                    \
        return x < z ? x : (y < z ? z : y);                                                        \
    }                                                                                              \
    /* ks: sorted ranks relative to a (all < n). */                                                \
    static void NAME##_rec(T *a, size_t n, const size_t *ks, size_t nk, int depth)                 \
    {                                                                                              \
        while (nk > 0 && n > IB_SEL_SMALL) {                                                       \
            if (depth-- <= 0) {                                                                    \
                NAME##_heapsort(a, n);                                                             \
                return;                                                                            \
            }                                                                                      \
            T p = NAME##_median3(a[0], a[n / 2], a[n - 1]);                                        \
            if (n > 4096) /* ninther for large ranges */                                           \
                p = NAME##_median3(NAME##_median3(a[0], a[n / 8], a[n / 4]),                       \
                                   NAME##_median3(a[3 * n / 8], a[n / 2], a[5 * n / 8]),           \
                                   NAME##_median3(a[3 * n / 4], a[7 * n / 8], a[n - 1]));          \
            size_t lt = 0, i = 0, gt = n;                                                          \
            while (i < gt) {                                                                       \
                if (a[i] < p)                                                                      \
                    NAME##_swap(a, lt++, i++);                                                     \
                else if (a[i] > p)                                                                 \
                    NAME##_swap(a, i, --gt);                                                       \
                else                                                                               \
                    i++;                                                                           \
            }                                                                                      \
            /* ranks below lt go left, ranks >= gt go right, the rest are placed */                \
            size_t nl = 0;                                                                         \
            while (nl < nk && ks[nl] < lt)                                                         \
                nl++;                                                                              \
            size_t r0 = nl;                                                                        \
            while (r0 < nk && ks[r0] < gt)                                                         \
                r0++;                                                                              \
            /* recurse into the left part, iterate on the right part */                           \
            if (nl > 0)                                                                            \
                NAME##_rec(a, lt, ks, nl, depth);                                                  \
            size_t nr = nk - r0;                                                                   \
            if (nr == 0)                                                                           \
                return;                                                                            \
            /* rebase the right ranks: they are offsets into a + gt */                             \
            size_t tmp[IB_SEL_MAX_RANKS];                                                          \
            for (size_t k = 0; k < nr; k++)                                                        \
                tmp[k] = ks[r0 + k] - gt;                                                          \
            NAME##_rec(a + gt, n - gt, tmp, nr, depth);                                            \
            return;                                                                                \
        }                                                                                          \
        if (nk > 0)                                                                                \
            NAME##_isort(a, n);                                                                    \
    }                                                                                              \
    static void NAME##_entry(T *a, size_t n, const size_t *ranks, size_t nranks)                   \
    {                                                                                              \
        size_t ks[IB_SEL_MAX_RANKS];                                                               \
        size_t nk = 0;                                                                             \
        for (size_t i = 0; i < nranks; i++) {                                                      \
            size_t r = ranks[i];                                                                   \
            if (r >= n)                                                                            \
                continue;                                                                          \
            /* insert sorted, without duplicates */                                               \
            size_t j = nk;                                                                         \
            while (j > 0 && ks[j - 1] > r)                                                         \
                j--;                                                                               \
            if (j > 0 && ks[j - 1] == r)                                                           \
                continue;                                                                          \
            if (nk == IB_SEL_MAX_RANKS) {                                                          \
                NAME##_heapsort(a, n); /* more ranks than we track: sort */                        \
                return;                                                                            \
            }                                                                                      \
            for (size_t m = nk; m > j; m--)                                                        \
                ks[m] = ks[m - 1];                                                                 \
            ks[j] = r;                                                                             \
            nk++;                                                                                  \
        }                                                                                          \
        int depth = 0;                                                                             \
        for (size_t m = n; m > 1; m >>= 1)                                                         \
            depth += 2;                                                                            \
        NAME##_rec(a, n, ks, nk, depth + 4);                                                       \
    }

IB_DEFINE_SELECT(sel_i64, int64_t)
IB_DEFINE_SELECT(sel_u64, uint64_t)

void ib_lg_select_ranks(int64_t *a, size_t n, const size_t *ranks, size_t nranks)
{
    if (a && n > 0)
        sel_i64_entry(a, n, ranks, nranks);
}

void ib_lg_select_ranks_u64(uint64_t *a, size_t n, const size_t *ranks, size_t nranks)
{
    if (a && n > 0)
        sel_u64_entry(a, n, ranks, nranks);
}
