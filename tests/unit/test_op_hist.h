/*
 * test_op_hist.h - the op-type histogram of a loaded model, for the model builder tests:
 * ib_model_op_histogram(m, on_op, &h) fills h, count_of(&h, "Conv") reads one count (0 when
 * the op is absent).
 */
#ifndef IB_TEST_OP_HIST_H
#define IB_TEST_OP_HIST_H

#include <stdint.h>
#include <string.h>

#define IB_TEST_HIST_MAX 48 /* distinct op types kept */

typedef struct hist {
    const char *op[IB_TEST_HIST_MAX];
    uint64_t n[IB_TEST_HIST_MAX];
    int len;
} hist;

static void on_op(void *user, const char *op, uint64_t count)
{
    hist *h = user;
    if (h->len < IB_TEST_HIST_MAX) {
        h->op[h->len] = op;
        h->n[h->len++] = count;
    }
}

static uint64_t count_of(const hist *h, const char *op)
{
    for (int i = 0; i < h->len; i++)
        if (strcmp(h->op[i], op) == 0)
            return h->n[i];
    return 0;
}

#endif
