/* test_derp.c: home DERP by latency with hysteresis (fix b). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tp_derp.h"

static void test_cores3_case(void **state)
{
    tp_derp_sel_t s;
    tp_derp_by_t by;
    (void)state;
    tp_derp_sel_init(&s);
    /* DERP map arrives: regions 1 (NYC), 4 (FRA), 7 (nearest); no netcheck yet. */
    assert_int_equal(tp_derp_sel_region(&s, 7), 0);
    assert_int_equal(tp_derp_sel_region(&s, 1), 0);
    assert_int_equal(tp_derp_sel_region(&s, 4), 0);
    assert_int_equal(tp_derp_sel_choose(&s, &by), 1);
    assert_int_equal(by, TP_DERP_BY_LOWEST_ID); /* said plainly, not hidden */
    /* Measurements arrive: 7 is nearest. */
    tp_derp_sel_measured(&s, 1, 182);
    tp_derp_sel_measured(&s, 4, 41);
    tp_derp_sel_measured(&s, 7, 24);
    assert_int_equal(tp_derp_sel_choose(&s, &by), 7);
    assert_int_equal(by, TP_DERP_BY_LATENCY);
}

static void test_hysteresis(void **state)
{
    tp_derp_sel_t s;
    tp_derp_by_t by;
    (void)state;
    tp_derp_sel_init(&s);
    tp_derp_sel_measured(&s, 7, 30);
    tp_derp_sel_measured(&s, 4, 40);
    assert_int_equal(tp_derp_sel_choose(&s, &by), 7);
    /* 4 becomes a bit faster: 25 vs 30 is not a third better. Stay. */
    tp_derp_sel_measured(&s, 4, 25);
    assert_int_equal(tp_derp_sel_choose(&s, NULL), 7);
    /* 4 at 20 vs 30: a third better (20*3 <= 30*2) and 10 ms faster. Move. */
    tp_derp_sel_measured(&s, 4, 20);
    assert_int_equal(tp_derp_sel_choose(&s, &by), 4);
    /* Small absolute gains never move a fast home: 3 ms vs 6 ms. */
    tp_derp_sel_measured(&s, 4, 6);
    tp_derp_sel_measured(&s, 9, 3);
    assert_int_equal(tp_derp_sel_choose(&s, NULL), 4);
}

static void test_ties_and_missing(void **state)
{
    tp_derp_sel_t s;
    tp_derp_by_t by;
    (void)state;
    tp_derp_sel_init(&s);
    assert_int_equal(tp_derp_sel_choose(&s, &by), 0);
    assert_int_equal(by, TP_DERP_BY_NONE);
    tp_derp_sel_measured(&s, 9, 50);
    tp_derp_sel_measured(&s, 5, 50);
    assert_int_equal(tp_derp_sel_choose(&s, NULL), 5); /* tie: lower id */
    /* New round: home 5 not measured this time, 9 is: move to 9. */
    tp_derp_sel_clear(&s);
    tp_derp_sel_measured(&s, 9, 70);
    assert_int_equal(tp_derp_sel_choose(&s, NULL), 9);
    /* Nothing measured at all: keep the home we have. */
    tp_derp_sel_clear(&s);
    assert_int_equal(tp_derp_sel_choose(&s, &by), 9);
    assert_int_equal(by, TP_DERP_BY_LATENCY);
}

static void test_bad_input(void **state)
{
    tp_derp_sel_t s;
    int i;
    (void)state;
    tp_derp_sel_init(&s);
    assert_int_equal(tp_derp_sel_region(&s, 0), -1);
    assert_int_equal(tp_derp_sel_measured(&s, 0, 5), -1);
    for (i = 1; i <= TP_DERP_SEL_REGIONS; i++) {
        assert_int_equal(tp_derp_sel_region(&s, (uint16_t)(100 + i)), 0);
    }
    assert_int_equal(tp_derp_sel_measured(&s, 999, 1), -1); /* full */
    assert_int_equal(tp_derp_sel_region(&s, 101), 0);        /* known: fine */
    assert_int_equal(s.rejected, 3);
    assert_int_equal(tp_derp_sel_region(NULL, 1), -1);
    assert_int_equal(tp_derp_sel_measured(NULL, 1, 1), -1);
    assert_int_equal(tp_derp_sel_choose(NULL, NULL), 0);
    tp_derp_sel_init(NULL);
    tp_derp_sel_clear(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cores3_case),
        cmocka_unit_test(test_hysteresis),
        cmocka_unit_test(test_ties_and_missing),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests_name("tp_derp", tests, NULL, NULL);
}
