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

/*
 * The field table at run time: each TP_<KIND>_FIELDS entry (tp_frame.h)
 * becomes one field_t, and put_frame writes a frame from its kind's table.
 * A table is smaller than code per field (the Xtensa budget in host/Makefile).
 */
enum { T_U32, T_U16, T_I8, T_BOOL, T_IP, T_ADDR, T_RESET, T_DERPBY, T_HOST, T_WORD, T_KIBS };

#define NONE 0xFFu /* no flag, no condition (offset 0 is seq: never one) */

typedef struct {
    char key[7];       /* wire key, NUL-terminated */
    uint8_t type;      /* T_* */
    uint8_t off;       /* offset of the member */
    uint8_t flag;      /* offset of a uint8_t that must be non-zero, or NONE */
    uint8_t cond;      /* offset of bytes not all zero, or NONE */
    uint8_t cond_size; /* their count */
} field_t;

/* One entry as a field_t, inside a function that has typedef'd its frame
 * struct as frame_t_. OFF_<TYPE>: the member's offset (KIBS has none).
 * COND_<WHEN>(member, TYPE): flag, cond, cond_size; a WHEN that takes its
 * own arguments leaves (member, TYPE) to EAT_. SET_AT_<TYPE>: the bytes
 * that say a member is set. */
#define EAT_(...)
#define AT_(m) (uint8_t) offsetof(frame_t_, m)
#define SIZE_(m) (uint8_t) sizeof(((frame_t_ *)0)->m)
#define OFF_U32(m) AT_(m)
#define OFF_U16(m) AT_(m)
#define OFF_I8(m) AT_(m)
#define OFF_BOOL(m) AT_(m)
#define OFF_IP(m) AT_(m)
#define OFF_ADDR(m) AT_(m)
#define OFF_RESET(m) AT_(m)
#define OFF_DERPBY(m) AT_(m)
#define OFF_HOST(m) AT_(m)
#define OFF_WORD(m) AT_(m)
#define OFF_KIBS(m) 0
#define SET_AT_U16(m) AT_(m), SIZE_(m)
#define SET_AT_U32(m) AT_(m), SIZE_(m)
#define SET_AT_HOST(m) AT_(m), 1
#define SET_AT_WORD(m) AT_(m), 1
#define SET_AT_ADDR(m) AT_(m.kind), SIZE_(m.kind)
#define COND_ALWAYS NONE, NONE, 0 EAT_
#define COND_HAS(flag) AT_(flag), NONE, 0 EAT_
#define COND_SET COND_SET_
#define COND_SET_(m, TYPE) NONE, SET_AT_##TYPE(m)
#define COND_IF(other) NONE, AT_(other), SIZE_(other) EAT_
#define COND_HAS_IF(flag, other) AT_(flag), AT_(other), SIZE_(other) EAT_
#define FIELD_(member, k, TYPE, WHEN) {k, T_##TYPE, OFF_##TYPE(member), COND_##WHEN(member, TYPE)},

static int nonzero(const uint8_t *p, size_t n)
{
    while (n--) {
        if (*p++) {
            return 1;
        }
    }
    return 0;
}

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void put_value(w_t *w, const field_t *d, const uint8_t *p)
{
    const uint8_t *m = p + d->off;
    uint16_t u16;
    uint64_t t;
    switch (d->type) {
    case T_U32:
        put_u32(w, get_u32(m));
        break;
    case T_U16:
        memcpy(&u16, m, sizeof u16);
        put_u32(w, u16);
        break;
    case T_I8:
        if ((int8_t)*m < 0) {
            put_ch(w, '-');
            put_u32(w, (uint32_t)(-(int32_t)(int8_t)*m));
        } else {
            put_u32(w, *m);
        }
        break;
    case T_BOOL:
        put_ch(w, *m ? '1' : '0');
        break;
    case T_IP:
        put_ip(w, get_u32(m));
        break;
    case T_ADDR:
        put_addr(w, (const tp_addr_t *)(const void *)m);
        break;
    case T_RESET:
        put_str(w, tp_reset_name(*m));
        break;
    case T_DERPBY:
        put_str(w, tp_derp_by_name(*m));
        break;
    case T_HOST:
        put_word(w, (const char *)m, TP_HOST_MAX, 1);
        break;
    case T_WORD:
        put_word(w, (const char *)m, TP_ERR_MAX, 0);
        break;
    case T_KIBS: /* F frame: from bytes and ms */
        t = tp_kibs_tenths(get_u32(p + offsetof(tp_fetch_frame_t, bytes)), get_u32(p + offsetof(tp_fetch_frame_t, ms)));
        put_u32(w, (uint32_t)(t / 10u)); /* < 2^32: at most 4294967295*1000/1024 */
        put_ch(w, '.');
        put_ch(w, (char)('0' + (int)(t % 10u)));
        break;
    }
}

/* put_frame writes frame f: seq and up_ms (first in every frame struct, as in
 * tp_status_frame_t), then the members fields[] describes. */
static size_t put_frame(char *buf, size_t cap, char kind, const void *f, const field_t *fields, size_t n)
{
    const uint8_t *p = (const uint8_t *)f;
    w_t w;
    size_t i;
    if (f == NULL) {
        return 0;
    }
    begin(&w, buf, cap, kind, get_u32(p + offsetof(tp_status_frame_t, seq)), get_u32(p + offsetof(tp_status_frame_t, up_ms)));
    for (i = 0; i < n; i++) {
        const field_t *d = &fields[i];
        if ((d->flag != NONE && !p[d->flag]) || (d->cond != NONE && !nonzero(p + d->cond, d->cond_size))) {
            continue;
        }
        key(&w, d->key);
        put_value(&w, d, p);
    }
    return finish(&w);
}

/* Offsets are bytes below NONE. */
#define FITS_(name, letter, FIELDS) typedef char name##_fits_[sizeof(tp_##name##_frame_t) < NONE ? 1 : -1];
TP_FRAME_KINDS(FITS_)

/* tp_frame_status() ... tp_frame_relay(), each with its table. */
#define DEFINE_FRAME_(name, letter, FIELDS)                                          \
    size_t tp_frame_##name(char *buf, size_t cap, const tp_##name##_frame_t *f)     \
    {                                                                                \
        typedef tp_##name##_frame_t frame_t_;                                        \
        static const field_t fields[] = {FIELDS(FIELD_)};                            \
        return put_frame(buf, cap, letter, f, fields, sizeof fields / sizeof fields[0]); \
    }
TP_FRAME_KINDS(DEFINE_FRAME_)
