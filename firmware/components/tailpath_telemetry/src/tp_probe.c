/* tp_probe.c: pending DISCO probe table with TTL reaping. Portable C99. */
#include "tp_probe.h"

#include <string.h>

void tp_probe_init(tp_probe_table_t *t, uint32_t ttl_ms, int reap)
{
    if (t == NULL) {
        return;
    }
    memset(t, 0, sizeof *t);
    t->ttl_ms = ttl_ms ? ttl_ms : TP_PROBE_TTL_MS;
    t->reap = reap ? 1 : 0;
}

uint32_t tp_probe_reap(tp_probe_table_t *t, uint32_t now_ms)
{
    uint32_t n = 0;
    int i;
    if (t == NULL || !t->reap) {
        return 0;
    }
    for (i = 0; i < TP_PROBE_SLOTS; i++) {
        tp_probe_slot_t *s = &t->slot[i];
        /* Unsigned difference: correct across the 2^32 ms wrap. */
        if (s->used && (uint32_t)(now_ms - s->sent_ms) >= t->ttl_ms) {
            s->used = 0;
            n++;
        }
    }
    t->used -= n;
    t->reaped += n;
    if (n) {
        t->warned = 0;
    }
    return n;
}

tp_probe_result_t tp_probe_add(tp_probe_table_t *t, const uint8_t txid[TP_PROBE_TXID_LEN], uint16_t peer,
                               uint32_t now_ms)
{
    int i;
    if (t == NULL || txid == NULL) {
        return TP_PROBE_BAD;
    }
    (void)tp_probe_reap(t, now_ms);
    for (i = 0; i < TP_PROBE_SLOTS; i++) {
        tp_probe_slot_t *s = &t->slot[i];
        if (!s->used) {
            memcpy(s->txid, txid, TP_PROBE_TXID_LEN);
            s->sent_ms = now_ms;
            s->peer = peer;
            s->used = 1;
            t->used++;
            return TP_PROBE_ADDED;
        }
    }
    t->dropped++;
    if (!t->warned) {
        t->warned = 1;
        return TP_PROBE_FULL_WARN;
    }
    return TP_PROBE_FULL;
}

int tp_probe_pong(tp_probe_table_t *t, const uint8_t txid[TP_PROBE_TXID_LEN], uint32_t now_ms, uint16_t *peer,
                  uint32_t *rtt_ms)
{
    int i;
    if (t == NULL || txid == NULL) {
        return 0;
    }
    for (i = 0; i < TP_PROBE_SLOTS; i++) {
        tp_probe_slot_t *s = &t->slot[i];
        if (s->used && memcmp(s->txid, txid, TP_PROBE_TXID_LEN) == 0) {
            uint32_t age = now_ms - s->sent_ms;
            if (t->reap && age >= t->ttl_ms) {
                return 0; /* late pong: left for tp_probe_reap to count */
            }
            if (peer) {
                *peer = s->peer;
            }
            if (rtt_ms) {
                *rtt_ms = age;
            }
            s->used = 0;
            t->used--;
            t->warned = 0;
            return 1;
        }
    }
    return 0;
}
