/* tp_frame.c: telemetry frame encoder (docs/telemetry.md). Portable C99. */
#include "tp_frame.h"

#include <string.h>

static const char *const reset_names[TP_RST_COUNT] = {
    "unknown", "poweron", "ext", "sw", "panic", "int_wdt", "task_wdt", "wdt", "deepsleep",
    "brownout", "sdio", "usb", "jtag", "efuse", "pwr_glitch", "cpu_lockup",
};

static const char *const derp_by_names[TP_DERP_BY_COUNT] = {"none", "latency", "lowest-id", "fixed"};

const char *tp_reset_name(unsigned rst) { return rst < TP_RST_COUNT ? reset_names[rst] : reset_names[0]; }

const char *tp_derp_by_name(unsigned by) { return by < TP_DERP_BY_COUNT ? derp_by_names[by] : derp_by_names[0]; }

/* Nibble-table CRC-32/IEEE: 64 bytes of table, two lookups per byte. */
static const uint32_t crc_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
};

uint32_t tp_crc32(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        crc = (crc >> 4) ^ crc_nibble[crc & 0xF];
        crc = (crc >> 4) ^ crc_nibble[crc & 0xF];
    }
    return ~crc;
}

uint64_t tp_kibs_tenths(uint32_t bytes, uint32_t ms)
{
    if (ms == 0) {
        return 0;
    }
    return ((uint64_t)bytes * 10000u) / ((uint64_t)ms * 1024u);
}

tp_addr_t tp_addr_from_wg(uint32_t reversed_ip, uint16_t port)
{
    tp_addr_t a;
    uint32_t ip = ((reversed_ip & 0xFFu) << 24) | ((reversed_ip & 0xFF00u) << 8) |
                  ((reversed_ip >> 8) & 0xFF00u) | (reversed_ip >> 24);
    memset(&a, 0, sizeof a);
    if (ip == 0x7F030328u) { /* 127.3.3.40: DERP pseudo-address, port = region */
        a.kind = TP_ADDR_DERP;
        a.region = port;
    } else {
        a.kind = TP_ADDR_DIRECT;
        a.ip = ip;
        a.port = port;
    }
    return a;
}

/* w is a bounded writer; ok drops to 0 on overflow and stays there. */
typedef struct {
    char *buf;
    size_t cap, len;
    int ok;
} w_t;

static void put_ch(w_t *w, char c)
{
    if (!w->ok || w->len + 1 >= w->cap) { /* keep room for NUL */
        w->ok = 0;
        return;
    }
    w->buf[w->len++] = c;
}

static void put_str(w_t *w, const char *s)
{
    while (*s) {
        put_ch(w, *s++);
    }
}

static void put_u32(w_t *w, uint32_t v)
{
    char tmp[10];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v);
    while (n) {
        put_ch(w, tmp[--n]);
    }
}

static void put_ip(w_t *w, uint32_t ip)
{
    int i;
    for (i = 3; i >= 0; i--) {
        put_u32(w, (ip >> (8 * i)) & 0xFFu);
        if (i) {
            put_ch(w, '.');
        }
    }
}

static void put_addr(w_t *w, const tp_addr_t *a)
{
    if (a->kind == TP_ADDR_DIRECT) {
        put_ip(w, a->ip);
        put_ch(w, ':');
        put_u32(w, a->port);
    } else if (a->kind == TP_ADDR_DERP) {
        put_str(w, "derp:");
        put_u32(w, a->region);
    } else {
        put_str(w, "none");
    }
}

/* key starts a field: " key=". */
static void key(w_t *w, const char *k)
{
    put_ch(w, ' ');
    put_str(w, k);
    put_ch(w, '=');
}

static void kv_u32(w_t *w, const char *k, uint32_t v)
{
    key(w, k);
    put_u32(w, v);
}

/* put_word writes up to max bytes of s, mapping bytes outside the allowed
 * set to '_' (host: [A-Za-z0-9._-]; other words: 0x21..0x7E). */
static void put_word(w_t *w, const char *s, size_t max, int host)
{
    size_t i;
    for (i = 0; i < max && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        int good = host ? ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                           c == '.' || c == '_' || c == '-')
                        : (c >= 0x21 && c <= 0x7E);
        put_ch(w, good ? (char)c : '_');
    }
}

static void begin(w_t *w, char *buf, size_t cap, char kind, uint32_t seq, uint32_t up)
{
    w->buf = buf;
    w->cap = cap;
    w->len = 0;
    w->ok = buf != NULL && cap > 0;
    put_str(w, "@TP");
    put_u32(w, TP_PROTOCOL_VERSION);
    put_ch(w, ' ');
    put_ch(w, kind);
    kv_u32(w, "seq", seq);
    kv_u32(w, "up", up);
}

static size_t finish(w_t *w)
{
    static const char hex[] = "0123456789ABCDEF";
    uint32_t crc;
    int s;
    if (!w->ok) {
        goto fail;
    }
    crc = tp_crc32(0, w->buf, w->len);
    put_ch(w, ' ');
    put_ch(w, '*');
    for (s = 28; s >= 0; s -= 4) {
        put_ch(w, hex[(crc >> s) & 0xFu]);
    }
    if (!w->ok || w->len > TP_FRAME_MAX) {
        goto fail;
    }
    w->buf[w->len] = '\0';
    return w->len;
fail:
    if (w->buf && w->cap) {
        w->buf[0] = '\0';
    }
    return 0;
}

size_t tp_frame_status(char *buf, size_t cap, const tp_status_frame_t *f)
{
    w_t w;
    if (f == NULL) {
        return 0;
    }
    begin(&w, buf, cap, 'S', f->seq, f->up_ms);
    key(&w, "rst");
    put_str(&w, tp_reset_name(f->rst));
    if (f->has_rssi) {
        key(&w, "rssi");
        if (f->rssi < 0) {
            put_ch(&w, '-');
            put_u32(&w, (uint32_t)(-(int32_t)f->rssi));
        } else {
            put_u32(&w, (uint32_t)f->rssi);
        }
    }
    kv_u32(&w, "wdis", f->wifi_disc);
    kv_u32(&w, "hif", f->heap_free);
    kv_u32(&w, "hmin", f->heap_min);
    kv_u32(&w, "hlb", f->heap_largest);
    if (f->has_psram) {
        kv_u32(&w, "psf", f->psram_free);
    }
    kv_u32(&w, "bad", f->bad);
    return finish(&w);
}

size_t tp_frame_net(char *buf, size_t cap, const tp_net_frame_t *f)
{
    w_t w;
    if (f == NULL) {
        return 0;
    }
    begin(&w, buf, cap, 'N', f->seq, f->up_ms);
    if (f->has_ip) {
        key(&w, "ip");
        put_ip(&w, f->ip);
    }
    if (f->host[0]) {
        key(&w, "host");
        put_word(&w, f->host, TP_HOST_MAX, 1);
    }
    if (f->has_eps) {
        kv_u32(&w, "eps", f->eps);
    }
    if (f->derp) {
        kv_u32(&w, "derp", f->derp);
        key(&w, "derpby");
        put_str(&w, tp_derp_by_name(f->derp_by));
        if (f->has_derp_ms) {
            kv_u32(&w, "derpms", f->derp_ms);
        }
    }
    if (f->near) {
        kv_u32(&w, "near", f->near);
        kv_u32(&w, "nearms", f->near_ms);
    }
    return finish(&w);
}

size_t tp_frame_disco(char *buf, size_t cap, const tp_disco_frame_t *f)
{
    w_t w;
    if (f == NULL) {
        return 0;
    }
    /* Keys NUL-separated in TP_D_* order. */
    static const char keys[] = "pu\0pcap\0pdrop\0preap\0ping\0pong\0cmmi\0cmmo\0h2rx\0h2wu\0h2win";
    const char *k = keys;
    int i;
    begin(&w, buf, cap, 'D', f->seq, f->up_ms);
    for (i = 0; i < TP_D_COUNT; i++) {
        kv_u32(&w, k, f->v[i]);
        while (*k++) {
        }
    }
    return finish(&w);
}

size_t tp_frame_peer(char *buf, size_t cap, const tp_peer_frame_t *f)
{
    w_t w;
    if (f == NULL) {
        return 0;
    }
    begin(&w, buf, cap, 'P', f->seq, f->up_ms);
    kv_u32(&w, "peer", f->peer);
    if (f->has_pip) {
        key(&w, "pip");
        put_ip(&w, f->pip);
    }
    key(&w, "path");
    put_addr(&w, &f->path);
    if (f->hs.kind != TP_ADDR_NONE) {
        key(&w, "hs");
        put_addr(&w, &f->hs);
        kv_u32(&w, "hsup", f->hs_up_ms);
    }
    if (f->has_lat) {
        kv_u32(&w, "lat", f->lat_ms);
    }
    return finish(&w);
}

size_t tp_frame_fetch(char *buf, size_t cap, const tp_fetch_frame_t *f)
{
    w_t w;
    uint64_t t;
    uint32_t whole;
    if (f == NULL) {
        return 0;
    }
    begin(&w, buf, cap, 'F', f->seq, f->up_ms);
    kv_u32(&w, "n", f->n);
    kv_u32(&w, "bytes", f->bytes);
    kv_u32(&w, "ms", f->ms);
    t = tp_kibs_tenths(f->bytes, f->ms);
    key(&w, "kibs");
    whole = (uint32_t)(t / 10u); /* < 2^32: at most 4294967295*1000/1024 */
    put_u32(&w, whole);
    put_ch(&w, '.');
    put_ch(&w, (char)('0' + (int)(t - (uint64_t)whole * 10u)));
    kv_u32(&w, "status", f->status);
    if (f->err[0]) {
        key(&w, "err");
        put_word(&w, f->err, TP_ERR_MAX, 0);
    }
    if (f->via.kind != TP_ADDR_NONE) {
        key(&w, "via");
        put_addr(&w, &f->via);
    }
    return finish(&w);
}

size_t tp_frame_relay(char *buf, size_t cap, const tp_relay_frame_t *f)
{
    w_t w;
    if (f == NULL) {
        return 0;
    }
    begin(&w, buf, cap, 'R', f->seq, f->up_ms);
    if (f->region) {
        kv_u32(&w, "rg", f->region);
    }
    kv_u32(&w, "conn", f->conn ? 1u : 0u);
    kv_u32(&w, "att", f->att);
    kv_u32(&w, "drop", f->drop);
    if (f->err[0]) {
        key(&w, "err");
        put_word(&w, f->err, TP_ERR_MAX, 0);
    }
    if (f->has_rxage) {
        kv_u32(&w, "rxage", f->rxage_ms);
    }
    return finish(&w);
}
