/*
 * tp_port_esp.c: tp_port.h on ESP-IDF 6.0 (esp_timer, heap_caps, a FreeRTOS
 * spinlock, stdout) plus the telemetry task and the lwIP core-lock guard.
 * Not linked on the host (make -C firmware/host idf-check only type-checks it
 * against host/idfstub); keep it thin.
 */
#include <stdio.h>
#include <stdlib.h>

#include "esp_heap_caps.h"
#include "esp_log.h"
#include "esp_system.h"
#include "esp_timer.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"
#include "lwip/opt.h"
#include "lwip/sys.h"
#include "lwip/tcpip.h"
#include "sdkconfig.h"

#include "tailpath_telemetry.h"
#include "tp_port.h"
#include "tp_port_esp.h"

#if LWIP_TCPIP_CORE_LOCKING
static const char *TAG = "tailpath"; /* only the core-lock guard logs */
#endif

/* A critical section: statically initialised, usable from any task before
 * tp_port_esp_start, held only for a few microseconds (no I/O inside). */
static portMUX_TYPE mux = portMUX_INITIALIZER_UNLOCKED;

uint32_t tp_port_now_ms(void) { return (uint32_t)(esp_timer_get_time() / 1000); }

void tp_port_lock(void) { taskENTER_CRITICAL(&mux); }

void tp_port_unlock(void) { taskEXIT_CRITICAL(&mux); }

void tp_port_write(const char *line, size_t len)
{
    /* One call: newlib holds stdout's lock for the whole line, so an
     * ESP_LOGx line from another task can't land inside the frame. */
    fwrite(line, 1, len, stdout);
    fflush(stdout);
}

void tp_port_heap(tp_heap_t *out)
{
    out->internal_free = (uint32_t)heap_caps_get_free_size(MALLOC_CAP_INTERNAL);
    out->internal_min = (uint32_t)heap_caps_get_minimum_free_size(MALLOC_CAP_INTERNAL);
    out->internal_largest = (uint32_t)heap_caps_get_largest_free_block(MALLOC_CAP_INTERNAL);
    out->has_psram = heap_caps_get_total_size(MALLOC_CAP_SPIRAM) > 0;
    out->psram_free = out->has_psram ? (uint32_t)heap_caps_get_free_size(MALLOC_CAP_SPIRAM) : 0;
}

static tp_reset_t reset_reason(void)
{
    switch (esp_reset_reason()) {
    case ESP_RST_POWERON: return TP_RST_POWERON;
    case ESP_RST_EXT: return TP_RST_EXT;
    case ESP_RST_SW: return TP_RST_SW;
    case ESP_RST_PANIC: return TP_RST_PANIC;
    case ESP_RST_INT_WDT: return TP_RST_INT_WDT;
    case ESP_RST_TASK_WDT: return TP_RST_TASK_WDT;
    case ESP_RST_WDT: return TP_RST_WDT;
    case ESP_RST_DEEPSLEEP: return TP_RST_DEEPSLEEP;
    case ESP_RST_BROWNOUT: return TP_RST_BROWNOUT;
    case ESP_RST_SDIO: return TP_RST_SDIO;
    case ESP_RST_USB: return TP_RST_USB;
    case ESP_RST_JTAG: return TP_RST_JTAG;
    case ESP_RST_EFUSE: return TP_RST_EFUSE;
    case ESP_RST_PWR_GLITCH: return TP_RST_PWR_GLITCH;
    case ESP_RST_CPU_LOCKUP: return TP_RST_CPU_LOCKUP;
    default: return TP_RST_UNKNOWN;
    }
}

static StackType_t task_stack[CONFIG_TAILPATH_TELEMETRY_TASK_STACK / sizeof(StackType_t)];
static StaticTask_t task_tcb;

static void telemetry_task(void *arg)
{
    (void)arg;
    for (;;) {
        tp_tick(); /* the only caller of tp_tick */
        vTaskDelay(pdMS_TO_TICKS(100));
    }
}

void tp_port_esp_start(uint32_t period_ms)
{
    static int started;
    if (started) {
        return;
    }
    started = 1;
    tp_init(period_ms ? period_ms : CONFIG_TAILPATH_TELEMETRY_PERIOD_MS, reset_reason());
    xTaskCreateStatic(telemetry_task, "tailpath_tm", sizeof task_stack / sizeof task_stack[0], NULL,
                      CONFIG_TAILPATH_TELEMETRY_TASK_PRIO, task_stack, &task_tcb);
}

tp_corelock_t tp_lwip_guard;

int tp_lwip_lock(void)
{
#if LWIP_TCPIP_CORE_LOCKING
    const void *self = xTaskGetCurrentTaskHandle();
    if (!sys_thread_tcpip(LWIP_CORE_IS_TCPIP_INITIALIZED)) {
        return 0; /* no tcpip_thread yet: nobody else can be inside lwIP */
    }
    /* lwIP itself knows when tcpip_thread (or anyone) took the lock outside
     * this guard, e.g. while running the UDP receive callback that feeds the
     * WireGuard netif; the guard covers locks taken through tp_lwip_lock. */
    int held = sys_thread_tcpip(LWIP_CORE_LOCK_QUERY_HOLDER);
    if (held || tp_corelock_enter(&tp_lwip_guard, self) != TP_CORELOCK_TAKE) {
        if (held) {
            tp_lwip_guard.reentries++;
        }
        if (tp_lwip_guard.reentries == 1) {
            ESP_LOGW(TAG, "lwIP core lock re-entry caught (task %s): not locking again",
                     pcTaskGetName(NULL));
        }
#if CONFIG_TAILPATH_CORELOCK_ABORT
        abort();
#endif
        return 0;
    }
    LOCK_TCPIP_CORE();
    tp_corelock_taken(&tp_lwip_guard, self);
    return 1;
#else
    return 0;
#endif
}

void tp_lwip_unlock(int took)
{
#if LWIP_TCPIP_CORE_LOCKING
    if (took && tp_corelock_exit(&tp_lwip_guard, xTaskGetCurrentTaskHandle())) {
        UNLOCK_TCPIP_CORE();
    }
#else
    (void)took;
#endif
}
