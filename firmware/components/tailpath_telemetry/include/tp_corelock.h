/*
 * tp_corelock.h: lwIP core-lock re-entry guard (reference fix d).
 *
 * With CONFIG_LWIP_TCPIP_CORE_LOCKING=y, lwIP's tcpip_thread holds the core
 * lock (LOCK_TCPIP_CORE(), a plain non-recursive FreeRTOS mutex) while it runs
 * callbacks: the UDP receive callback that hands WireGuard packets to the
 * wireguard netif runs with the lock already held. If that input path calls
 * LOCK_TCPIP_CORE() again (directly, or via netif->input = tcpip_input with
 * LWIP_TCPIP_CORE_LOCKING_INPUT, or netif_set_link_up from the handshake
 * path), the task waits on a mutex it owns: the network stack deadlocks and
 * the task watchdog fires. The WireGuard netif input path must therefore call
 * ip_input()/netif functions directly when already inside lwIP, and take the
 * lock only from other tasks.
 *
 * This guard makes the mistake visible: every lock taken through it records
 * the owning task; a second enter by the same task is a re-entry, counted and
 * reported instead of deadlocking (on ESP-IDF the port also asks lwIP itself:
 * sys_thread_tcpip(LWIP_CORE_LOCK_QUERY_HOLDER)). Portable and host-testable:
 * the task identity is an opaque pointer.
 */
#ifndef TP_CORELOCK_H
#define TP_CORELOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TP_CORELOCK_TAKE = 0,    /**< not held by this task: take the real lock now */
    TP_CORELOCK_REENTRY = 1, /**< already held by this task: do NOT lock again */
    TP_CORELOCK_BAD = 2,     /**< NULL argument */
} tp_corelock_result_t;

typedef struct {
    const void *volatile owner; /**< task holding the lock through this guard, NULL if none */
    uint32_t reentries;         /**< re-entries caught (each would have deadlocked) */
    uint32_t bad_exits;         /**< exits by a task that did not hold it */
} tp_corelock_t;

/** Before taking the core lock from task self. On TP_CORELOCK_TAKE take the
 *  real lock, then call tp_corelock_taken. */
tp_corelock_result_t tp_corelock_enter(tp_corelock_t *g, const void *self);
/** The real lock is now held by self. */
void tp_corelock_taken(tp_corelock_t *g, const void *self);
/** Before releasing: clears the owner; counts a bad exit if self isn't it.
 *  Returns 1 when self held it (release the real lock), else 0. */
int tp_corelock_exit(tp_corelock_t *g, const void *self);
/** 1 if self holds the lock through this guard. */
int tp_corelock_held(const tp_corelock_t *g, const void *self);

#ifdef __cplusplus
}
#endif
#endif
