/*
 * tp_frame.h: encoder for tailpath telemetry frames, protocol version 2
 * (docs/telemetry.md; version 2 added the R frame and writes "@TP2"). Portable C99: no ESP-IDF headers, no heap, no stdio.
 *
 * Each tp_frame_* function writes one frame, without line ending, into buf
 * and returns its length (at most TP_FRAME_MAX bytes, NUL-terminated when
 * cap > length), or 0 when buf is NULL or cap is too small. Which fields are
 * written, and how, is the field table below (TP_<KIND>_FIELDS).
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

/*
 * The frames' fields: the C side's one table (docs/telemetry.md; the Go
 * side's is the tp tags in devlink/telemetry). One X(member, "key", TYPE,
 * WHEN) entry per field, in wire order, after seq and up. An entry declares
 * the struct member (and its has_ flag), makes tp_frame_<kind>() write the
 * field, and lets the host tests fill the struct from the vectors. Adding a
 * field is one entry here plus its row in docs/telemetry.md; then give the
 * member a value where tp_core.c fills the frame.
 *
 * TYPE, the member's C type and how it is written:
 *   U32    uint32_t, decimal         U16     uint16_t, decimal
 *   I8     int8_t, signed decimal    BOOL    uint8_t, "0" or "1"
 *   IP     uint32_t IPv4 in host order (1.2.3.4 = 0x01020304), dotted
 *   ADDR   tp_addr_t: "a.b.c.d:port", "derp:<region>" or "none"
 *   RESET  uint8_t tp_reset_t, its word ("unknown" when out of range)
 *   DERPBY uint8_t tp_derp_by_t, its word ("none" when out of range)
 *   HOST   char[TP_HOST_MAX + 1]; bytes outside [A-Za-z0-9._-] written '_'
 *   WORD   char[TP_ERR_MAX + 1]; bytes outside 0x21..0x7E written '_'
 *   KIBS   no member: bytes*1000/1024/ms in tenths (tp_kibs_tenths), "187.0"
 * WHEN, when the field is written:
 *   ALWAYS           every frame
 *   HAS(flag)        when the uint8_t member flag (declared too) is non-zero
 *   SET              when the member is set: non-zero, not "", not TP_ADDR_NONE
 *   IF(m)            when member m (a path such as hs.kind) is non-zero
 *   HAS_IF(flag, m)  both
 * Every entry ends in a backslash, so a new last entry is one line. Comments
 * in these lists must be C comments: a // would swallow the entries after it.
 */
#define TP_STATUS_FIELDS(X) \
    X(rst,          "rst",  RESET, ALWAYS)        \
    X(rssi,         "rssi", I8,    HAS(has_rssi)) /* dBm */ \
    X(wifi_disc,    "wdis", U32,   ALWAYS)        \
    X(heap_free,    "hif",  U32,   ALWAYS)        \
    X(heap_min,     "hmin", U32,   ALWAYS)        \
    X(heap_largest, "hlb",  U32,   ALWAYS)        \
    X(psram_free,   "psf",  U32,   HAS(has_psram)) \
    X(bad,          "bad",  U32,   ALWAYS) \
    /* end of TP_STATUS_FIELDS */

#define TP_NET_FIELDS(X) \
    X(ip,      "ip",     IP,     HAS(has_ip))  /* own tailnet IPv4 */ \
    X(host,    "host",   HOST,   SET)          \
    X(eps,     "eps",    U32,    HAS(has_eps)) \
    X(derp,    "derp",   U16,    SET)          /* 0 = absent, then derpby and derpms too */ \
    X(derp_by, "derpby", DERPBY, IF(derp))     \
    X(derp_ms, "derpms", U32,    HAS_IF(has_derp_ms, derp)) \
    X(near,    "near",   U16,    SET)          /* 0 = absent, then nearms too */ \
    X(near_ms, "nearms", U32,    IF(near)) \
    /* end of TP_NET_FIELDS */

#define TP_DISCO_FIELDS(X) \
    X(pu,    "pu",    U32, ALWAYS) \
    X(pcap,  "pcap",  U32, ALWAYS) \
    X(pdrop, "pdrop", U32, ALWAYS) \
    X(preap, "preap", U32, ALWAYS) \
    X(ping,  "ping",  U32, ALWAYS) \
    X(pong,  "pong",  U32, ALWAYS) \
    X(cmmi,  "cmmi",  U32, ALWAYS) \
    X(cmmo,  "cmmo",  U32, ALWAYS) \
    X(h2rx,  "h2rx",  U32, ALWAYS) \
    X(h2wu,  "h2wu",  U32, ALWAYS) \
    X(h2win, "h2win", U32, ALWAYS) \
    /* end of TP_DISCO_FIELDS */

#define TP_PEER_FIELDS(X) \
    X(peer,     "peer", U32,  ALWAYS)       \
    X(pip,      "pip",  IP,   HAS(has_pip)) /* peer tailnet IPv4 */ \
    X(path,     "path", ADDR, ALWAYS)       /* "none" when TP_ADDR_NONE */ \
    X(hs,       "hs",   ADDR, SET)          /* TP_ADDR_NONE = absent, then hsup too */ \
    X(hs_up_ms, "hsup", U32,  IF(hs.kind))  \
    X(lat_ms,   "lat",  U32,  HAS(has_lat)) \
    /* end of TP_PEER_FIELDS */

#define TP_FETCH_FIELDS(X) \
    X(n,      "n",      U32,  ALWAYS) \
    X(bytes,  "bytes",  U32,  ALWAYS) \
    X(ms,     "ms",     U32,  ALWAYS) \
    X(kibs,   "kibs",   KIBS, ALWAYS) /* from bytes and ms */ \
    X(status, "status", U32,  ALWAYS) \
    X(err,    "err",    WORD, SET)    /* "" = absent (success) */ \
    X(via,    "via",    ADDR, SET) \
    /* end of TP_FETCH_FIELDS */

#define TP_RELAY_FIELDS(X) \
    X(region,   "rg",    U16,  SET)             /* 0 = absent */ \
    X(conn,     "conn",  BOOL, ALWAYS)          /* 1 connected */ \
    X(att,      "att",   U32,  ALWAYS)          /* connect attempts failed since last up */ \
    X(drop,     "drop",  U32,  ALWAYS)          /* connections lost since boot */ \
    X(err,      "err",   WORD, SET)             /* last failure word, "" = absent */ \
    X(rxage_ms, "rxage", U32,  HAS(has_rxage))  /* since the last frame from the relay */ \
    /* end of TP_RELAY_FIELDS */

/** The frame kinds: X(name, 'letter', FIELDS) gives tp_<name>_frame_t and tp_frame_<name>(). */
#define TP_FRAME_KINDS(X) \
    X(status, 'S', TP_STATUS_FIELDS) \
    X(net,    'N', TP_NET_FIELDS)    \
    X(disco,  'D', TP_DISCO_FIELDS)  \
    X(peer,   'P', TP_PEER_FIELDS)   \
    X(fetch,  'F', TP_FETCH_FIELDS)  \
    X(relay,  'R', TP_RELAY_FIELDS)

/* Declaring an entry's member and flag. */
#define TP_CTYPE_U32(m) uint32_t m;
#define TP_CTYPE_U16(m) uint16_t m;
#define TP_CTYPE_I8(m) int8_t m;
#define TP_CTYPE_BOOL(m) uint8_t m;
#define TP_CTYPE_IP(m) uint32_t m;
#define TP_CTYPE_ADDR(m) tp_addr_t m;
#define TP_CTYPE_RESET(m) uint8_t m;
#define TP_CTYPE_DERPBY(m) uint8_t m;
#define TP_CTYPE_HOST(m) char m[TP_HOST_MAX + 1];
#define TP_CTYPE_WORD(m) char m[TP_ERR_MAX + 1];
#define TP_CTYPE_KIBS(m)
#define TP_FLAG_ALWAYS
#define TP_FLAG_HAS(flag) uint8_t flag;
#define TP_FLAG_SET
#define TP_FLAG_IF(m)
#define TP_FLAG_HAS_IF(flag, m) uint8_t flag;
#define TP_DECLARE_FIELD_(member, key, TYPE, WHEN) TP_CTYPE_##TYPE(member) TP_FLAG_##WHEN

/* tp_status_frame_t, tp_net_frame_t, tp_disco_frame_t, tp_peer_frame_t,
 * tp_fetch_frame_t, tp_relay_frame_t: seq, up_ms, then the kind's members. */
#define TP_DECLARE_FRAME_(name, letter, FIELDS) \
    typedef struct {                            \
        uint32_t seq, up_ms;                    \
        FIELDS(TP_DECLARE_FIELD_)               \
    } tp_##name##_frame_t;
TP_FRAME_KINDS(TP_DECLARE_FRAME_)

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
