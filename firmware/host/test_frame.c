/* test_frame.c: the C encoder against firmware/testdata/vectors.txt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tp_frame.h"
#include "vectors.h"

#ifndef VECTORS_PATH
#define VECTORS_PATH "../testdata/vectors.txt"
#endif

static vec_t vecs[VEC_MAX];
static int nvecs;

static uint32_t u32(const vec_t *v, const char *k)
{
    const char *s = vec_get(v, k);
    return s ? (uint32_t)strtoul(s, NULL, 10) : 0;
}

static uint32_t ip(const char *s)
{
    unsigned a, b, c, d;
    if (s == NULL || sscanf(s, "%u.%u.%u.%u", &a, &b, &c, &d) != 4) {
        return 0;
    }
    return (a << 24) | (b << 16) | (c << 8) | d;
}

static tp_addr_t addr(const char *s)
{
    tp_addr_t a;
    memset(&a, 0, sizeof a);
    if (s == NULL || strcmp(s, "none") == 0) {
        return a;
    }
    if (strncmp(s, "derp:", 5) == 0) {
        a.kind = TP_ADDR_DERP;
        a.region = (uint16_t)strtoul(s + 5, NULL, 10);
        return a;
    }
    a.kind = TP_ADDR_DIRECT;
    a.ip = ip(s);
    a.port = (uint16_t)strtoul(strrchr(s, ':') + 1, NULL, 10);
    return a;
}

static unsigned word_index(const char *s, const char *(*name)(unsigned), unsigned count)
{
    unsigned i;
    for (i = 0; i < count; i++) {
        if (s && strcmp(name(i), s) == 0) {
            return i;
        }
    }
    fail_msg("unknown word %s", s ? s : "(null)");
    return 0;
}

/* Filling one entry of the field table (tp_frame.h) from the vector's text
 * s of its key (NULL when absent): the member from s, the has_ flag from
 * whether the vector has the key. KIBS has no member (computed). */
#define SET_U32(m) f->m = (uint32_t)strtoul(s, NULL, 10)
#define SET_U16(m) f->m = (uint16_t)strtoul(s, NULL, 10)
#define SET_I8(m) f->m = (int8_t)atoi(s)
#define SET_BOOL(m) f->m = (uint8_t)strtoul(s, NULL, 10)
#define SET_IP(m) f->m = ip(s)
#define SET_ADDR(m) f->m = addr(s)
#define SET_RESET(m) f->m = (uint8_t)word_index(s, tp_reset_name, TP_RST_COUNT)
#define SET_DERPBY(m) f->m = (uint8_t)word_index(s, tp_derp_by_name, TP_DERP_BY_COUNT)
#define SET_HOST(m) strncpy(f->m, s, TP_HOST_MAX)
#define SET_WORD(m) strncpy(f->m, s, TP_ERR_MAX)
#define SET_KIBS(m) (void)0
#define FLAG_ALWAYS (void)0
#define FLAG_HAS(flag) f->flag = s != NULL
#define FLAG_SET (void)0
#define FLAG_IF(m) (void)0
#define FLAG_HAS_IF(flag, m) f->flag = s != NULL
#define SET_FIELD_(member, key, TYPE, WHEN) \
    {                                       \
        const char *s = vec_get(v, key);    \
        FLAG_##WHEN;                        \
        if (s != NULL) {                    \
            SET_##TYPE(member);             \
        }                                   \
    }
#define ENCODE_KIND_(name, letter, FIELDS)          \
    case letter: {                                  \
        tp_##name##_frame_t fr, *f = &fr;           \
        memset(f, 0, sizeof *f);                    \
        f->seq = u32(v, "seq");                     \
        f->up_ms = u32(v, "up");                    \
        FIELDS(SET_FIELD_)                          \
        return tp_frame_##name(buf, cap, f);        \
    }

/* encode builds the frame from the vector's values with the C encoder. */
static size_t encode(const vec_t *v, char *buf, size_t cap)
{
    switch (v->kind[0]) {
        TP_FRAME_KINDS(ENCODE_KIND_)
    }
    fail_msg("vector %s: unknown kind %s", v->name, v->kind);
    return 0;
}

static void test_vectors_encode(void **state)
{
    int i, frames = 0;
    char buf[TP_FRAME_BUF];
    (void)state;
    assert_true(nvecs >= 20);
    for (i = 0; i < nvecs; i++) {
        const vec_t *v = &vecs[i];
        size_t n;
        if (strcmp(v->section, "frame") != 0) {
            continue;
        }
        frames++;
        n = encode(v, buf, sizeof buf);
        if (n != strlen(v->line) || strcmp(buf, v->line) != 0) {
            fail_msg("vector %s:\n want %s\n got  %s", v->name, v->line, buf);
        }
        assert_true(n <= TP_FRAME_MAX);
    }
    assert_true(frames >= 20);
}

/* The checksum of every frame/parse vector is the CRC of its body. */
static void test_vectors_checksum(void **state)
{
    int i;
    (void)state;
    for (i = 0; i < nvecs; i++) {
        const vec_t *v = &vecs[i];
        size_t len = strlen(v->line);
        char hex[9];
        if (strcmp(v->section, "reject") == 0) {
            if (strcmp(v->err, "checksum") == 0) {
                snprintf(hex, sizeof hex, "%08X", (unsigned)tp_crc32(0, v->line, len - 10));
                assert_string_not_equal(hex, v->line + len - 8);
            }
            continue;
        }
        snprintf(hex, sizeof hex, "%08X", (unsigned)tp_crc32(0, v->line, len - 10));
        if (strcasecmp(hex, v->line + len - 8) != 0) {
            fail_msg("vector %s: crc %s, line says %s", v->name, hex, v->line + len - 8);
        }
    }
}

static void test_crc_check_value(void **state)
{
    (void)state;
    assert_int_equal(tp_crc32(0, "123456789", 9), 0xCBF43926u);
    assert_int_equal(tp_crc32(0, "", 0), 0);
    /* Incremental == one shot. */
    assert_int_equal(tp_crc32(tp_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
}

static void test_kibs(void **state)
{
    (void)state;
    assert_int_equal(tp_kibs_tenths(393216, 2053), 1870);
    assert_int_equal(tp_kibs_tenths(393216, 8812), 435);
    assert_int_equal(tp_kibs_tenths(1024, 1000), 10);
    assert_int_equal(tp_kibs_tenths(5, 0), 0);
    assert_true(tp_kibs_tenths(UINT32_MAX, 1) == 41943039990ull);
}

static void test_addr_from_wg(void **state)
{
    tp_addr_t a;
    (void)state;
    a = tp_addr_from_wg(0x2803037fu, 1);
    assert_int_equal(a.kind, TP_ADDR_DERP);
    assert_int_equal(a.region, 1);
    a = tp_addr_from_wg(0x04030201u, 41641);
    assert_int_equal(a.kind, TP_ADDR_DIRECT);
    assert_int_equal(a.ip, 0x01020304u);
    assert_int_equal(a.port, 41641);
}

/* Small or NULL buffers: 0, nothing written past cap. */
static void test_small_buffers(void **state)
{
    tp_disco_frame_t d;
    char buf[TP_FRAME_BUF + 8];
    size_t full, cap;
    (void)state;
    memset(&d, 0, sizeof d);
    d.seq = 1;
    full = tp_frame_disco(buf, TP_FRAME_BUF, &d);
    assert_true(full > 0);
    for (cap = 0; cap <= full; cap++) {
        memset(buf, 'Z', sizeof buf);
        assert_int_equal(tp_frame_disco(buf, cap, &d), 0);
        assert_true(buf[cap] == 'Z'); /* untouched past cap */
        if (cap) {
            assert_int_equal(buf[0], '\0');
        }
    }
    assert_int_equal(tp_frame_disco(buf, full + 1, &d), full);
    assert_int_equal(tp_frame_disco(NULL, 100, &d), 0);
    assert_int_equal(tp_frame_disco(buf, sizeof buf, NULL), 0);
    assert_int_equal(tp_frame_status(buf, sizeof buf, NULL), 0);
    assert_int_equal(tp_frame_net(buf, sizeof buf, NULL), 0);
    assert_int_equal(tp_frame_peer(buf, sizeof buf, NULL), 0);
    assert_int_equal(tp_frame_fetch(buf, sizeof buf, NULL), 0);
    assert_int_equal(tp_frame_relay(buf, sizeof buf, NULL), 0);
}

/* Hostile strings are sanitised; out-of-range enums written as defaults. */
static void test_sanitise(void **state)
{
    tp_net_frame_t n;
    tp_status_frame_t s;
    tp_fetch_frame_t f;
    char buf[TP_FRAME_BUF];
    (void)state;
    memset(&n, 0, sizeof n);
    strcpy(n.host, "evil host=\x1b[2J*");
    n.derp = 3;
    n.derp_by = 99;
    assert_true(tp_frame_net(buf, sizeof buf, &n) > 0);
    assert_non_null(strstr(buf, " host=evil_host___2J_ "));
    assert_non_null(strstr(buf, " derpby=none"));
    memset(&s, 0, sizeof s);
    s.rst = 200;
    assert_true(tp_frame_status(buf, sizeof buf, &s) > 0);
    assert_non_null(strstr(buf, " rst=unknown "));
    memset(&f, 0, sizeof f);
    strcpy(f.err, "a b\n");
    assert_true(tp_frame_fetch(buf, sizeof buf, &f) > 0);
    assert_non_null(strstr(buf, " err=a_b_ "));
}

static int setup(void **state)
{
    (void)state;
    nvecs = vec_read(VECTORS_PATH, vecs, VEC_MAX);
    return nvecs > 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_encode), cmocka_unit_test(test_vectors_checksum),
        cmocka_unit_test(test_crc_check_value), cmocka_unit_test(test_kibs),
        cmocka_unit_test(test_addr_from_wg),    cmocka_unit_test(test_small_buffers),
        cmocka_unit_test(test_sanitise),
    };
    return cmocka_run_group_tests_name("tp_frame", tests, setup, NULL);
}
