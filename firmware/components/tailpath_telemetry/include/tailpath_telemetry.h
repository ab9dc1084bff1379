/*
 * tailpath_telemetry.h: hooks the ESP32 Tailscale port calls, and the
 * emitter that prints telemetry frames (docs/telemetry.md).
 *
 * Every tp_* hook may be called from any task (not from an ISR): it takes the
 * port lock for a few dozen instructions, never allocates, never blocks on
 * the console. Bad input (NULL, region 0, more peers than TP_MAX_PEERS, host
 * names over TP_HOST_MAX bytes) is rejected or truncated and counted in the
 * `bad` field of the S frame; nothing is written out of bounds.
 *
 * Static RAM: the core's state, one snapshot of it and one 256-byte line
 * buffer, about 1.6 KB with the defaults (see docs/firmware.md for the
 * measured .bss). Limits: TP_MAX_PEERS peers, TP_MAX_REGIONS DERP regions.
 */
#ifndef TAILPATH_TELEMETRY_H
#define TAILPATH_TELEMETRY_H

#include <stdint.h>

#include "tp_frame.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TP_MAX_PEERS
#define TP_MAX_PEERS 8 /**< peers tracked for P frames */
#endif
#ifndef TP_MAX_REGIONS
#define TP_MAX_REGIONS 16 /**< DERP regions whose latency is tracked */
#endif

/** Reset the core. period_ms: S/N/D/P cadence (0 means 5000). */
void tp_init(uint32_t period_ms, tp_reset_t reset_reason);

/* Wi-Fi (from the app's event handler). */
void tp_wifi_connected(int8_t rssi_dbm);
void tp_wifi_rssi(int8_t rssi_dbm);
void tp_wifi_disconnected(void);

/* Identity, after each netmap: own tailnet IPv4 (host order), host name,
 * number of endpoints advertised to control. host NULL keeps the old name
 * (counted bad); longer than TP_HOST_MAX is cut (counted bad). */
void tp_self(uint32_t tailnet_ip, const char *host, uint32_t endpoints);

/* DISCO (ts_disco). peer is the port's peer number. */
void tp_disco_ping_sent(uint32_t peer, const tp_addr_t *to);
void tp_disco_pong_recv(uint32_t peer, const tp_addr_t *from, uint32_t rtt_ms);
void tp_disco_probe_dropped(void);            /* pending table full, ping not sent */
void tp_disco_probes_reaped(uint32_t n);      /* n pending probes expired */
void tp_disco_probe_table(uint32_t used, uint32_t capacity);
void tp_disco_callmemaybe(int outgoing);      /* 1 sent, 0 received */

/* Home DERP (ts_netmap / netcheck). region 0 is rejected. */
void tp_derp_home(uint16_t region, tp_derp_by_t by);
void tp_derp_latency(uint16_t region, uint32_t ms);

/* DERP relay connection (R frames, protocol v2): its region, whether it is
 * up, connect attempts failed since it was last up, connections lost since
 * boot, the last failure word (NULL or "" none; cut at TP_ERR_MAX, counted
 * bad). Call on every change (tp_relay.h's state); tp_derp_relay_rx on
 * every frame from the relay, for the R frame's rxage. */
void tp_derp_relay_state(uint16_t region, int connected, uint32_t attempts, uint32_t drops, const char *err);
void tp_derp_relay_rx(void);

/* Peers. tailnet_ip 0 = unknown. path NULL is rejected. */
void tp_peer_path(uint32_t peer, uint32_t tailnet_ip, const tp_addr_t *path);
/* WireGuard handshake received (wireguard), from src (tp_addr_from_wg). */
void tp_wg_handshake(uint32_t peer, const tp_addr_t *src);

/* Control stream HTTP/2 (ts_ctrl): DATA payload received; WINDOW_UPDATE
 * sent (stream_id 0 = connection; only those count in h2wu). conn_window_open
 * is the connection receive window left after the event, bytes. */
void tp_h2_data(uint32_t bytes, uint32_t conn_window_open);
void tp_h2_window_update(uint32_t stream_id, uint32_t increment, uint32_t conn_window_open);

/* HTTP fetch finished: an F frame is printed at the next tp_tick. err NULL or
 * "" on success; peer < 0 when the server is not a tailnet peer. */
void tp_fetch_result(uint32_t bytes, uint32_t ms, uint32_t http_status, const char *err, int32_t peer);

/**
 * Print what is due: a pending F frame at once, S/N/D, one P per known
 * peer and, once a relay was reported, R every period. Call from ONE task only (the port's telemetry task, or
 * the scenario runner), e.g. every 100 ms. Returns frames written.
 */
int tp_tick(void);
/** Print S/N/D/P(/R) now regardless of the period (same single-task rule). */
int tp_emit_now(void);
/** Hook calls rejected or truncated so far. */
uint32_t tp_bad_count(void);

#ifdef __cplusplus
}
#endif
#endif
