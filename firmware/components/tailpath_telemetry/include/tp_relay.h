/*
 * tp_relay.h: DERP relay liveness (reference fix e).
 *
 * In the field a board's connection to its DERP relay dropped and stayed
 * down: the port tried to reconnect a few times right after the drop, then
 * waited for a connect request that never came while control stayed up, so
 * the board kept its netmap, peers kept sending to it through DERP, and
 * nothing arrived (`ml_derp: DERP status: connected=0 fd=-1 rx=74096 …`
 * for hours). A relay can also go silent while its TCP connection still
 * looks open (a NAT or the relay dropped the flow), and then nothing
 * notices at all.
 *
 * Rules here: once a relay is wanted, a connection that is down is retried
 * for as long as it is down, with a back-off that doubles from min_ms to
 * max_ms; a lost connection is retried after min_ms. While connected, every
 * frame from the relay (DERP servers send a keep-alive at least every 60 s)
 * feeds a receive watchdog; silence longer than watchdog_ms drops the
 * connection and starts the reconnect ladder. Caller-owned state, no
 * locking, no clock: the caller passes its millisecond uptime (32-bit,
 * wrap-safe).
 *
 * Use: tp_relay_init once; tp_relay_want when a home region is known;
 * call tp_relay_poll every 100 ms or so and act on TP_RELAY_CONNECT (try a
 * connect now, then report tp_relay_connected or tp_relay_failed) and
 * TP_RELAY_DROP (close the silent connection; reconnects follow); call
 * tp_relay_rx for every frame received and tp_relay_lost when a read or
 * write fails. Report each change to the telemetry core with
 * tp_derp_relay_state (R frames) and each frame with tp_derp_relay_rx.
 */
#ifndef TP_RELAY_H
#define TP_RELAY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_RELAY_MIN_BACKOFF_MS 1000u   /**< first retry after a failure */
#define TP_RELAY_MAX_BACKOFF_MS 60000u  /**< back-off cap: keep trying once a minute */
#define TP_RELAY_WATCHDOG_MS 90000u     /**< 1.5 × the DERP server's 60 s keep-alive */

typedef enum { TP_RELAY_IDLE = 0, TP_RELAY_DOWN, TP_RELAY_UP } tp_relay_state_t;

/** What tp_relay_poll asks the caller to do. */
typedef enum {
    TP_RELAY_WAIT = 0, /**< nothing now */
    TP_RELAY_CONNECT,  /**< try one connect now */
    TP_RELAY_DROP      /**< the connected relay has been silent too long: close it */
} tp_relay_action_t;

/** Failure words reported with tp_relay_failed / tp_relay_lost. */
#define TP_RELAY_ERR_SILENT "silent"

typedef struct {
    uint32_t min_ms, max_ms, watchdog_ms;
    uint32_t backoff_ms;  /**< the wait after the next failure */
    uint32_t next_try_ms; /**< uptime of the next connect attempt (DOWN) */
    uint32_t last_rx_ms;  /**< uptime of the last frame from the relay */
    uint32_t attempts;    /**< connect attempts failed since last up */
    uint32_t drops;       /**< connections lost (errors, the watchdog) */
    uint16_t region;      /**< the relay's region; 0 none */
    uint8_t state;        /**< tp_relay_state_t */
    uint8_t has_rx;       /**< last_rx_ms is set */
    const char *err;      /**< last failure word (static string), NULL none */
} tp_relay_t;

/** Reset r. 0 for any duration means its TP_RELAY_* default. */
void tp_relay_init(tp_relay_t *r, uint32_t min_ms, uint32_t max_ms, uint32_t watchdog_ms);
/** A relay in region is wanted from now on (home DERP chosen or changed): connect at once. */
void tp_relay_want(tp_relay_t *r, uint16_t region, uint32_t now);
/** What to do at now (see tp_relay_action_t). */
tp_relay_action_t tp_relay_poll(tp_relay_t *r, uint32_t now);
/** The connect asked for succeeded: the relay is up. */
void tp_relay_connected(tp_relay_t *r, uint32_t now);
/** The connect asked for failed (err: a static word such as "timeout"). */
void tp_relay_failed(tp_relay_t *r, uint32_t now, const char *err);
/** The connection was lost (read/write error, or closed after TP_RELAY_DROP). */
void tp_relay_lost(tp_relay_t *r, uint32_t now, const char *err);
/** A frame arrived from the relay (keep-alives included). */
void tp_relay_rx(tp_relay_t *r, uint32_t now);
/** Milliseconds since the last frame from the relay; 0 when none yet. */
uint32_t tp_relay_rx_age(const tp_relay_t *r, uint32_t now);

#ifdef __cplusplus
}
#endif
#endif
