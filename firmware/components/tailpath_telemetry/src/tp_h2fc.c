/* tp_h2fc.c: HTTP/2 receive flow control. Portable C99. */
#include "tp_h2fc.h"

#include <string.h>

void tp_h2_rx_init(tp_h2_rx_t *fc, uint32_t stream_id, uint32_t window)
{
    if (fc == NULL) {
        return;
    }
    memset(fc, 0, sizeof *fc);
    if (window == 0) {
        window = TP_H2_DEFAULT_WINDOW;
    }
    if (window > TP_H2_MAX_WINDOW) {
        window = TP_H2_MAX_WINDOW;
    }
    fc->stream_id = stream_id & TP_H2_MAX_WINDOW;
    fc->window = window;
    fc->conn_open = window;
    fc->stream_open = window;
}

int tp_h2_rx_data(tp_h2_rx_t *fc, uint32_t stream_id, uint32_t len)
{
    int mine;
    if (fc == NULL) {
        return TP_H2_FLOW_CONTROL_ERROR;
    }
    mine = stream_id == fc->stream_id;
    if (len > fc->conn_open || (mine && len > fc->stream_open)) {
        return TP_H2_FLOW_CONTROL_ERROR;
    }
    fc->conn_open -= len;
    if (mine) {
        fc->stream_open -= len;
    }
    fc->received += len;
    return 0;
}

void tp_h2_rx_consumed(tp_h2_rx_t *fc, uint32_t len)
{
    uint32_t limit;
    if (fc == NULL) {
        return;
    }
    /* Never return more than was taken: credit + open must stay <= window. */
    limit = fc->window - fc->stream_open - fc->stream_pending;
    if (len > limit) {
        len = limit;
    }
    fc->stream_pending += len;
    limit = fc->window - fc->conn_open - fc->conn_pending;
    if (len > limit) {
        len = limit;
    }
    fc->conn_pending += len;
}

static void put_update(uint8_t *p, uint32_t stream_id, uint32_t inc)
{
    p[0] = 0;
    p[1] = 0;
    p[2] = 4;    /* length */
    p[3] = 0x8;  /* type WINDOW_UPDATE */
    p[4] = 0;    /* flags */
    p[5] = (uint8_t)((stream_id >> 24) & 0x7F);
    p[6] = (uint8_t)(stream_id >> 16);
    p[7] = (uint8_t)(stream_id >> 8);
    p[8] = (uint8_t)stream_id;
    p[9] = (uint8_t)((inc >> 24) & 0x7F);
    p[10] = (uint8_t)(inc >> 16);
    p[11] = (uint8_t)(inc >> 8);
    p[12] = (uint8_t)inc;
}

size_t tp_h2_rx_updates(tp_h2_rx_t *fc, uint8_t *out, size_t cap)
{
    size_t n = 0;
    uint32_t half;
    if (fc == NULL || out == NULL) {
        return 0;
    }
    half = fc->window - fc->window / 2u; /* ceil(window/2): 32768 of 65535 */
    if (half == 0) {
        half = 1;
    }
    if (fc->stream_pending >= half && cap - n >= TP_H2_WINDOW_UPDATE_LEN) {
        put_update(out + n, fc->stream_id, fc->stream_pending);
        fc->stream_open += fc->stream_pending;
        fc->returned_stream += fc->stream_pending;
        fc->stream_pending = 0;
        n += TP_H2_WINDOW_UPDATE_LEN;
    }
    if (fc->conn_pending >= half && cap - n >= TP_H2_WINDOW_UPDATE_LEN) {
        put_update(out + n, 0, fc->conn_pending);
        fc->conn_open += fc->conn_pending;
        fc->returned_conn += fc->conn_pending;
        fc->conn_pending = 0;
        n += TP_H2_WINDOW_UPDATE_LEN;
    }
    return n;
}
