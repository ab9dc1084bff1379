/* tp_derp.c: nearest home DERP with hysteresis. Portable C99. */
#include "tp_derp.h"

#include <string.h>

void tp_derp_sel_init(tp_derp_sel_t *s)
{
    if (s) {
        memset(s, 0, sizeof *s);
    }
}

static tp_derp_region_t *find(tp_derp_sel_t *s, uint16_t id)
{
    int i;
    for (i = 0; i < s->n; i++) {
        if (s->r[i].id == id) {
            return &s->r[i];
        }
    }
    return NULL;
}

static tp_derp_region_t *add(tp_derp_sel_t *s, uint16_t id)
{
    tp_derp_region_t *r;
    if (id == 0) {
        s->rejected++;
        return NULL;
    }
    if ((r = find(s, id)) != NULL) {
        return r;
    }
    if (s->n >= TP_DERP_SEL_REGIONS) {
        s->rejected++;
        return NULL;
    }
    r = &s->r[s->n++];
    memset(r, 0, sizeof *r);
    r->id = id;
    return r;
}

int tp_derp_sel_region(tp_derp_sel_t *s, uint16_t id)
{
    if (s == NULL) {
        return -1;
    }
    return add(s, id) ? 0 : -1;
}

int tp_derp_sel_measured(tp_derp_sel_t *s, uint16_t id, uint32_t ms)
{
    tp_derp_region_t *r;
    if (s == NULL || (r = add(s, id)) == NULL) {
        return -1;
    }
    r->measured = 1;
    r->ms = ms;
    return 0;
}

void tp_derp_sel_clear(tp_derp_sel_t *s)
{
    int i;
    if (s == NULL) {
        return;
    }
    for (i = 0; i < s->n; i++) {
        s->r[i].measured = 0;
    }
}

uint16_t tp_derp_sel_choose(tp_derp_sel_t *s, tp_derp_by_t *by)
{
    const tp_derp_region_t *best = NULL, *cur;
    int i;
    tp_derp_by_t dummy;
    if (by == NULL) {
        by = &dummy;
    }
    if (s == NULL) {
        *by = TP_DERP_BY_NONE;
        return 0;
    }
    for (i = 0; i < s->n; i++) {
        const tp_derp_region_t *r = &s->r[i];
        if (r->measured && (best == NULL || r->ms < best->ms || (r->ms == best->ms && r->id < best->id))) {
            best = r;
        }
    }
    if (best == NULL) {
        if (s->home == 0) {
            /* Nothing measured and no home: the lowest id, said plainly. */
            for (i = 0; i < s->n; i++) {
                if (s->home == 0 || s->r[i].id < s->home) {
                    s->home = s->r[i].id;
                }
            }
            s->by = s->home ? TP_DERP_BY_LOWEST_ID : TP_DERP_BY_NONE;
        }
        *by = (tp_derp_by_t)s->by;
        return s->home;
    }
    cur = s->home ? find(s, s->home) : NULL;
    if (cur != NULL && cur->measured && cur != best) {
        /* Hysteresis: stay unless best is >= 1/3 faster and >= MIN_GAIN ms faster. */
        uint64_t b3 = (uint64_t)best->ms * 3u, c2 = (uint64_t)cur->ms * 2u;
        if (!(b3 <= c2 && cur->ms - best->ms >= TP_DERP_MIN_GAIN_MS)) {
            s->by = TP_DERP_BY_LATENCY;
            *by = TP_DERP_BY_LATENCY;
            return s->home;
        }
    }
    s->home = best->id;
    s->by = TP_DERP_BY_LATENCY;
    *by = TP_DERP_BY_LATENCY;
    return s->home;
}
