/*
 * tp_derp.h: home DERP region by measured latency with hysteresis
 * (reference fix b).
 *
 * The port picked the region with the lowest id, so a board in Europe homed
 * on region 1 (New York) while region 7 was 8x closer, and every relayed
 * packet crossed an ocean twice. Rules here, modelled on Tailscale's
 * netcheck: the region with the lowest measured latency wins (ties: lower
 * id); the current home is kept unless the best is at least a third faster
 * AND TP_DERP_MIN_GAIN_MS faster, so jitter doesn't flap the home; a home
 * with no current measurement is replaced by the best measured region; with
 * no measurement at all the current home is kept, or, if there is none, the
 * lowest id is used and reported as TP_DERP_BY_LOWEST_ID. Caller-owned state,
 * no locking.
 */
#ifndef TP_DERP_H
#define TP_DERP_H

#include <stdint.h>

#include "tp_frame.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TP_DERP_SEL_REGIONS 16
#define TP_DERP_MIN_GAIN_MS 10u

typedef struct {
    uint16_t id;
    uint8_t measured;
    uint32_t ms;
} tp_derp_region_t;

typedef struct {
    tp_derp_region_t r[TP_DERP_SEL_REGIONS];
    uint8_t n;
    uint16_t home;  /**< 0 = none yet */
    uint8_t by;     /**< tp_derp_by_t */
    uint32_t rejected; /**< region ids refused (0 or table full) */
} tp_derp_sel_t;

void tp_derp_sel_init(tp_derp_sel_t *s);
/** Add a region from the DERP map; returns 0, or -1 (counted) for id 0 or a full table. */
int tp_derp_sel_region(tp_derp_sel_t *s, uint16_t id);
/** Record a latency measurement (adds the region if new); -1 when refused. */
int tp_derp_sel_measured(tp_derp_sel_t *s, uint16_t id, uint32_t ms);
/** Forget every measurement (start of a new netcheck round). */
void tp_derp_sel_clear(tp_derp_sel_t *s);
/** Apply the rules; returns the home region (0 when no region known), *by set. */
uint16_t tp_derp_sel_choose(tp_derp_sel_t *s, tp_derp_by_t *by);

#ifdef __cplusplus
}
#endif
#endif
