/* tp_relay.c: DERP relay liveness, reference fix e (tp_relay.h). Portable C99. */
#include "tp_relay.h"

#include <stddef.h>
#include <string.h>

/* due reports whether uptime now has reached t (32-bit wrap-safe). */
static int due(uint32_t now, uint32_t t) { return (int32_t)(now - t) >= 0; }

void tp_relay_init(tp_relay_t *r, uint32_t min_ms, uint32_t max_ms, uint32_t watchdog_ms)
{
    memset(r, 0, sizeof *r);
    r->min_ms = min_ms ? min_ms : TP_RELAY_MIN_BACKOFF_MS;
    r->max_ms = max_ms ? max_ms : TP_RELAY_MAX_BACKOFF_MS;
    if (r->max_ms < r->min_ms) {
        r->max_ms = r->min_ms;
    }
    r->watchdog_ms = watchdog_ms ? watchdog_ms : TP_RELAY_WATCHDOG_MS;
    r->backoff_ms = r->min_ms;
}

void tp_relay_want(tp_relay_t *r, uint16_t region, uint32_t now)
{
    if (r->state != TP_RELAY_IDLE && r->region == region) {
        return;
    }
    r->region = region;
    r->state = TP_RELAY_DOWN;
    r->next_try_ms = now;
    r->backoff_ms = r->min_ms;
    r->attempts = 0;
    r->has_rx = 0;
}

tp_relay_action_t tp_relay_poll(tp_relay_t *r, uint32_t now)
{
    switch (r->state) {
    case TP_RELAY_DOWN:
        return due(now, r->next_try_ms) ? TP_RELAY_CONNECT : TP_RELAY_WAIT;
    case TP_RELAY_UP:
        return tp_relay_rx_age(r, now) > r->watchdog_ms ? TP_RELAY_DROP : TP_RELAY_WAIT;
    }
    return TP_RELAY_WAIT;
}

void tp_relay_connected(tp_relay_t *r, uint32_t now)
{
    r->state = TP_RELAY_UP;
    r->attempts = 0;
    r->backoff_ms = r->min_ms;
    /* The connect handshake itself came from the relay. */
    r->last_rx_ms = now;
    r->has_rx = 1;
}

void tp_relay_failed(tp_relay_t *r, uint32_t now, const char *err)
{
    if (r->state == TP_RELAY_IDLE) {
        return;
    }
    r->state = TP_RELAY_DOWN;
    r->attempts++;
    r->err = err;
    r->next_try_ms = now + r->backoff_ms;
    r->backoff_ms = r->backoff_ms > r->max_ms / 2 ? r->max_ms : r->backoff_ms * 2;
}

void tp_relay_lost(tp_relay_t *r, uint32_t now, const char *err)
{
    if (r->state != TP_RELAY_UP) {
        return;
    }
    r->state = TP_RELAY_DOWN;
    r->drops++;
    r->err = err;
    r->next_try_ms = now + r->min_ms; /* a first retry soon, then the ladder */
    r->backoff_ms = r->min_ms > r->max_ms / 2 ? r->max_ms : r->min_ms * 2;
}

void tp_relay_rx(tp_relay_t *r, uint32_t now)
{
    r->last_rx_ms = now;
    r->has_rx = 1;
}

uint32_t tp_relay_rx_age(const tp_relay_t *r, uint32_t now) { return r->has_rx ? now - r->last_rx_ms : 0; }
