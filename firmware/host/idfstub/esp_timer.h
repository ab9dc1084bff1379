/* esp_timer.h stand-in (components/esp_timer). */
#ifndef IDFSTUB_ESP_TIMER_H
#define IDFSTUB_ESP_TIMER_H
#include <stdint.h>
#include "esp_err.h"

/* Microseconds since boot. */
int64_t esp_timer_get_time(void);

#endif
