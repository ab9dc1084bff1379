/* esp_heap_caps.h stand-in (components/heap). */
#ifndef IDFSTUB_ESP_HEAP_CAPS_H
#define IDFSTUB_ESP_HEAP_CAPS_H
#include <stddef.h>
#include <stdint.h>

#define MALLOC_CAP_SPIRAM (1 << 10)
#define MALLOC_CAP_INTERNAL (1 << 11)

size_t heap_caps_get_total_size(uint32_t caps);
size_t heap_caps_get_free_size(uint32_t caps);
size_t heap_caps_get_minimum_free_size(uint32_t caps);
size_t heap_caps_get_largest_free_block(uint32_t caps);

#endif
