/*
 * tp_core.c: telemetry state, hooks and frame emission. Portable C99.
 * Hooks update g under tp_port_lock; tp_tick copies g to snap under the lock
 * and formats/writes outside it, so a console that blocks (host not reading)
 * never stalls the network task calling a hook.
 */
#include "tailpath_telemetry.h"

#include <string.h>

#include "tp_port.h"

typedef struct {
    uint32_t id;
    uint32_t pip;
    tp_addr_t path, hs;
    uint32_t hs_up_ms, lat_ms;
    uint8_t used, has_lat;
} peer_t;

typedef struct {
    uint16_t id;
    uint8_t valid;
    uint32_t ms;
} region_t;

typedef struct {
    uint8_t rst, wifi_up, has_self, has_eps;
    int8_t rssi;
    uint32_t wdis, bad;
    uint32_t self_ip, eps;
    char host[TP_HOST_MAX + 1];
    uint16_t derp;
    uint8_t derp_by;
    region_t regions[TP_MAX_REGIONS];
    tp_disco_frame_t d; /* D frame counters (seq and up unused) */
    peer_t peers[TP_MAX_PEERS];
    tp_fetch_frame_t fetch;
    uint8_t fetch_pending;
    uint32_t fetch_n;
    /* DERP relay (R frame) */
    uint8_t relay_known, relay_conn, relay_has_rx;
    uint16_t relay_region;
    uint32_t relay_att, relay_drop, relay_rx_up;
    char relay_err[TP_ERR_MAX + 1];
} state_t;

static state_t g;
/* Owned by the emitting task only. */
static state_t snap;
static char line[TP_FRAME_BUF];
static uint32_t seq, period_ms, next_ms;
static uint8_t started;

void tp_init(uint32_t period, tp_reset_t reset_reason)
{
    tp_port_lock();
    memset(&g, 0, sizeof g);
    g.rst = (uint8_t)(reset_reason < TP_RST_COUNT ? reset_reason : TP_RST_UNKNOWN);
    tp_port_unlock();
    seq = 0;
    period_ms = period ? period : 5000u;
    started = 0;
}

uint32_t tp_bad_count(void)
{
    uint32_t n;
    tp_port_lock();
    n = g.bad;
    tp_port_unlock();
    return n;
}

void tp_wifi_connected(int8_t rssi)
{
    tp_port_lock();
    g.wifi_up = 1;
    g.rssi = rssi;
    tp_port_unlock();
}

void tp_wifi_rssi(int8_t rssi)
{
    tp_port_lock();
    g.rssi = rssi;
    tp_port_unlock();
}

void tp_wifi_disconnected(void)
{
    tp_port_lock();
    if (g.wifi_up) {
        g.wdis++;
    }
    g.wifi_up = 0;
    tp_port_unlock();
}

void tp_self(uint32_t ip, const char *host, uint32_t endpoints)
{
    size_t n = 0;
    tp_port_lock();
    g.self_ip = ip;
    g.has_self = ip != 0;
    g.eps = endpoints;
    g.has_eps = 1;
    if (host == NULL) {
        g.bad++;
    } else {
        while (n < TP_HOST_MAX && host[n]) {
            g.host[n] = host[n];
            n++;
        }
        g.host[n] = '\0';
        if (host[n]) {
            g.bad++; /* cut */
        }
    }
    tp_port_unlock();
}

/* peer_slot returns the slot for id, taking a free one; NULL (and bad++) when
 * all TP_MAX_PEERS are in use. Call with the lock held. */
/* copy_word copies at most TP_ERR_MAX bytes of src (NULL: "") into dst;
 * returns 1 when src was longer. */
static int copy_word(char dst[TP_ERR_MAX + 1], const char *src)
{
    size_t n = 0;
    while (src != NULL && n < TP_ERR_MAX && src[n]) {
        dst[n] = src[n];
        n++;
    }
    dst[n] = '\0';
    return src != NULL && src[n] != '\0';
}

void tp_derp_relay_state(uint16_t region, int connected, uint32_t attempts, uint32_t drops, const char *err)
{
    tp_port_lock();
    g.relay_known = 1;
    g.relay_region = region;
    g.relay_conn = connected != 0;
    g.relay_att = attempts;
    g.relay_drop = drops;
    if (copy_word(g.relay_err, err)) {
        g.bad++;
    }
    tp_port_unlock();
}

void tp_derp_relay_rx(void)
{
    uint32_t now = tp_port_now_ms();
    tp_port_lock();
    g.relay_rx_up = now;
    g.relay_has_rx = 1;
    tp_port_unlock();
}

static peer_t *peer_slot(uint32_t id)
{
    int i, free_i = -1;
    for (i = 0; i < TP_MAX_PEERS; i++) {
        if (g.peers[i].used && g.peers[i].id == id) {
            return &g.peers[i];
        }
        if (!g.peers[i].used && free_i < 0) {
            free_i = i;
        }
    }
    if (free_i < 0) {
        g.bad++;
        return NULL;
    }
    memset(&g.peers[free_i], 0, sizeof g.peers[free_i]);
    g.peers[free_i].used = 1;
    g.peers[free_i].id = id;
    return &g.peers[free_i];
}

static int addr_ok(const tp_addr_t *a)
{
    return a != NULL && a->kind <= TP_ADDR_DERP && (a->kind != TP_ADDR_DERP || a->region != 0);
}

void tp_disco_ping_sent(uint32_t peer, const tp_addr_t *to)
{
    tp_port_lock();
    g.d.ping++;
    if (!addr_ok(to)) {
        g.bad++;
    } else {
        (void)peer_slot(peer);
    }
    tp_port_unlock();
}

void tp_disco_pong_recv(uint32_t peer, const tp_addr_t *from, uint32_t rtt_ms)
{
    peer_t *p;
    tp_port_lock();
    g.d.pong++;
    if (!addr_ok(from)) {
        g.bad++;
    } else if ((p = peer_slot(peer)) != NULL) {
        p->lat_ms = rtt_ms;
        p->has_lat = 1;
        if (from->kind == TP_ADDR_DIRECT) {
            p->path = *from; /* a direct pong makes the path direct, as in magicsock */
        }
    }
    tp_port_unlock();
}

void tp_disco_probe_dropped(void)
{
    tp_port_lock();
    g.d.pdrop++;
    tp_port_unlock();
}

void tp_disco_probes_reaped(uint32_t n)
{
    tp_port_lock();
    g.d.preap += n;
    tp_port_unlock();
}

void tp_disco_probe_table(uint32_t used, uint32_t capacity)
{
    tp_port_lock();
    if (used > capacity) {
        g.bad++;
        used = capacity;
    }
    g.d.pu = used;
    g.d.pcap = capacity;
    tp_port_unlock();
}

void tp_disco_callmemaybe(int outgoing)
{
    tp_port_lock();
    if (outgoing) {
        g.d.cmmo++;
    } else {
        g.d.cmmi++;
    }
    tp_port_unlock();
}

void tp_derp_home(uint16_t region, tp_derp_by_t by)
{
    tp_port_lock();
    if (region == 0 || (unsigned)by >= TP_DERP_BY_COUNT) {
        g.bad++;
    } else {
        g.derp = region;
        g.derp_by = (uint8_t)by;
    }
    tp_port_unlock();
}

void tp_derp_latency(uint16_t region, uint32_t ms)
{
    int i, free_i = -1;
    tp_port_lock();
    if (region == 0) {
        g.bad++;
        tp_port_unlock();
        return;
    }
    for (i = 0; i < TP_MAX_REGIONS; i++) {
        if (g.regions[i].valid && g.regions[i].id == region) {
            break;
        }
        if (!g.regions[i].valid && free_i < 0) {
            free_i = i;
        }
    }
    if (i == TP_MAX_REGIONS) {
        i = free_i;
    }
    if (i < 0) {
        g.bad++;
    } else {
        g.regions[i].id = region;
        g.regions[i].valid = 1;
        g.regions[i].ms = ms;
    }
    tp_port_unlock();
}

void tp_peer_path(uint32_t peer, uint32_t tailnet_ip, const tp_addr_t *path)
{
    peer_t *p;
    tp_port_lock();
    if (!addr_ok(path)) {
        g.bad++;
    } else if ((p = peer_slot(peer)) != NULL) {
        if (tailnet_ip) {
            p->pip = tailnet_ip;
        }
        p->path = *path;
    }
    tp_port_unlock();
}

void tp_wg_handshake(uint32_t peer, const tp_addr_t *src)
{
    peer_t *p;
    uint32_t now = tp_port_now_ms();
    tp_port_lock();
    if (!addr_ok(src) || src->kind == TP_ADDR_NONE) {
        g.bad++;
    } else if ((p = peer_slot(peer)) != NULL) {
        p->hs = *src;
        p->hs_up_ms = now;
    }
    tp_port_unlock();
}

void tp_h2_data(uint32_t bytes, uint32_t conn_window_open)
{
    tp_port_lock();
    g.d.h2rx += bytes;
    g.d.h2win = conn_window_open;
    tp_port_unlock();
}

void tp_h2_window_update(uint32_t stream_id, uint32_t increment, uint32_t conn_window_open)
{
    tp_port_lock();
    if (stream_id == 0) {
        g.d.h2wu += increment;
    }
    g.d.h2win = conn_window_open;
    tp_port_unlock();
}

void tp_fetch_result(uint32_t bytes, uint32_t ms, uint32_t http_status, const char *err, int32_t peer)
{
    int i;
    tp_port_lock();
    memset(&g.fetch, 0, sizeof g.fetch);
    g.fetch.n = ++g.fetch_n;
    g.fetch.bytes = bytes;
    g.fetch.ms = ms;
    g.fetch.status = http_status;
    if (copy_word(g.fetch.err, err)) {
        g.bad++;
    }
    if (peer >= 0) {
        for (i = 0; i < TP_MAX_PEERS; i++) {
            if (g.peers[i].used && g.peers[i].id == (uint32_t)peer) {
                g.fetch.via = g.peers[i].path;
            }
        }
    }
    g.fetch_pending = 1;
    tp_port_unlock();
}

static void out(size_t n)
{
    if (n == 0) {
        return; /* cannot happen with TP_FRAME_BUF; never print half a frame */
    }
    line[n] = '\n';
    tp_port_write(line, n + 1);
}

/* emit_periodic writes S, N, D and the P frames from snap. */
static int emit_periodic(uint32_t now)
{
    tp_status_frame_t s;
    tp_net_frame_t n;
    tp_disco_frame_t d;
    tp_peer_frame_t p;
    tp_heap_t h;
    int i, count = 0, best = -1;

    memset(&h, 0, sizeof h);
    tp_port_heap(&h);

    memset(&s, 0, sizeof s);
    s.seq = ++seq;
    s.up_ms = now;
    s.rst = snap.rst;
    s.has_rssi = snap.wifi_up;
    s.rssi = snap.rssi;
    s.wifi_disc = snap.wdis;
    s.heap_free = h.internal_free;
    s.heap_min = h.internal_min;
    s.heap_largest = h.internal_largest;
    s.has_psram = h.has_psram;
    s.psram_free = h.psram_free;
    s.bad = snap.bad;
    out(tp_frame_status(line, sizeof line, &s));
    count++;

    memset(&n, 0, sizeof n);
    n.seq = ++seq;
    n.up_ms = now;
    n.has_ip = snap.has_self;
    n.ip = snap.self_ip;
    memcpy(n.host, snap.host, sizeof n.host);
    n.has_eps = snap.has_eps;
    n.eps = snap.eps;
    n.derp = snap.derp;
    n.derp_by = snap.derp_by;
    for (i = 0; i < TP_MAX_REGIONS; i++) {
        const region_t *r = &snap.regions[i];
        if (!r->valid) {
            continue;
        }
        if (r->id == snap.derp) {
            n.has_derp_ms = 1;
            n.derp_ms = r->ms;
        }
        if (best < 0 || r->ms < snap.regions[best].ms ||
            (r->ms == snap.regions[best].ms && r->id < snap.regions[best].id)) {
            best = i;
        }
    }
    if (best >= 0) {
        n.near = snap.regions[best].id;
        n.near_ms = snap.regions[best].ms;
    }
    out(tp_frame_net(line, sizeof line, &n));
    count++;

    d = snap.d;
    d.seq = ++seq;
    d.up_ms = now;
    out(tp_frame_disco(line, sizeof line, &d));
    count++;

    for (i = 0; i < TP_MAX_PEERS; i++) {
        const peer_t *q = &snap.peers[i];
        if (!q->used) {
            continue;
        }
        memset(&p, 0, sizeof p);
        p.seq = ++seq;
        p.up_ms = now;
        p.peer = q->id;
        p.has_pip = q->pip != 0;
        p.pip = q->pip;
        p.path = q->path;
        p.hs = q->hs;
        p.hs_up_ms = q->hs_up_ms;
        p.has_lat = q->has_lat;
        p.lat_ms = q->lat_ms;
        out(tp_frame_peer(line, sizeof line, &p));
        count++;
    }

    if (snap.relay_known) {
        tp_relay_frame_t r;
        memset(&r, 0, sizeof r);
        r.seq = ++seq;
        r.up_ms = now;
        r.region = snap.relay_region;
        r.conn = snap.relay_conn;
        r.att = snap.relay_att;
        r.drop = snap.relay_drop;
        memcpy(r.err, snap.relay_err, sizeof r.err);
        r.has_rxage = snap.relay_has_rx;
        r.rxage_ms = now - snap.relay_rx_up;
        out(tp_frame_relay(line, sizeof line, &r));
        count++;
    }
    return count;
}

static int tick(int force)
{
    uint32_t now = tp_port_now_ms();
    int count = 0, periodic;
    tp_port_lock();
    snap = g;
    g.fetch_pending = 0;
    tp_port_unlock();
    if (snap.fetch_pending) {
        snap.fetch.seq = ++seq;
        snap.fetch.up_ms = now;
        out(tp_frame_fetch(line, sizeof line, &snap.fetch));
        count++;
    }
    periodic = force || !started || (int32_t)(now - next_ms) >= 0;
    if (periodic) {
        started = 1;
        next_ms = now + period_ms;
        count += emit_periodic(now);
    }
    return count;
}

int tp_tick(void) { return tick(0); }

int tp_emit_now(void) { return tick(1); }
