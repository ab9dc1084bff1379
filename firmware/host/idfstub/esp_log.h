/* esp_log.h stand-in (components/log): the printf-checked writer behind the
 * ESP_LOGx macros. */
#ifndef IDFSTUB_ESP_LOG_H
#define IDFSTUB_ESP_LOG_H
#include "sdkconfig.h"

typedef enum {
    ESP_LOG_NONE = 0,
    ESP_LOG_ERROR = 1,
    ESP_LOG_WARN = 2,
    ESP_LOG_INFO = 3,
    ESP_LOG_DEBUG = 4,
    ESP_LOG_VERBOSE = 5,
} esp_log_level_t;

void esp_log_write(esp_log_level_t level, const char *tag, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#define ESP_LOGE(tag, ...) esp_log_write(ESP_LOG_ERROR, tag, __VA_ARGS__)
#define ESP_LOGW(tag, ...) esp_log_write(ESP_LOG_WARN, tag, __VA_ARGS__)
#define ESP_LOGI(tag, ...) esp_log_write(ESP_LOG_INFO, tag, __VA_ARGS__)

#endif
