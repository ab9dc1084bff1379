/* test_core.c: hooks → frames through the host port; bad input; threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "tailpath_telemetry.h"
#include "tp_port_host.h"

/* Captured output. */
static char outbuf[1 << 16];
static size_t outlen;
static int lines;

static void capture(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    assert_true(len >= 2 && len <= TP_FRAME_MAX + 1);
    assert_int_equal(line[len - 1], '\n');
    assert_null(memchr(line, '\n', len - 1)); /* one frame, one line, one call */
    if (outlen + len < sizeof outbuf) {
        memcpy(outbuf + outlen, line, len);
        outlen += len;
        outbuf[outlen] = '\0';
    }
    lines++;
}

static int setup(void **state)
{
    tp_heap_t h = {220000, 219000, 110000, 8000000, 1};
    (void)state;
    tp_host_set_writer(capture, NULL);
    tp_host_set_now(1000);
    tp_host_set_heap(&h);
    tp_init(5000, TP_RST_POWERON);
    outlen = 0;
    outbuf[0] = '\0';
    lines = 0;
    return 0;
}

/* line_with returns the captured line starting with prefix, or NULL. */
static const char *line_with(const char *prefix)
{
    static char found[TP_FRAME_BUF + 1];
    const char *p = outbuf;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (strncmp(p, prefix, strlen(prefix)) == 0 && n < sizeof found) {
            memcpy(found, p, n);
            found[n] = '\0';
            return found;
        }
        p += n + (e ? 1 : 0);
    }
    return NULL;
}

static void test_first_tick_emits_all(void **state)
{
    (void)state;
    assert_int_equal(tp_tick(), 3); /* S N D, no peers yet */
    assert_string_equal(line_with("@TP2 S"),
                        "@TP2 S seq=1 up=1000 rst=poweron wdis=0 hif=220000 hmin=219000 hlb=110000 psf=8000000 bad=0 *"
                        "2F2AB498");
    assert_non_null(line_with("@TP2 N seq=2 up=1000 *"));
    assert_non_null(line_with("@TP2 D seq=3 up=1000 pu=0 pcap=0 "));
    /* Not due again until the period passes. */
    tp_host_set_now(5999);
    assert_int_equal(tp_tick(), 0);
    tp_host_set_now(6000);
    assert_int_equal(tp_tick(), 3);
    assert_non_null(line_with("@TP2 S seq=4 up=6000 "));
}

static void test_hooks_reach_frames(void **state)
{
    tp_addr_t direct = {TP_ADDR_DIRECT, 41641, 0, 0xCB007107u}; /* 203.0.113.7 */
    tp_addr_t derp1 = {TP_ADDR_DERP, 0, 1, 0};
    (void)state;
    tp_wifi_connected(-61);
    tp_self(0x64400009u, "cores3", 1);
    tp_derp_home(1, TP_DERP_BY_LOWEST_ID);
    tp_derp_latency(1, 182);
    tp_derp_latency(7, 24);
    tp_derp_latency(3, 24); /* tie on latency: lower id is "nearest" */
    tp_peer_path(2, 0x64400002u, &derp1);
    tp_wg_handshake(2, &derp1);
    tp_disco_ping_sent(2, &direct);
    tp_disco_pong_recv(2, &direct, 21);
    tp_disco_callmemaybe(1);
    tp_disco_callmemaybe(0);
    tp_disco_probe_table(12, 64);
    tp_disco_probe_dropped();
    tp_disco_probes_reaped(30);
    tp_h2_data(48213, 17322);
    tp_h2_window_update(1, 32768, 17322); /* stream credit: not counted in h2wu */
    tp_h2_window_update(0, 32768, 50090);
    tp_host_set_now(34012);
    assert_int_equal(tp_tick(), 4);
    assert_non_null(line_with("@TP2 S seq=1 up=34012 rst=poweron rssi=-61 wdis=0 "));
    assert_non_null(line_with("@TP2 N seq=2 up=34012 ip=100.64.0.9 host=cores3 eps=1 derp=1 derpby=lowest-id "
                              "derpms=182 near=3 nearms=24 *"));
    assert_non_null(line_with("@TP2 D seq=3 up=34012 pu=12 pcap=64 pdrop=1 preap=30 ping=1 pong=1 cmmi=1 cmmo=1 "
                              "h2rx=48213 h2wu=32768 h2win=50090 *"));
    assert_non_null(line_with("@TP2 P seq=4 up=34012 peer=2 pip=100.64.0.2 path=203.0.113.7:41641 hs=derp:1 "
                              "hsup=1000 lat=21 *"));
    assert_int_equal(tp_bad_count(), 0);
}

static void test_wifi_disconnects_counted_once(void **state)
{
    (void)state;
    tp_wifi_disconnected(); /* never connected: not a drop */
    tp_wifi_connected(-70);
    tp_wifi_disconnected();
    tp_wifi_disconnected(); /* repeated event while down */
    tp_wifi_connected(-65);
    tp_tick();
    assert_non_null(line_with("@TP2 S seq=1 up=1000 rst=poweron rssi=-65 wdis=1 "));
}

static void test_fetch_frame_first(void **state)
{
    tp_addr_t derp1 = {TP_ADDR_DERP, 0, 1, 0};
    (void)state;
    tp_peer_path(2, 0, &derp1);
    tp_tick();
    outlen = 0;
    outbuf[0] = '\0';
    tp_fetch_result(393216, 8812, 200, NULL, 2);
    tp_host_set_now(2000);
    assert_int_equal(tp_tick(), 1); /* fetch only: periodic not due */
    assert_non_null(line_with("@TP2 F seq=5 up=2000 n=1 bytes=393216 ms=8812 kibs=43.5 status=200 via=derp:1 *"));
    tp_fetch_result(0, 0, 0, "timeout", -1);
    tp_tick();
    assert_non_null(line_with("@TP2 F seq=6 up=2000 n=2 bytes=0 ms=0 kibs=0.0 status=0 err=timeout *"));
}

static void test_bad_input_counted(void **state)
{
    char longhost[200];
    tp_addr_t bad_kind = {9, 0, 0, 0};
    tp_addr_t derp0 = {TP_ADDR_DERP, 0, 0, 0};
    tp_addr_t none = {TP_ADDR_NONE, 0, 0, 0};
    uint32_t i;
    (void)state;
    memset(longhost, 'h', sizeof longhost - 1);
    longhost[sizeof longhost - 1] = '\0';
    tp_self(1, NULL, 0);                 /* 1 */
    tp_self(1, longhost, 0);             /* 2: cut to 63 */
    tp_disco_ping_sent(1, NULL);         /* 3 */
    tp_disco_pong_recv(1, &bad_kind, 1); /* 4 */
    tp_derp_home(0, TP_DERP_BY_FIXED);   /* 5 */
    tp_derp_home(3, (tp_derp_by_t)77);   /* 6 */
    tp_derp_latency(0, 5);               /* 7 */
    tp_peer_path(1, 0, &derp0);          /* 8 */
    tp_wg_handshake(1, &none);           /* 9 */
    tp_disco_probe_table(70, 64);        /* 10: clamped */
    tp_fetch_result(1, 1, 200, "a-very-long-error-word", -1); /* 11: cut */
    for (i = 0; i < TP_MAX_PEERS + 3; i++) {
        tp_peer_path(100 + i, 0, &none); /* 12..14: no slot */
    }
    for (i = 0; i < TP_MAX_REGIONS + 2; i++) {
        tp_derp_latency((uint16_t)(1 + i), 10 + i); /* 15..16 */
    }
    assert_int_equal(tp_bad_count(), 16);
    tp_tick();
    {
        const char *n = line_with("@TP2 N");
        char want[80];
        assert_non_null(n);
        snprintf(want, sizeof want, " host=%.*s eps=0 ", TP_HOST_MAX, longhost);
        assert_non_null(strstr(n, want));
        assert_non_null(strstr(n, " near=1 nearms=10 "));
    }
    assert_non_null(line_with("@TP2 S seq=2 up=1000 rst=poweron wdis=0 hif=220000 hmin=219000 hlb=110000 psf=8000000 bad=16 "));
    assert_non_null(strstr(outbuf, " pu=64 pcap=64 "));
    assert_non_null(strstr(outbuf, " err=a-very-long-err "));
    assert_int_equal(lines, 1 + 3 + TP_MAX_PEERS);
}

/* Hooks from several threads while the emitter runs: no torn counters, no
 * sanitizer reports, every ping counted. */
#define THREADS 4
#define PER_THREAD 5000
static void *hammer(void *arg)
{
    tp_addr_t to = {TP_ADDR_DIRECT, 41641, 0, 0x01020304u};
    uint32_t id = (uint32_t)(uintptr_t)arg, i;
    for (i = 0; i < PER_THREAD; i++) {
        tp_disco_ping_sent(id, &to);
        tp_h2_data(1, i);
    }
    return NULL;
}

static void test_threads(void **state)
{
    pthread_t th[THREADS];
    int i;
    (void)state;
    for (i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_create(&th[i], NULL, hammer, (void *)(uintptr_t)i), 0);
    }
    for (i = 0; i < 50; i++) {
        tp_emit_now();
        outlen = 0;
    }
    for (i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
    }
    outlen = 0;
    outbuf[0] = '\0';
    tp_emit_now();
    assert_non_null(strstr(outbuf, " ping=20000 "));
    assert_non_null(strstr(outbuf, " h2rx=20000 "));
}

/* check_frames verifies every captured line: marker, length, checksum. */
static void check_frames(void)
{
    const char *p = outbuf;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n;
        char hex[9];
        assert_non_null(e);
        n = (size_t)(e - p);
        assert_true(n >= 20 && n <= TP_FRAME_MAX);
        assert_memory_equal(p, "@TP2 ", 5);
        assert_memory_equal(p + n - 10, " *", 2);
        snprintf(hex, sizeof hex, "%08X", (unsigned)tp_crc32(0, p, n - 10));
        assert_memory_equal(hex, p + n - 8, 8);
        p = e + 1;
    }
}

/* Random hook calls with hostile arguments (NULL, huge ids, long or binary
 * strings, every enum value and beyond) under ASan/UBSan: every frame stays
 * well formed and within TP_FRAME_MAX. Deterministic seed. */
static void test_random_hooks(void **state)
{
    uint32_t x = 12345u, i;
    char junk[300];
    (void)state;
#define RND() (x = x * 1664525u + 1013904223u)
    for (i = 0; i < 200000; i++) {
        tp_addr_t a;
        uint32_t r = RND(), v = RND();
        a.kind = (uint8_t)(RND() % 4);
        a.port = (uint16_t)RND();
        a.region = (uint16_t)(RND() % 3 ? RND() : 0);
        a.ip = RND();
        if (r % 17 == 0) {
            size_t n = RND() % sizeof junk, k;
            for (k = 0; k < n; k++) {
                junk[k] = (char)(RND() % 255 + 1);
            }
            junk[n] = '\0';
        }
        switch (r % 17) {
        case 0: tp_self(v, r % 3 ? junk : NULL, v % 100); break;
        case 1: tp_disco_ping_sent(v % 64, r % 5 ? &a : NULL); break;
        case 2: tp_disco_pong_recv(v % 64, r % 5 ? &a : NULL, v); break;
        case 3: tp_derp_home((uint16_t)v, (tp_derp_by_t)(r % 6)); break;
        case 4: tp_derp_latency((uint16_t)(v % 40), v); break;
        case 5: tp_peer_path(v % 64, v, r % 5 ? &a : NULL); break;
        case 6: tp_wg_handshake(v % 64, r % 5 ? &a : NULL); break;
        case 7: tp_h2_data(v, r); break;
        case 8: tp_h2_window_update(v % 3, r, v); break;
        case 9: tp_fetch_result(v, r, v % 600, r % 2 ? junk : NULL, (int32_t)(v % 80) - 10); break;
        case 10: tp_disco_probe_table(v % 100, r % 100); break;
        case 11: tp_wifi_connected((int8_t)v); break;
        case 12: tp_wifi_disconnected(); break;
        case 13: tp_disco_callmemaybe((int)(v & 1)); break;
        case 14: tp_disco_probes_reaped(v % 10); tp_disco_probe_dropped(); break;
        case 15:
            if (v & 1) {
                tp_derp_relay_state((uint16_t)r, (int)(v % 3), v, r, r % 3 ? junk : NULL);
            } else {
                tp_derp_relay_rx();
            }
            break;
        default:
            tp_host_set_now(v);
            outlen = 0;
            outbuf[0] = '\0';
            if (r & 1) {
                tp_emit_now();
            } else {
                tp_tick();
            }
            check_frames();
        }
    }
#undef RND
    assert_true(tp_bad_count() > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_first_tick_emits_all, setup),
        cmocka_unit_test_setup(test_hooks_reach_frames, setup),
        cmocka_unit_test_setup(test_wifi_disconnects_counted_once, setup),
        cmocka_unit_test_setup(test_fetch_frame_first, setup),
        cmocka_unit_test_setup(test_bad_input_counted, setup),
        cmocka_unit_test_setup(test_threads, setup),
        cmocka_unit_test_setup(test_random_hooks, setup),
    };
    return cmocka_run_group_tests_name("tp_core", tests, NULL, NULL);
}
