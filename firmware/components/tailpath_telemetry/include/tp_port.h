/*
 * tp_port.h: what the portable telemetry core needs from its platform.
 * port/esp_idf/tp_port_esp.c implements it on ESP-IDF; port/host/ for tests.
 */
#ifndef TP_PORT_H
#define TP_PORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Heap figures in bytes; has_psram 0 when the board has none. */
typedef struct {
    uint32_t internal_free, internal_min, internal_largest, psram_free;
    uint8_t has_psram;
} tp_heap_t;

/** Milliseconds since boot (wraps at 2^32). */
uint32_t tp_port_now_ms(void);
/** Take / release the lock guarding the core's state. Must work from any task
 *  (not from an ISR); never held across console output or blocking calls. */
void tp_port_lock(void);
void tp_port_unlock(void);
/** Write len bytes (one whole line including '\n') to the console in one call. */
void tp_port_write(const char *line, size_t len);
/** Current heap figures. */
void tp_port_heap(tp_heap_t *out);

#ifdef __cplusplus
}
#endif
#endif
