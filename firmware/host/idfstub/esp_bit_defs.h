/* esp_bit_defs.h stand-in (components/esp_common): the bits the glue names. */
#ifndef IDFSTUB_ESP_BIT_DEFS_H
#define IDFSTUB_ESP_BIT_DEFS_H
#define BIT0 0x00000001
#endif
