/* nvs_flash.h and nvs.h stand-in (components/nvs_flash). */
#ifndef IDFSTUB_NVS_FLASH_H
#define IDFSTUB_NVS_FLASH_H
#include "esp_err.h"

#define ESP_ERR_NVS_BASE 0x1100
#define ESP_ERR_NVS_NO_FREE_PAGES (ESP_ERR_NVS_BASE + 0x0d)
#define ESP_ERR_NVS_NEW_VERSION_FOUND (ESP_ERR_NVS_BASE + 0x10)

esp_err_t nvs_flash_init(void);
esp_err_t nvs_flash_erase(void);

#endif
