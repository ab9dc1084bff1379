/* esp_err.h stand-in (components/esp_common). */
#ifndef IDFSTUB_ESP_ERR_H
#define IDFSTUB_ESP_ERR_H
#include "sdkconfig.h"

typedef int esp_err_t;

#define ESP_OK 0
#define ESP_FAIL -1

void _esp_error_check_failed(esp_err_t rc, const char *file, int line, const char *function,
                             const char *expression);

/* Evaluates x once and reports anything but ESP_OK, as the SDK's does. */
#define ESP_ERROR_CHECK(x)                                                                   \
    do {                                                                                     \
        esp_err_t err_rc_ = (x);                                                             \
        if (err_rc_ != ESP_OK) {                                                             \
            _esp_error_check_failed(err_rc_, __FILE__, __LINE__, __func__, #x);              \
        }                                                                                    \
    } while (0)

#endif
