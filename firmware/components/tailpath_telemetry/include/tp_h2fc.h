/*
 * tp_h2fc.h: HTTP/2 receive flow control (reference fix c, RFC 9113 §6.9).
 *
 * The port's control client read DATA frames but never sent WINDOW_UPDATE,
 * so after 65,535 bytes (the initial window) the server could send nothing
 * more: the long-poll netmap stream stalled, and with it endpoint updates.
 * This tracks the connection and one stream's receive windows, rejects DATA
 * that overruns them (FLOW_CONTROL_ERROR), and once the application has
 * consumed at least half a window returns that credit with WINDOW_UPDATE
 * frames (13 bytes each) for the stream and the connection.
 * Caller-owned state, no locking, no allocation.
 */
#ifndef TP_H2FC_H
#define TP_H2FC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_H2_DEFAULT_WINDOW 65535u
#define TP_H2_WINDOW_UPDATE_LEN 13u /* 9-byte frame header + 4-byte increment */
#define TP_H2_FLOW_CONTROL_ERROR 0x3 /* RFC 9113 error code */
#define TP_H2_MAX_WINDOW 0x7FFFFFFFu

typedef struct {
    uint32_t stream_id;
    uint32_t window;        /**< window size both sides start with and refill to */
    uint32_t conn_open;     /**< bytes the peer may still send on the connection */
    uint32_t stream_open;   /**< ... on the stream */
    uint32_t conn_pending;  /**< consumed but not yet returned */
    uint32_t stream_pending;
    uint32_t returned_conn; /**< credit returned so far (wraps) */
    uint32_t returned_stream;
    uint32_t received;      /**< DATA bytes counted against the windows (wraps) */
} tp_h2_rx_t;

/** Start tracking stream_id with initial window (0 means 65,535; capped at 2^31-1). */
void tp_h2_rx_init(tp_h2_rx_t *fc, uint32_t stream_id, uint32_t window);
/** Count a DATA frame's flow-controlled length (payload incl. padding).
 *  Returns 0, or TP_H2_FLOW_CONTROL_ERROR when it exceeds either window
 *  (nothing is counted then). Frames on other streams count only against
 *  the connection window; the caller returns their credit itself. */
int tp_h2_rx_data(tp_h2_rx_t *fc, uint32_t stream_id, uint32_t len);
/** The application consumed len bytes of stream data; credit becomes pending. */
void tp_h2_rx_consumed(tp_h2_rx_t *fc, uint32_t len);
/** Write due WINDOW_UPDATE frames (stream first, then connection) into out,
 *  which must hold 2*TP_H2_WINDOW_UPDATE_LEN bytes; returns bytes written
 *  (0, 13 or 26). Credit is due once it reaches half the window. Send them
 *  before reading further. */
size_t tp_h2_rx_updates(tp_h2_rx_t *fc, uint8_t *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
