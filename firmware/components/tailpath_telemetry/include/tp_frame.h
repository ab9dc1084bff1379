/*
 * tp_frame.h: encoder for tailpath telemetry frames, protocol version 2
 * (docs/telemetry.md; version 2 added the R frame and writes "@TP2"). Portable C99: no ESP-IDF headers, no heap, no stdio.
 *
 * Each tp_frame_* function writes one frame, without line ending, into buf
 * and returns its length (at most TP_FRAME_MAX bytes, NUL-terminated when
 * cap > length), or 0 when buf is NULL or cap is too small. Fields whose has_*
 * flag is 0 (or whose documented "absent" value is set) are left out.
 */
#ifndef TP_FRAME_H
#define TP_FRAME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest frame in bytes, '@' to the last checksum digit. */
#define TP_FRAME_MAX 254
/** Buffer size that always fits a frame, '\n' and NUL. */
#define TP_FRAME_BUF 256
/** Longest host name written (a DNS label). */
#define TP_HOST_MAX 63
/** Longest fetch error word written. */
#define TP_ERR_MAX 15

/** Reset reasons, in esp_reset_reason_t order (ESP_RST_UNKNOWN = 0 ...). */
typedef enum {
    TP_RST_UNKNOWN = 0, TP_RST_POWERON, TP_RST_EXT, TP_RST_SW, TP_RST_PANIC,
    TP_RST_INT_WDT, TP_RST_TASK_WDT, TP_RST_WDT, TP_RST_DEEPSLEEP, TP_RST_BROWNOUT,
    TP_RST_SDIO, TP_RST_USB, TP_RST_JTAG, TP_RST_EFUSE, TP_RST_PWR_GLITCH,
    TP_RST_CPU_LOCKUP, TP_RST_COUNT
} tp_reset_t;

/** How the home DERP region was chosen (the `derpby` word). */
typedef enum { TP_DERP_BY_NONE = 0, TP_DERP_BY_LATENCY, TP_DERP_BY_LOWEST_ID, TP_DERP_BY_FIXED, TP_DERP_BY_COUNT } tp_derp_by_t;

/** Kind of a peer address: no path, direct UDP, DERP relay. */
typedef enum { TP_ADDR_NONE = 0, TP_ADDR_DIRECT, TP_ADDR_DERP } tp_addr_kind_t;

/** A path or handshake source. ip is host order (1.2.3.4 = 0x01020304). */
typedef struct {
    uint8_t kind;    /**< tp_addr_kind_t */
    uint16_t port;   /**< UDP port, TP_ADDR_DIRECT */
    uint16_t region; /**< DERP region id, TP_ADDR_DERP */
    uint32_t ip;     /**< IPv4, TP_ADDR_DIRECT */
} tp_addr_t;

/** S frame. */
typedef struct {
    uint32_t seq, up_ms;
    uint8_t rst;              /**< tp_reset_t; out of range is written "unknown" */
    uint8_t has_rssi, has_psram;
    int8_t rssi;              /**< dBm */
    uint32_t wifi_disc, heap_free, heap_min, heap_largest, psram_free, bad;
} tp_status_frame_t;

/** N frame. */
typedef struct {
    uint32_t seq, up_ms;
    uint8_t has_ip, has_eps, has_derp_ms;
    uint32_t ip;              /**< own tailnet IPv4, host order */
    char host[TP_HOST_MAX + 1]; /**< "" = absent; bytes outside [A-Za-z0-9._-] are written '_' */
    uint32_t eps;
    uint16_t derp;            /**< 0 = absent (then derpby/derpms are left out too) */
    uint8_t derp_by;          /**< tp_derp_by_t */
    uint32_t derp_ms;
    uint16_t near;            /**< 0 = absent (then nearms too) */
    uint32_t near_ms;
} tp_net_frame_t;

/** D frame fields, in wire order (v[] index). */
enum {
    TP_D_PU, TP_D_PCAP, TP_D_PDROP, TP_D_PREAP, TP_D_PING, TP_D_PONG,
    TP_D_CMMI, TP_D_CMMO, TP_D_H2RX, TP_D_H2WU, TP_D_H2WIN, TP_D_COUNT
};

/** D frame: every field is always written; v[TP_D_PU] is `pu` etc. */
typedef struct {
    uint32_t seq, up_ms;
    uint32_t v[TP_D_COUNT];
} tp_disco_frame_t;

/** P frame. */
typedef struct {
    uint32_t seq, up_ms;
    uint32_t peer;
    uint8_t has_pip, has_lat;
    uint32_t pip;             /**< peer tailnet IPv4, host order */
    tp_addr_t path;           /**< always written ("none" when TP_ADDR_NONE) */
    tp_addr_t hs;             /**< TP_ADDR_NONE = absent (then hsup too) */
    uint32_t hs_up_ms;
    uint32_t lat_ms;
} tp_peer_frame_t;

/** F frame. kibs is computed from bytes and ms. */
typedef struct {
    uint32_t seq, up_ms;
    uint32_t n, bytes, ms, status;
    char err[TP_ERR_MAX + 1]; /**< "" = absent (success) */
    tp_addr_t via;            /**< TP_ADDR_NONE = absent */
} tp_fetch_frame_t;

/** R frame: the DERP relay connection (protocol version 2). */
typedef struct {
    uint32_t seq, up_ms;
    uint16_t region;          /**< 0 = absent */
    uint8_t conn;             /**< 1 connected */
    uint8_t has_rxage;
    uint32_t att;             /**< connect attempts failed since last up */
    uint32_t drop;            /**< connections lost since boot */
    char err[TP_ERR_MAX + 1]; /**< last failure word, "" = absent */
    uint32_t rxage_ms;        /**< since the last frame from the relay */
} tp_relay_frame_t;

/** Protocol version written in the marker ("@TP2"). */
#define TP_PROTOCOL_VERSION 2

size_t tp_frame_status(char *buf, size_t cap, const tp_status_frame_t *f);
size_t tp_frame_net(char *buf, size_t cap, const tp_net_frame_t *f);
size_t tp_frame_disco(char *buf, size_t cap, const tp_disco_frame_t *f);
size_t tp_frame_peer(char *buf, size_t cap, const tp_peer_frame_t *f);
size_t tp_frame_fetch(char *buf, size_t cap, const tp_fetch_frame_t *f);
size_t tp_frame_relay(char *buf, size_t cap, const tp_relay_frame_t *f);

/** CRC-32/IEEE (zlib) of len bytes, continuing from crc (start with 0). */
uint32_t tp_crc32(uint32_t crc, const void *data, size_t len);

/** Throughput in tenths of KiB/s: bytes*1000/1024/ms, truncated; 0 when ms is 0. */
uint64_t tp_kibs_tenths(uint32_t bytes, uint32_t ms);

/** Wire word for a reset reason ("poweron"...); "unknown" when out of range. */
const char *tp_reset_name(unsigned rst);
/** Wire word for tp_derp_by_t ("latency"...); "none" when out of range. */
const char *tp_derp_by_name(unsigned by);

/**
 * Address of a WireGuard log's "<8 hex>:<port>" pair (IPv4 in reversed byte
 * order, as the port prints it): 127.3.3.40 is the DERP pseudo-address and
 * becomes TP_ADDR_DERP with region = port; anything else is TP_ADDR_DIRECT.
 */
tp_addr_t tp_addr_from_wg(uint32_t reversed_ip, uint16_t port);

#ifdef __cplusplus
}
#endif
#endif
