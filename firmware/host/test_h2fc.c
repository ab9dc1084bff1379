/* test_h2fc.c: HTTP/2 receive flow control (fix c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tp_h2fc.h"

/* server is a sender that obeys the windows it has been granted. */
typedef struct {
    uint32_t conn, stream;
} server_t;

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* apply parses WINDOW_UPDATE frames the client wrote and grants credit. */
static void apply(server_t *s, const uint8_t *b, size_t n, uint32_t stream_id)
{
    size_t off;
    assert_int_equal(n % TP_H2_WINDOW_UPDATE_LEN, 0);
    for (off = 0; off < n; off += TP_H2_WINDOW_UPDATE_LEN) {
        const uint8_t *f = b + off;
        uint32_t sid = be32(f + 5) & 0x7FFFFFFFu, inc = be32(f + 9) & 0x7FFFFFFFu;
        assert_int_equal(f[0], 0);
        assert_int_equal(f[1], 0);
        assert_int_equal(f[2], 4);    /* length */
        assert_int_equal(f[3], 0x8);  /* WINDOW_UPDATE */
        assert_int_equal(f[4], 0);    /* flags */
        assert_true(inc > 0);
        if (sid == 0) {
            s->conn += inc;
        } else {
            assert_int_equal(sid, stream_id);
            s->stream += inc;
        }
    }
}

/* stream runs a long response of total bytes in 16 KiB DATA frames and
 * returns how many bytes got through before the server had no window. */
static uint32_t stream(int send_updates, uint32_t total)
{
    tp_h2_rx_t fc;
    server_t s = {TP_H2_DEFAULT_WINDOW, TP_H2_DEFAULT_WINDOW};
    uint8_t out[2 * TP_H2_WINDOW_UPDATE_LEN];
    uint32_t got = 0;
    tp_h2_rx_init(&fc, 1, 0);
    while (got < total) {
        uint32_t n = 16384;
        if (n > s.conn) n = s.conn;
        if (n > s.stream) n = s.stream;
        if (n > total - got) n = total - got;
        if (n == 0) {
            break; /* stalled: the server may not send */
        }
        s.conn -= n;
        s.stream -= n;
        assert_int_equal(tp_h2_rx_data(&fc, 1, n), 0);
        got += n;
        tp_h2_rx_consumed(&fc, n);
        if (send_updates) {
            apply(&s, out, tp_h2_rx_updates(&fc, out, sizeof out), 1);
        }
        /* Invariant: what the server may send equals what we left open. */
        assert_int_equal(s.conn, fc.conn_open);
        assert_int_equal(s.stream, fc.stream_open);
    }
    return got;
}

static void test_stalls_without_updates(void **state)
{
    (void)state;
    assert_int_equal(stream(0, 4u << 20), 65535); /* the CoreS3 bug */
}

static void test_long_stream_flows(void **state)
{
    (void)state;
    assert_int_equal(stream(1, 4u << 20), 4u << 20);
}

static void test_overrun_is_error(void **state)
{
    tp_h2_rx_t fc;
    (void)state;
    tp_h2_rx_init(&fc, 3, 1000);
    assert_int_equal(tp_h2_rx_data(&fc, 3, 600), 0);
    assert_int_equal(tp_h2_rx_data(&fc, 3, 401), TP_H2_FLOW_CONTROL_ERROR);
    assert_int_equal(fc.conn_open, 400); /* nothing counted */
    assert_int_equal(tp_h2_rx_data(&fc, 5, 400), 0); /* other stream: conn only */
    assert_int_equal(fc.stream_open, 400);
    assert_int_equal(tp_h2_rx_data(&fc, 3, 1), TP_H2_FLOW_CONTROL_ERROR);
    assert_int_equal(tp_h2_rx_data(NULL, 3, 1), TP_H2_FLOW_CONTROL_ERROR);
}

static void test_updates_threshold_and_bytes(void **state)
{
    tp_h2_rx_t fc;
    uint8_t out[2 * TP_H2_WINDOW_UPDATE_LEN];
    static const uint8_t want[2 * TP_H2_WINDOW_UPDATE_LEN] = {
        0, 0, 4, 0x8, 0, 0, 0, 0, 1, 0, 0, 0x80, 0x00, /* stream 1, +32768 */
        0, 0, 4, 0x8, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x00, /* connection, +32768 */
    };
    (void)state;
    tp_h2_rx_init(&fc, 1, 0);
    assert_int_equal(tp_h2_rx_data(&fc, 1, 32768), 0);
    tp_h2_rx_consumed(&fc, 32767);
    assert_int_equal(tp_h2_rx_updates(&fc, out, sizeof out), 0); /* below half */
    tp_h2_rx_consumed(&fc, 1);
    assert_int_equal(tp_h2_rx_updates(&fc, out, sizeof out), 26);
    assert_memory_equal(out, want, sizeof want);
    assert_int_equal(fc.returned_conn, 32768);
    /* Consuming more than was received never over-credits. */
    tp_h2_rx_consumed(&fc, 1u << 30);
    assert_int_equal(fc.conn_pending, 0);
    assert_int_equal(tp_h2_rx_updates(&fc, out, 12), 0); /* cap too small */
    assert_int_equal(tp_h2_rx_updates(NULL, out, sizeof out), 0);
    tp_h2_rx_init(&fc, 1, 0xFFFFFFFFu);
    assert_int_equal(fc.window, TP_H2_MAX_WINDOW);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stalls_without_updates),
        cmocka_unit_test(test_long_stream_flows),
        cmocka_unit_test(test_overrun_is_error),
        cmocka_unit_test(test_updates_threshold_and_bytes),
    };
    return cmocka_run_group_tests_name("tp_h2fc", tests, NULL, NULL);
}
