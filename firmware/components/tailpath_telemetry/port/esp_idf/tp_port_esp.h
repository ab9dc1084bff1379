/*
 * tp_port_esp.h: ESP-IDF side of tailpath_telemetry.
 */
#ifndef TP_PORT_ESP_H
#define TP_PORT_ESP_H

#include <stdint.h>

#include "tp_corelock.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Initialise the core with esp_reset_reason() and start the telemetry task
 * (static stack and TCB: no heap). period_ms 0 means the Kconfig value.
 * Call it before the Tailscale port starts: it clears the core's state, so
 * counts from hooks called earlier are lost.
 */
void tp_port_esp_start(uint32_t period_ms);

/**
 * Take the lwIP core lock unless this task already holds it (which would
 * deadlock: LOCK_TCPIP_CORE() is not recursive). Returns 1 when it took the
 * lock (pass it to tp_lwip_unlock), 0 when the lock was already held (the
 * re-entry is counted in tp_lwip_guard.reentries and logged once; with
 * CONFIG_TAILPATH_CORELOCK_ABORT it aborts instead).
 */
int tp_lwip_lock(void);
void tp_lwip_unlock(int took);

/** Re-entry guard state (reentries, bad_exits) for diagnostics. */
extern tp_corelock_t tp_lwip_guard;

#ifdef __cplusplus
}
#endif
#endif
