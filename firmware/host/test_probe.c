/* test_probe.c: pending DISCO probe table (fix a). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tp_probe.h"

static void txid(uint8_t out[TP_PROBE_TXID_LEN], uint32_t n)
{
    memset(out, 0xA5, TP_PROBE_TXID_LEN);
    memcpy(out, &n, sizeof n);
}

/* Without reaping the table fills with unanswered probes and stays full:
 * the old behaviour, now with a warning and a drop count. */
static void test_fills_without_reaping(void **state)
{
    tp_probe_table_t t;
    uint8_t id[TP_PROBE_TXID_LEN];
    uint32_t i, now = 0;
    (void)state;
    tp_probe_init(&t, 0, 0);
    for (i = 0; i < TP_PROBE_SLOTS; i++, now += 1000) {
        txid(id, i);
        assert_int_equal(tp_probe_add(&t, id, 2, now), TP_PROBE_ADDED);
    }
    assert_int_equal(t.used, 64);
    txid(id, 999);
    assert_int_equal(tp_probe_add(&t, id, 2, now + 60000), TP_PROBE_FULL_WARN);
    assert_int_equal(tp_probe_add(&t, id, 2, now + 61000), TP_PROBE_FULL); /* warned once */
    assert_int_equal(t.dropped, 2);
    assert_int_equal(t.reaped, 0);
    assert_int_equal(tp_probe_reap(&t, now + 600000), 0); /* reaping off */
    /* A pong frees a slot and re-arms the warning. */
    txid(id, 5);
    assert_int_equal(tp_probe_pong(&t, id, now, NULL, NULL), 1);
    txid(id, 1000);
    assert_int_equal(tp_probe_add(&t, id, 2, now), TP_PROBE_ADDED);
    assert_int_equal(tp_probe_add(&t, id, 2, now), TP_PROBE_FULL_WARN);
}

/* With reaping on, one unanswered probe a second never fills the table:
 * at most TTL/interval slots are ever in use. */
static void test_reaping_keeps_room(void **state)
{
    tp_probe_table_t t;
    uint8_t id[TP_PROBE_TXID_LEN];
    uint32_t i, now = 0, peak = 0;
    (void)state;
    tp_probe_init(&t, 5000, 1);
    for (i = 0; i < 1000; i++, now += 250) { /* 4 probes/s for 250 s */
        txid(id, i);
        assert_int_equal(tp_probe_add(&t, id, 3, now), TP_PROBE_ADDED);
        if (t.used > peak) {
            peak = t.used;
        }
    }
    assert_int_equal(peak, 20); /* 5 s TTL * 4/s */
    assert_int_equal(t.dropped, 0);
    assert_int_equal(t.reaped, 1000 - t.used);
}

static void test_pong_rtt_and_expiry(void **state)
{
    tp_probe_table_t t;
    uint8_t id[TP_PROBE_TXID_LEN], other[TP_PROBE_TXID_LEN];
    uint16_t peer = 0;
    uint32_t rtt = 0;
    (void)state;
    tp_probe_init(&t, 5000, 1);
    txid(id, 1);
    txid(other, 2);
    assert_int_equal(tp_probe_add(&t, id, 7, 1000), TP_PROBE_ADDED);
    assert_int_equal(tp_probe_pong(&t, other, 1010, &peer, &rtt), 0); /* unknown txid */
    assert_int_equal(tp_probe_pong(&t, id, 1021, &peer, &rtt), 1);
    assert_int_equal(peer, 7);
    assert_int_equal(rtt, 21);
    assert_int_equal(tp_probe_pong(&t, id, 1022, &peer, &rtt), 0); /* already freed */
    /* A pong after the TTL doesn't count; the reaper frees it. */
    assert_int_equal(tp_probe_add(&t, id, 7, 2000), TP_PROBE_ADDED);
    assert_int_equal(tp_probe_pong(&t, id, 7000, &peer, &rtt), 0);
    assert_int_equal(tp_probe_reap(&t, 7000), 1);
    assert_int_equal(t.used, 0);
    assert_int_equal(t.reaped, 1);
}

/* Timestamps straddling the 2^32 ms wrap still expire after the TTL. */
static void test_clock_wrap(void **state)
{
    tp_probe_table_t t;
    uint8_t id[TP_PROBE_TXID_LEN];
    (void)state;
    tp_probe_init(&t, 5000, 1);
    txid(id, 1);
    assert_int_equal(tp_probe_add(&t, id, 1, 0xFFFFF000u), TP_PROBE_ADDED);
    assert_int_equal(tp_probe_reap(&t, 0x00000100u), 0); /* 4352 ms later */
    assert_int_equal(tp_probe_reap(&t, 0x00000390u), 1); /* 5008 ms later */
}

static void test_null_safe(void **state)
{
    tp_probe_table_t t;
    uint8_t id[TP_PROBE_TXID_LEN] = {0};
    (void)state;
    tp_probe_init(NULL, 0, 1);
    tp_probe_init(&t, 0, 1);
    assert_int_equal(t.ttl_ms, TP_PROBE_TTL_MS);
    assert_int_equal(tp_probe_add(NULL, id, 1, 0), TP_PROBE_BAD);
    assert_int_equal(tp_probe_add(&t, NULL, 1, 0), TP_PROBE_BAD);
    assert_int_equal(tp_probe_pong(NULL, id, 0, NULL, NULL), 0);
    assert_int_equal(tp_probe_pong(&t, NULL, 0, NULL, NULL), 0);
    assert_int_equal(tp_probe_reap(NULL, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fills_without_reaping), cmocka_unit_test(test_reaping_keeps_room),
        cmocka_unit_test(test_pong_rtt_and_expiry),   cmocka_unit_test(test_clock_wrap),
        cmocka_unit_test(test_null_safe),
    };
    return cmocka_run_group_tests_name("tp_probe", tests, NULL, NULL);
}
