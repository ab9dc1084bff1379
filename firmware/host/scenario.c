/*
 * scenario.c: the CoreS3 case as a deterministic serial stream.
 *
 * Drives the real portable core (telemetry, probe table, DERP selection,
 * HTTP/2 flow control) through a scripted timeline and prints exactly what
 * the board's console would show: ESP-IDF log lines, the Tailscale port's
 * own line shapes, and telemetry frames. No wall clock, no randomness.
 *
 * Boot 1, the old firmware: home DERP = lowest region id (1) while region 7
 * is nearest; the control stream never returns HTTP/2 window credit and
 * stalls at 65,535 bytes; DISCO probes are freed only by a pong. Peer 2 goes
 * direct at ~34 s, then unanswered probes to unreachable candidates fill the
 * 64-slot table at the 83rd send, heartbeats stop, and the path falls back
 * to DERP. Fetches: ~9 s (47 KiB/s) on DERP, ~2.2 s (187 KiB/s) direct.
 * Boot 2, after esp_restart with the fixes: reaping on (the table never
 * fills), home DERP by latency (7), credit returned on the control stream,
 * and DERP relay liveness: at 70 s the relay goes silent without closing the
 * connection (the field case); the receive watchdog notices 90 s after the
 * last keep-alive, reconnects fail while the relay is gone (back-off 2 s,
 * 4 s), and it is connected again when the relay is back at 160 s. The R
 * frames show it throughout.
 *
 * Usage: scenario > scenario.log   (the stream on stdout, a summary on
 * stderr; exits 1 when the table-fill story above no longer holds)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailpath_telemetry.h"
#include "tp_derp.h"
#include "tp_h2fc.h"
#include "tp_port_host.h"
#include "tp_probe.h"
#include "tp_relay.h"

#define IP4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))
#define FETCH_BYTES 430080u /* 420 KiB */

static uint32_t now;        /* ms since boot */
static uint32_t rng = 1;    /* LCG for txids: deterministic */
static tp_probe_table_t probes;
static tp_derp_sel_t derp;
static tp_h2_rx_t h2;
static tp_relay_t relay;
/* The relay server: answers and sends keep-alives except during the outage. */
#define RELAY_DEAD_FROM 70000u
#define RELAY_BACK_AT 160000u
#define RELAY_KEEPALIVE_MS 60000u
static int boot;            /* 1 old firmware, 2 fixed */
static uint32_t sends, pongs;
static int filled_at = -1;  /* send count when the table first filled */
static uint32_t pongs_at_fill;
static int boot1_fill = -1, boot2_fill = -1; /* checked in main */
static tp_heap_t heap;

static int quiet;          /* a check run: print nothing */
static int reap_override = -1; /* -1: per boot; 0/1 forces probe reaping */

static void logline(char level, const char *tag, const char *fmt, ...)
{
    va_list ap;
    if (quiet) {
        return;
    }
    printf("%c (%u) %s: ", level, (unsigned)now, tag);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

static void raw(const char *s)
{
    if (!quiet) {
        printf("%s\n", s);
    }
}

static void discard(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    (void)line;
    (void)len;
}

static const char *ipstr(uint32_t ip)
{
    static char b[4][16];
    static int i;
    i = (i + 1) % 4;
    snprintf(b[i], sizeof b[i], "%u.%u.%u.%u", (unsigned)(ip >> 24), (unsigned)(ip >> 16 & 255),
             (unsigned)(ip >> 8 & 255), (unsigned)(ip & 255));
    return b[i];
}

/* wghex prints an IPv4 the way the WireGuard port does: reversed bytes. */
static const char *wghex(uint32_t ip)
{
    static char b[9];
    snprintf(b, sizeof b, "%02x%02x%02x%02x", (unsigned)(ip & 255), (unsigned)(ip >> 8 & 255),
             (unsigned)(ip >> 16 & 255), (unsigned)(ip >> 24));
    return b;
}

static void set_heap(uint32_t internal_free, uint32_t largest, uint32_t psram)
{
    heap.internal_free = internal_free;
    if (heap.internal_min == 0 || internal_free < heap.internal_min) {
        heap.internal_min = internal_free;
    }
    heap.internal_largest = largest;
    heap.psram_free = psram;
    heap.has_psram = 1;
    tp_host_set_heap(&heap);
}

/* ---- peers and their candidate endpoints ---- */
typedef struct {
    uint32_t ip;
    uint16_t port;
    uint8_t answers; /* pongs come back (after direct_from_ms) */
} ep_t;

typedef struct {
    uint32_t id, tailnet;
    const char *name;
    ep_t eps[3];
    int neps;
    int direct;              /* path is direct */
    uint32_t last_pong;
} peer_t;

static peer_t peers[] = {
    {2, IP4(100, 64, 0, 2), "nas",
     {{IP4(203, 0, 113, 7), 41641, 1}, {IP4(192, 168, 1, 20), 41641, 0}, {IP4(172, 17, 0, 1), 41641, 0}}, 3, 0, 0},
    {3, IP4(100, 64, 0, 3), "laptop", {{IP4(10, 0, 0, 5), 41641, 0}, {IP4(198, 51, 100, 9), 41641, 0}}, 2, 0, 0},
};

static uint32_t direct_from_ms; /* peer 2's NAT mapping opens at this uptime */
static uint32_t reprobe_ms = 5000; /* re-probe other candidates once direct */
static uint32_t disco_start = 19500; /* first DISCO round (first traffic to peer 2) */
static uint32_t pending_pong_at[TP_PROBE_SLOTS];
static uint8_t pending_txid[TP_PROBE_SLOTS][TP_PROBE_TXID_LEN];
static uint8_t pending_used[TP_PROBE_SLOTS];
static peer_t *pending_peer[TP_PROBE_SLOTS];
static ep_t *pending_ep[TP_PROBE_SLOTS];

static void next_txid(uint8_t out[TP_PROBE_TXID_LEN])
{
    int i;
    for (i = 0; i < TP_PROBE_TXID_LEN; i++) {
        rng = rng * 1103515245u + 12345u;
        out[i] = (uint8_t)(rng >> 16);
    }
}

static void h2_publish(void)
{
    uint8_t out[2 * TP_H2_WINDOW_UPDATE_LEN];
    size_t n;
    if (boot == 2 && (n = tp_h2_rx_updates(&h2, out, sizeof out)) > 0) {
        size_t off;
        for (off = 0; off < n; off += TP_H2_WINDOW_UPDATE_LEN) {
            uint32_t sid = (uint32_t)out[off + 8] | (uint32_t)out[off + 7] << 8;
            uint32_t inc = (uint32_t)out[off + 9] << 24 | (uint32_t)out[off + 10] << 16 |
                           (uint32_t)out[off + 11] << 8 | out[off + 12];
            tp_h2_window_update(sid, inc, h2.conn_open);
        }
    }
}

/* control stream: the server sends len bytes if the window allows. */
static void control_data(uint32_t len)
{
    uint32_t can = h2.conn_open < h2.stream_open ? h2.conn_open : h2.stream_open;
    if (len > can) {
        len = can;
    }
    if (len == 0) {
        return;
    }
    if (tp_h2_rx_data(&h2, h2.stream_id, len) == 0) {
        tp_h2_rx_consumed(&h2, len);
        tp_h2_data(len, h2.conn_open);
        h2_publish();
        if (boot == 1 && h2.conn_open == 0) {
            logline('W', "tailpath", "control stream 1: receive window exhausted after %u bytes, server can't send",
                 (unsigned)h2.received);
        }
    }
}

static void ping(peer_t *p, ep_t *e)
{
    uint8_t id[TP_PROBE_TXID_LEN];
    tp_addr_t to = {TP_ADDR_DIRECT, e->port, 0, e->ip};
    tp_probe_result_t r;
    int i;
    next_txid(id);
    r = tp_probe_add(&probes, id, (uint16_t)p->id, now);
    tp_disco_probe_table(probes.used, TP_PROBE_SLOTS);
    if (r == TP_PROBE_FULL_WARN || r == TP_PROBE_FULL) {
        tp_disco_probe_dropped();
        if (boot == 1) {
            logline('D', "ts_disco", "pending ping pool full, dropping ping to %s:%u", ipstr(e->ip), e->port);
        } else if (r == TP_PROBE_FULL_WARN) {
            logline('W', "ts_disco", "pending probe table full (%u/%u): ping to %s:%u dropped", (unsigned)probes.used,
                 TP_PROBE_SLOTS, ipstr(e->ip), e->port);
        }
        return;
    }
    sends++;
    tp_disco_ping_sent(p->id, &to);
    logline('I', "ts_disco", "Ping sent peer=%u to %s:%u txid=%02x%02x%02x%02x%02x%02x", (unsigned)p->id,
         ipstr(e->ip), e->port, id[0], id[1], id[2], id[3], id[4], id[5]);
    if (probes.used == TP_PROBE_SLOTS && filled_at < 0) {
        filled_at = (int)sends;
        pongs_at_fill = pongs;
        if (boot == 1) {
            logline('D', "ts_disco", "pending ping pool full (%u/%u)", (unsigned)probes.used, TP_PROBE_SLOTS);
        }
    }
    if (e->answers && now + 21 >= direct_from_ms) {
        for (i = 0; i < TP_PROBE_SLOTS; i++) {
            if (!pending_used[i]) {
                pending_used[i] = 1;
                pending_pong_at[i] = now + 21;
                memcpy(pending_txid[i], id, sizeof id);
                pending_peer[i] = p;
                pending_ep[i] = e;
                break;
            }
        }
    }
}

static void deliver_pongs(void)
{
    int i;
    for (i = 0; i < TP_PROBE_SLOTS; i++) {
        uint16_t pid;
        uint32_t rtt;
        if (!pending_used[i] || pending_pong_at[i] != now) {
            continue;
        }
        pending_used[i] = 0;
        if (tp_probe_pong(&probes, pending_txid[i], now, &pid, &rtt)) {
            peer_t *p = pending_peer[i];
            ep_t *e = pending_ep[i];
            tp_addr_t from = {TP_ADDR_DIRECT, e->port, 0, e->ip};
            pongs++;
            tp_disco_probe_table(probes.used, TP_PROBE_SLOTS);
            tp_disco_pong_recv(p->id, &from, rtt);
            logline('I', "ts_disco", "Pong recv from %s:%u \xe2\x86\x92 peer %u direct", ipstr(e->ip), e->port,
                 (unsigned)p->id);
            p->last_pong = now;
            if (!p->direct) {
                p->direct = 1;
                tp_peer_path(p->id, p->tailnet, &from);
                logline('I', "wireguard", "good handshake from %s:%u", wghex(e->ip), e->port);
                tp_wg_handshake(p->id, &from);
            }
        }
    }
}

/* A peer whose best address got no pong for 6.5 s falls back to DERP. */
static void check_trust(void)
{
    size_t i;
    for (i = 0; i < sizeof peers / sizeof peers[0]; i++) {
        peer_t *p = &peers[i];
        if (p->direct && now - p->last_pong >= 6500) {
            tp_addr_t d = {TP_ADDR_DERP, 0, derp.home, 0};
            p->direct = 0;
            tp_peer_path(p->id, p->tailnet, &d);
            logline('W', "tailpath", "peer %u: no pong from %s:%u for 6.5 s, path back to derp %u", (unsigned)p->id,
                 ipstr(p->eps[0].ip), p->eps[0].port, (unsigned)derp.home);
        }
    }
}

static uint32_t fetch_start, fetch_ms, fetch_n;

static void fetch_begin(void)
{
    fetch_start = now;
    fetch_ms = peers[0].direct ? 2245u : 8936u; /* 187.0 / 47.0 KiB/s */
    logline('I', "tailpath", "GET http://100.64.0.2:8080/blob (via %s)", peers[0].direct ? "direct" : "DERP");
}

static void fetch_end(void)
{
    uint64_t t = tp_kibs_tenths(FETCH_BYTES, fetch_ms);
    fetch_n++;
    if (fetch_n == 1) {
        /* First transfer: TLS, socket and WireGuard buffers stay allocated. */
        set_heap(131072, 69632, 7864320);
    }
    logline('I', "tailpath", "GET done: status 200, %u bytes in %u ms (%u.%u KiB/s)", FETCH_BYTES, (unsigned)fetch_ms,
         (unsigned)(t / 10), (unsigned)(t % 10));
    tp_fetch_result(FETCH_BYTES, fetch_ms, 200, NULL, 2);
}

static void banner(int which)
{
    if (which == 1) {
        raw("ESP-ROM:esp32s3-20210327");
        raw("Build:Mar 27 2021");
        raw("rst:0x1 (POWERON),boot:0x8 (SPI_FAST_FLASH_BOOT)");
    } else {
        raw("ESP-ROM:esp32s3-20210327");
        raw("Build:Mar 27 2021");
        raw("rst:0x3 (RTC_SW_SYS_RST),boot:0x8 (SPI_FAST_FLASH_BOOT)");
        raw("Saved PC:0x403758d6");
    }
    raw("SPIWP:0xee");
    raw("mode:DIO, clock div:1");
    now = 27;
    logline('I', "boot", "ESP-IDF v6.0 2nd stage bootloader");
    logline('I', "boot", "chip revision: v0.2");
    now = 216;
    logline('I', "esp_psram", "Found 8MB PSRAM device");
    now = 309;
    logline('I', "app_init", "Application information:");
    logline('I', "app_init", "Project name:     tailpath_cores3");
    logline('I', "app_init", "App version:      %s", which == 1 ? "0.1.0-lowest-id" : "0.1.0");
    logline('I', "app_init", "ELF file SHA256:  %s", which == 1 ? "5c1e9a0f3b2d7e64..." : "a4d7c2e81f0b9356...");
    logline('I', "app_init", "ESP-IDF:          v6.0");
}

static int relay_alive(void) { return now < RELAY_DEAD_FROM || now >= RELAY_BACK_AT; }

static void relay_report(void)
{
    tp_derp_relay_state(relay.region, relay.state == TP_RELAY_UP, relay.attempts, relay.drops, relay.err);
}

/* relay_step runs the fixed firmware's DERP relay liveness (boot 2). */
static void relay_step(uint32_t t, uint32_t connected_at)
{
    if (relay.state == TP_RELAY_UP && t > connected_at && (t - connected_at) % RELAY_KEEPALIVE_MS == 0 &&
        relay_alive()) {
        tp_relay_rx(&relay, now); /* the server's keep-alive */
        tp_derp_relay_rx();
    }
    if (t % 100 != 0) {
        return;
    }
    switch (tp_relay_poll(&relay, now)) {
    case TP_RELAY_DROP:
        logline('W', "ts_derp", "region %u: no frame for %u s, relay presumed dead; reconnecting", (unsigned)relay.region,
                (unsigned)(tp_relay_rx_age(&relay, now) / 1000));
        tp_relay_lost(&relay, now, TP_RELAY_ERR_SILENT);
        relay_report();
        break;
    case TP_RELAY_CONNECT:
        if (relay_alive()) {
            tp_relay_connected(&relay, now);
            tp_derp_relay_rx();
            logline('I', "ts_derp", "connected to region %u heap_free=%u", (unsigned)relay.region, 201344u);
        } else {
            tp_relay_failed(&relay, now, "timeout");
            logline('W', "ts_derp", "connect to region %u failed (timeout), attempt %u, next in %u s",
                    (unsigned)relay.region, (unsigned)relay.attempts, (unsigned)((relay.next_try_ms - now) / 1000));
        }
        relay_report();
        break;
    default:
        break;
    }
}

/* run_boot plays one boot from 0 to end_ms. */
static void run_boot(int which, uint32_t end_ms)
{
    uint32_t t;
    size_t i;
    tp_addr_t derp_home;
    boot = which;
    sends = pongs = 0;
    filled_at = -1;
    memset(pending_used, 0, sizeof pending_used);
    for (i = 0; i < sizeof peers / sizeof peers[0]; i++) {
        peers[i].direct = 0;
        peers[i].last_pong = 0;
    }
    memset(&heap, 0, sizeof heap);
    tp_host_set_now(0);
    banner(which);
    tp_probe_init(&probes, TP_PROBE_TTL_MS, reap_override >= 0 ? reap_override : which == 2);
    tp_host_set_writer(quiet ? discard : NULL, NULL);
    tp_derp_sel_init(&derp);
    tp_h2_rx_init(&h2, 1, TP_H2_DEFAULT_WINDOW);
    direct_from_ms = which == 1 ? 33900 : 6100;
    now = 331;
    tp_host_set_now(now);
    set_heap(221184, 110592, 8257536);
    tp_init(5000, which == 1 ? TP_RST_POWERON : TP_RST_SW);
    tp_disco_probe_table(0, TP_PROBE_SLOTS);
    tp_relay_init(&relay, 0, 0, 0);
    logline('I', "tailpath", "telemetry v2 on console every 5000 ms; probe reaping %s, home DERP by %s%s",
         which == 1 ? "off" : "on (5 s)", which == 1 ? "lowest id" : "latency",
         which == 1 ? "" : ", DERP relay watchdog 90 s");

    for (t = 332; t <= end_ms; t++) {
        now = t;
        tp_host_set_now(now);
        deliver_pongs();
        if (t == 1180) {
            logline('I', "wifi", "connected with homenet, aid = 3, channel 6, BW20, bssid = 3c:84:6a:11:22:33");
            tp_wifi_connected(-61);
        }
        if (t == 1250) {
            logline('I', "esp_netif_handlers", "sta ip: 192.168.1.50, mask: 255.255.255.0, gw: 192.168.1.1");
        }
        if (t == 1400) {
            logline('I', "tailscale", "starting, hostname cores3");
        }
        if (t == 2100) {
            logline('I', "ts_noise", "control handshake ok");
            logline('I', "ts_ctrl", "HTTP/2 map stream 1 open (window %u)", TP_H2_DEFAULT_WINDOW);
        }
        if (t == 3400) {
            control_data(49152); /* first netmap */
        }
        if (t == 3500) {
            logline('I', "ts_netmap", "netmap: 2 peers, self 100.64.0.9");
            tp_self(IP4(100, 64, 0, 9), "cores3", which == 1 ? 0 : 1);
            tp_derp_sel_region(&derp, 7);
            tp_derp_sel_region(&derp, 4);
            tp_derp_sel_region(&derp, 1);
            if (which == 1) {
                derp.home = 1; /* the old rule: lowest id */
                derp.by = TP_DERP_BY_LOWEST_ID;
            } else {
                tp_derp_by_t by;
                derp.home = tp_derp_sel_choose(&derp, &by);
            }
            logline('I', "ts_netmap", "DERP home server: derp%u.tailscale.com:443 (region %u)", (unsigned)derp.home,
                 (unsigned)derp.home);
            tp_derp_home(derp.home, (tp_derp_by_t)derp.by);
            derp_home.kind = TP_ADDR_DERP;
            derp_home.region = derp.home;
            for (i = 0; i < sizeof peers / sizeof peers[0]; i++) {
                tp_peer_path(peers[i].id, peers[i].tailnet, &derp_home);
            }
        }
        if (t == 4050 && which == 1) {
            logline('I', "ts_derp", "connected to region %u heap_free=%u", (unsigned)derp.home, 201344u);
        }
        if (t == 4050 && which == 2) {
            tp_relay_want(&relay, derp.home, now); /* after netcheck chose it; connects at the next poll */
        }
        if (which == 2) {
            relay_step(t, 4100);
        }
        if (t == 4000) {
            /* netcheck: latencies to each region */
            tp_derp_sel_measured(&derp, 1, 182);
            tp_derp_sel_measured(&derp, 4, 41);
            tp_derp_sel_measured(&derp, 7, 24);
            tp_derp_latency(1, 182);
            tp_derp_latency(4, 41);
            tp_derp_latency(7, 24);
            if (which == 2) {
                tp_derp_by_t by;
                uint16_t home = tp_derp_sel_choose(&derp, &by);
                tp_derp_home(home, by);
                logline('I', "ts_netmap", "DERP home server: derp%u.tailscale.com:443 (region %u)", (unsigned)home,
                        (unsigned)home);
                derp_home.kind = TP_ADDR_DERP;
                derp_home.region = home;
                for (i = 0; i < sizeof peers / sizeof peers[0]; i++) {
                    tp_peer_path(peers[i].id, peers[i].tailnet, &derp_home);
                }
            }
            logline('I', "tailpath", "DERP latency: region 1 182 ms, region 4 41 ms, region 7 24 ms; home %u (%s)",
                 (unsigned)derp.home, tp_derp_by_name(derp.by));
        }
        if (t == 4100) {
            logline('I', "ts_disco", "CallMeMaybe sent peer=2 to derp=%u with %u eps", (unsigned)derp.home,
                 which == 1 ? 0u : 1u);
            tp_disco_callmemaybe(1);
        }
        if (t == 4120) {
            tp_addr_t src = tp_addr_from_wg(0x2803037fu, derp.home);
            if (!quiet) {
                printf("[WireGuard] HANDSHAKE_RESPONSE: 2803037f:%u\n", (unsigned)derp.home);
            }
            tp_wg_handshake(2, &src);
        }
        if (t == 4300) {
            if (which == 2) {
                tp_relay_rx(&relay, now); /* it came through the relay */
                tp_derp_relay_rx();
            }
            tp_disco_callmemaybe(0);
            logline('I', "ts_disco", "CallMeMaybe recv peer=2 with 3 eps");
        }
        /* Control stream: a 4 KiB update every 5 s. */
        if (t > 5000 && t % 5000 == 400) {
            control_data(4096);
        }
        /* DISCO: full rounds to every candidate every 5 s from disco_start until
         * direct; then a heartbeat to the best address every 3 s and full
         * rounds to the other candidates every 5 s. */
        if ((!peers[0].direct && t >= disco_start && (t - disco_start) % 5000 == 0) || t == direct_from_ms + 91 ||
            (peers[0].direct && (t - direct_from_ms - 91) % reprobe_ms == 0)) {
            for (i = 0; i < sizeof peers / sizeof peers[0]; i++) {
                int k;
                for (k = 0; k < peers[i].neps; k++) {
                    if (peers[i].direct && k == 0) {
                        continue; /* heartbeats cover it */
                    }
                    ping(&peers[i], &peers[i].eps[k]);
                }
            }
        }
        if (peers[0].direct && (t - peers[0].last_pong) % 3000 == 0 && t != peers[0].last_pong) {
            ping(&peers[0], &peers[0].eps[0]);
        }
        if (probes.reap && (t % 1000) == 0) {
            uint32_t n = tp_probe_reap(&probes, now);
            if (n) {
                tp_disco_probes_reaped(n);
                tp_disco_probe_table(probes.used, TP_PROBE_SLOTS);
            }
        }
        check_trust();
        /* Fetches at 20 s, 40 s, then every 60 s. */
        if (t == 20000 || t == 40000 || (t > 40000 && (t - 40000) % 60000 == 0)) {
            fetch_begin();
        }
        if (fetch_start && t == fetch_start + fetch_ms) {
            fetch_end();
            fetch_start = 0;
        }
        if (t % 100 == 0) {
            tp_tick();
        }
    }
    if (quiet) {
        return;
    }
    if (which == 1) {
        boot1_fill = filled_at;
    } else {
        boot2_fill = filled_at;
    }
    if (which == 1) {
        fprintf(stderr, "scenario: boot 1: table full at send %d (%u pongs by then)\n", filled_at,
                (unsigned)pongs_at_fill);
    } else {
        fprintf(stderr, "scenario: boot 2: %u sends, %u pongs, reaped %u, table filled: %s\n", (unsigned)sends,
                (unsigned)pongs, (unsigned)probes.reaped, filled_at < 0 ? "never" : "yes");
    }
}

int main(void)
{
    int check_fill;
    /* Check run, not printed: boot 1's exact timeline with reaping on. */
    quiet = 1;
    reap_override = 1;
    run_boot(1, 150000);
    check_fill = filled_at;
    fprintf(stderr, "scenario: boot 1 timeline with reaping on: %u sends, peak table use below 64: %s\n",
            (unsigned)sends, check_fill < 0 ? "yes" : "NO");
    quiet = 0;
    reap_override = -1;
    rng = 1;
    fetch_n = fetch_start = fetch_ms = 0;
    run_boot(1, 150000);
    now = 150000;
    logline('I', "tailpath", "restarting into the fixed firmware (scenario)");
    run_boot(2, 180000);
    /* The story the demo tells must hold: fail loudly if a change breaks it. */
    if (boot1_fill != 83 || boot2_fill != -1 || check_fill != -1) {
        fprintf(stderr, "scenario: expected the table to fill at send 83 without reaping and never with it\n");
        return 1;
    }
    /* Boot 2's relay outage: lost once (the watchdog), connected at the end. */
    fprintf(stderr, "scenario: boot 2: relay lost %u time(s), %s at the end\n", (unsigned)relay.drops,
            relay.state == TP_RELAY_UP ? "connected" : "DOWN");
    if (relay.drops != 1 || relay.state != TP_RELAY_UP || strcmp(relay.err ? relay.err : "", "timeout") != 0) {
        fprintf(stderr, "scenario: expected one silent relay, noticed by the watchdog, reconnected after two timeouts\n");
        return 1;
    }
    return 0;
}
