/* test_corelock.c: lwIP core-lock re-entry guard (fix d), modelled on the
 * WireGuard netif input path: the receive callback runs with the core lock
 * held, and its input function must not take it again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>

#include "tp_corelock.h"

/* A stand-in for LOCK_TCPIP_CORE(): a non-recursive mutex, like lwIP's. */
static pthread_mutex_t core = PTHREAD_MUTEX_INITIALIZER;
static tp_corelock_t guard;
static int tcpip_task, other_task; /* task identities */

static int lock_core(const void *self)
{
    tp_corelock_result_t r = tp_corelock_enter(&guard, self);
    if (r != TP_CORELOCK_TAKE) {
        return 0; /* re-entry caught: locking again would deadlock */
    }
    pthread_mutex_lock(&core);
    tp_corelock_taken(&guard, self);
    return 1;
}

static void unlock_core(const void *self, int took)
{
    if (took && tp_corelock_exit(&guard, self)) {
        pthread_mutex_unlock(&core);
    }
}

/* The buggy input path: takes the lock itself. */
static int wg_input_buggy(const void *self)
{
    int took = lock_core(self);
    unlock_core(self, took);
    return took;
}

static void test_reentry_caught(void **state)
{
    int took;
    (void)state;
    guard.reentries = 0;
    took = lock_core(&tcpip_task); /* tcpip_thread processing a UDP packet */
    assert_int_equal(took, 1);
    assert_true(tp_corelock_held(&guard, &tcpip_task));
    assert_int_equal(wg_input_buggy(&tcpip_task), 0); /* would have deadlocked */
    assert_int_equal(guard.reentries, 1);
    assert_true(tp_corelock_held(&guard, &tcpip_task)); /* still held by outer */
    unlock_core(&tcpip_task, took);
    assert_false(tp_corelock_held(&guard, &tcpip_task));
    /* From another task the same call takes the lock normally. */
    assert_int_equal(wg_input_buggy(&other_task), 1);
    assert_int_equal(guard.reentries, 1);
}

static void *other(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)wg_input_buggy(&other_task);
}

/* Another task waits for the lock (no false re-entry) and gets it after. */
static void test_other_task_blocks_not_reentry(void **state)
{
    pthread_t th;
    void *res;
    int took;
    (void)state;
    guard.reentries = 0;
    took = lock_core(&tcpip_task);
    assert_int_equal(pthread_create(&th, NULL, other, NULL), 0);
    unlock_core(&tcpip_task, took);
    pthread_join(th, &res);
    assert_int_equal((intptr_t)res, 1);
    assert_int_equal(guard.reentries, 0);
}

static void test_bad_exit_and_null(void **state)
{
    (void)state;
    guard.bad_exits = 0;
    assert_int_equal(tp_corelock_exit(&guard, &other_task), 0); /* not held */
    assert_int_equal(guard.bad_exits, 1);
    assert_int_equal(tp_corelock_enter(NULL, &other_task), TP_CORELOCK_BAD);
    assert_int_equal(tp_corelock_enter(&guard, NULL), TP_CORELOCK_BAD);
    assert_int_equal(tp_corelock_exit(NULL, &other_task), 0);
    assert_false(tp_corelock_held(NULL, &other_task));
    tp_corelock_taken(NULL, &other_task);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reentry_caught),
        cmocka_unit_test(test_other_task_blocks_not_reentry),
        cmocka_unit_test(test_bad_exit_and_null),
    };
    return cmocka_run_group_tests_name("tp_corelock", tests, NULL, NULL);
}
