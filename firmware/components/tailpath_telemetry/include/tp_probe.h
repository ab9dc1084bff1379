/*
 * tp_probe.h: pending DISCO probe table with TTL reaping (reference fix a).
 *
 * The port's original table had 64 slots freed only by a pong: pings to
 * candidate endpoints that never answer (private addresses on another
 * network, blocked ports) leaked a slot each, and once all 64 were gone every
 * later ping was dropped silently, so the path never went direct. Here a slot
 * expires after ttl_ms (5 s, like a DISCO ping timeout), a full table returns
 * TP_PROBE_FULL_WARN once per episode so the caller logs a warning, and
 * dropped/reaped counts feed the telemetry D frame. Portable C99, caller-owned
 * storage (64 * 20 bytes), no locking: call under the port's own DISCO lock.
 */
#ifndef TP_PROBE_H
#define TP_PROBE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_PROBE_SLOTS 64
#define TP_PROBE_TXID_LEN 12 /* DISCO transaction id */
#define TP_PROBE_TTL_MS 5000u

typedef enum {
    TP_PROBE_ADDED = 0,     /**< tracked */
    TP_PROBE_FULL_WARN = 1, /**< dropped: table full; first drop of this episode, log a warning */
    TP_PROBE_FULL = 2,      /**< dropped: table still full */
    TP_PROBE_BAD = 3,       /**< NULL argument */
} tp_probe_result_t;

typedef struct {
    uint8_t txid[TP_PROBE_TXID_LEN];
    uint32_t sent_ms;
    uint16_t peer;
    uint8_t used;
} tp_probe_slot_t;

typedef struct {
    tp_probe_slot_t slot[TP_PROBE_SLOTS];
    uint32_t used;    /**< slots in use */
    uint32_t dropped; /**< probes refused because the table was full */
    uint32_t reaped;  /**< probes freed by expiry */
    uint32_t ttl_ms;
    uint8_t reap;     /**< 0 reproduces the old behaviour (freed only by pong) */
    uint8_t warned;   /**< a full-table warning was returned in this episode */
} tp_probe_table_t;

/** Empty t. ttl_ms 0 means TP_PROBE_TTL_MS; reap 0 disables expiry. */
void tp_probe_init(tp_probe_table_t *t, uint32_t ttl_ms, int reap);
/** Track a ping just sent (reaping expired slots first when enabled). */
tp_probe_result_t tp_probe_add(tp_probe_table_t *t, const uint8_t txid[TP_PROBE_TXID_LEN], uint16_t peer,
                               uint32_t now_ms);
/** Match a pong: returns 1 and frees the slot (peer, rtt_ms set when not
 *  NULL), 0 when txid is unknown or expired. */
int tp_probe_pong(tp_probe_table_t *t, const uint8_t txid[TP_PROBE_TXID_LEN], uint32_t now_ms, uint16_t *peer,
                  uint32_t *rtt_ms);
/** Free slots older than the TTL (no-op when reaping is off); returns how many. */
uint32_t tp_probe_reap(tp_probe_table_t *t, uint32_t now_ms);

#ifdef __cplusplus
}
#endif
#endif
