/*
 * calib.c - INT8 calibration: run the FP32 graph (compiled exactly as the
 * int8 variants will be, fusions included, so value names match) on the
 * caller's calibration batches and record each float value's min and max.
 * The ranges reach the backends through ib_backend_binding.range_min/max.
 *
 * The calibration variant plans every value in its own slot and in plain
 * layout (ib_variant.calib), so all intermediate values can be read back
 * after the run. It is freed afterwards, and so are the arenas it grew, so
 * the session's real variants start from a right-sized arena.
 */
#include <math.h>
#include <string.h>

#include "runtime/session_impl.h"

bool ib_session_range(const ib_session *s, const char *name, float *lo, float *hi)
{
    int64_t i;
    if (!s->ranges.len || !ib_strmap_get(&s->range_index, name, &i)) return false;
    *lo = s->ranges.data[2 * i];
    *hi = s->ranges.data[2 * i + 1];
    return true;
}

static int note_range(ib_session *s, const char *name, float lo, float hi)
{
    int64_t i;
    if (ib_strmap_get(&s->range_index, name, &i)) {
        if (lo < s->ranges.data[2 * i]) s->ranges.data[2 * i] = lo;
        if (hi > s->ranges.data[2 * i + 1]) s->ranges.data[2 * i + 1] = hi;
        return IB_OK;
    }
    char *key = ib_arena_strdup(&s->names, name);
    if (!key || IB_VEC_PUSH(&s->ranges, lo) || IB_VEC_PUSH(&s->ranges, hi)) return IB_ENOMEM;
    return ib_strmap_put(&s->range_index, key, (int64_t)(s->ranges.len / 2 - 1));
}

/* Min/max of every float32 value planned in the variant's arenas. */
static int collect(ib_session *s, const ib_variant *v, ib_err *err)
{
    for (uint32_t b = 0; b < s->n_backends; b++) {
        const ib_arena_plan *ap = &v->plan[b];
        const unsigned char *host = ib_backend_buffer_host_ptr(s->arena[b]);
        for (size_t i = 0; i < ap->n; i++) {
            const ib_value *val = &v->g->values.data[ap->value[i]];
            size_t n = ib_tensor_desc_nbytes(&val->desc);
            if (val->desc.dtype != IB_DTYPE_FLOAT32 || !n) continue;
            float *tmp = NULL;
            const float *x = host ? (const float *)(const void *)(host + ap->pv[i].offset) : NULL;
            if (!x) {
                if (!(tmp = ib_malloc(n)))
                    return ib_err_set(err, IB_ENOMEM, "out of memory reading '%s'", val->name);
                int rc = ib_session_read_slot(s, b, ap->pv[i].offset, tmp, n, err);
                if (rc) {
                    ib_free(tmp);
                    return rc;
                }
                x = tmp;
            }
            float lo = INFINITY, hi = -INFINITY;
            for (size_t k = 0; k < n / sizeof(float); k++) {
                if (isnan(x[k])) continue;
                lo = x[k] < lo ? x[k] : lo;
                hi = x[k] > hi ? x[k] : hi;
            }
            ib_free(tmp);
            if (lo <= hi && note_range(s, val->name, lo, hi))
                return ib_err_set(err, IB_ENOMEM, "out of memory recording ranges");
        }
    }
    return IB_OK;
}

int ib_session_calibrate(ib_session *s, ib_err *err)
{
    const ib_session_options *o = &s->opts;
    size_t n_in = ib_model_graph(s->model)->inputs.len;
    ib_variant *v = NULL;
    int rc = IB_OK;
    for (size_t bt = 0; bt < o->calib_batches && !rc; bt++) {
        const ib_tensor_view *views = &o->calib_inputs[bt * o->calib_input_count];
        if ((rc = ib_session_match_inputs(s, views, o->calib_input_count, err))) {
            char msg[sizeof err->msg];
            if (err) {
                memcpy(msg, err->msg, sizeof msg);
                ib_err_set(err, rc, "calibration batch %zu: %s", bt, msg);
            }
            break;
        }
        bool same = v != NULL;
        for (size_t i = 0; same && i < n_in; i++)
            same = ib_tensor_desc_equal(&v->shapes[i], &s->key[i]);
        if (!same) {
            ib_variant_free(s, v);
            v = NULL;
            if ((rc = ib_variant_build(s, s->key, true, &v, err))) break;
        }
        if (!(rc = ib_session_run_variant(s, v, s->in_views, err))) rc = collect(s, v, err);
    }
    ib_variant_free(s, v);
    /* no variant exists yet: drop the calibration-sized arenas */
    for (uint32_t b = 0; b < s->n_backends && !s->variants.len; b++) {
        ib_backend_buffer_free(s->arena[b]);
        s->arena[b] = NULL;
        s->arena_cap[b] = 0;
    }
    return rc;
}
