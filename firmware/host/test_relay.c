/* test_relay.c: DERP relay liveness (fix e): reconnect with back-off for as
 * long as the relay is down, and a receive watchdog for a silent one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tailpath_telemetry.h"
#include "tp_port_host.h"
#include "tp_relay.h"

/* The field case: the relay drops, the first connects fail; the old port
 * gave up after three tries. Here every attempt is scheduled on a doubling
 * ladder up to the cap, and it keeps going: 1000 failures later the next
 * attempt is still due within max_ms. */
static void test_reconnects_for_as_long_as_down(void **state)
{
    tp_relay_t r;
    uint32_t now = 5000, waits[8];
    int i;
    (void)state;
    tp_relay_init(&r, 0, 0, 0);
    assert_int_equal(tp_relay_poll(&r, now), TP_RELAY_WAIT); /* not wanted yet */
    tp_relay_want(&r, 7, now);
    assert_int_equal(tp_relay_poll(&r, now), TP_RELAY_CONNECT); /* at once */
    tp_relay_connected(&r, now);
    assert_int_equal(r.state, TP_RELAY_UP);
    now += 30000;
    tp_relay_lost(&r, now, "eof");
    assert_int_equal(r.drops, 1);
    assert_int_equal(tp_relay_poll(&r, now), TP_RELAY_WAIT);
    assert_int_equal(tp_relay_poll(&r, now + 999), TP_RELAY_WAIT);
    now += 1000;
    for (i = 0; i < 8; i++) {
        uint32_t w = 0;
        assert_int_equal(tp_relay_poll(&r, now), TP_RELAY_CONNECT);
        tp_relay_failed(&r, now, "timeout");
        while (tp_relay_poll(&r, now + w) == TP_RELAY_WAIT) {
            w += 100;
        }
        waits[i] = w;
        now += w;
    }
    /* 2 s, 4 s, … doubling, capped at 60 s. */
    assert_int_equal(waits[0], 2000);
    assert_int_equal(waits[1], 4000);
    assert_int_equal(waits[2], 8000);
    assert_int_equal(waits[4], 32000);
    assert_int_equal(waits[5], 60000);
    assert_int_equal(waits[7], 60000);
    assert_int_equal(r.attempts, 8);
    assert_string_equal(r.err, "timeout");
    for (i = 0; i < 1000; i++) {
        now = r.next_try_ms;
        assert_int_equal(tp_relay_poll(&r, now), TP_RELAY_CONNECT);
        tp_relay_failed(&r, now, "timeout");
        assert_true(r.next_try_ms - now <= r.max_ms);
    }
    now = r.next_try_ms;
    assert_int_equal(tp_relay_poll(&r, now), TP_RELAY_CONNECT);
    tp_relay_connected(&r, now);
    assert_int_equal(r.attempts, 0);
    assert_int_equal(r.backoff_ms, r.min_ms); /* the next outage starts fresh */
}

/* Connected but silent: the watchdog fires after watchdog_ms without a
 * frame, not before; every frame (a keep-alive) resets it. */
static void test_watchdog(void **state)
{
    tp_relay_t r;
    uint32_t now = 1000;
    (void)state;
    tp_relay_init(&r, 1000, 60000, 90000);
    tp_relay_want(&r, 7, now);
    tp_relay_connected(&r, now);
    tp_relay_rx(&r, now + 60000); /* keep-alive */
    now += 60000;
    assert_int_equal(tp_relay_poll(&r, now + 90000), TP_RELAY_WAIT);
    assert_int_equal(tp_relay_rx_age(&r, now + 90000), 90000);
    assert_int_equal(tp_relay_poll(&r, now + 90001), TP_RELAY_DROP);
    tp_relay_lost(&r, now + 90001, TP_RELAY_ERR_SILENT);
    assert_int_equal(r.state, TP_RELAY_DOWN);
    assert_int_equal(r.drops, 1);
    assert_string_equal(r.err, "silent");
    assert_int_equal(tp_relay_poll(&r, now + 91001), TP_RELAY_CONNECT);
}

/* Uptime wraps at 2^32 ms (49.7 days): the schedule and the watchdog hold. */
static void test_wrap(void **state)
{
    tp_relay_t r;
    uint32_t now = 0xFFFFF000u;
    (void)state;
    tp_relay_init(&r, 1000, 60000, 90000);
    tp_relay_want(&r, 2, now);
    tp_relay_connected(&r, now);
    assert_int_equal(tp_relay_poll(&r, now + 89000), TP_RELAY_WAIT); /* wrapped past 0 */
    assert_int_equal(tp_relay_poll(&r, now + 90001), TP_RELAY_DROP);
    tp_relay_lost(&r, now + 90001, TP_RELAY_ERR_SILENT);
    assert_int_equal(tp_relay_poll(&r, now + 90500), TP_RELAY_WAIT);
    assert_int_equal(tp_relay_poll(&r, now + 91001), TP_RELAY_CONNECT);
}

/* Reports from the wrong state change nothing; a new home region starts
 * over; hostile settings are clamped. */
static void test_edges(void **state)
{
    tp_relay_t r;
    (void)state;
    tp_relay_init(&r, 5000, 10, 0); /* max below min */
    assert_int_equal(r.max_ms, 5000);
    assert_int_equal(r.watchdog_ms, TP_RELAY_WATCHDOG_MS);
    tp_relay_failed(&r, 1, "timeout"); /* not wanted: ignored */
    tp_relay_lost(&r, 1, "eof");
    assert_int_equal(r.state, TP_RELAY_IDLE);
    assert_int_equal(r.attempts + r.drops, 0);
    tp_relay_want(&r, 7, 100);
    tp_relay_lost(&r, 200, "eof"); /* not up: ignored */
    assert_int_equal(r.drops, 0);
    tp_relay_failed(&r, 200, "timeout");
    assert_int_equal(r.attempts, 1);
    tp_relay_want(&r, 7, 300); /* same region: no restart */
    assert_int_equal(r.attempts, 1);
    tp_relay_want(&r, 4, 300); /* home moved: connect to the new one now */
    assert_int_equal(r.attempts, 0);
    assert_int_equal(tp_relay_poll(&r, 300), TP_RELAY_CONNECT);
    assert_int_equal(tp_relay_rx_age(&r, 400), 0); /* nothing received yet */
}

/* The telemetry core writes an R frame once the relay was reported, with
 * the time since its last frame. */
static char last[512];
static void capture(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    if (len < sizeof last && strncmp(line, "@TP2 R ", 7) == 0) {
        memcpy(last, line, len);
        last[len] = '\0';
    }
}

static void test_core_r_frame(void **state)
{
    (void)state;
    tp_host_set_writer(capture, NULL);
    tp_host_set_now(1000);
    tp_init(5000, TP_RST_POWERON);
    last[0] = '\0';
    tp_emit_now();
    assert_string_equal(last, ""); /* no relay reported: no R frame */
    tp_derp_relay_state(7, 1, 0, 0, NULL);
    tp_host_set_now(2000);
    tp_derp_relay_rx();
    tp_host_set_now(7000);
    tp_emit_now();
    assert_non_null(strstr(last, " rg=7 conn=1 att=0 drop=0 rxage=5000 *"));
    tp_derp_relay_state(7, 0, 3, 1, "timeout-with-a-long-tail");
    tp_emit_now();
    assert_non_null(strstr(last, " conn=0 att=3 drop=1 err=timeout-with-a- rxage="));
    assert_int_equal(tp_bad_count(), 1); /* the cut word */
    tp_host_set_writer(NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reconnects_for_as_long_as_down),
        cmocka_unit_test(test_watchdog),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_core_r_frame),
    };
    return cmocka_run_group_tests_name("tp_relay", tests, NULL, NULL);
}
