/* esp_http_client.h stand-in (components/esp_http_client). */
#ifndef IDFSTUB_ESP_HTTP_CLIENT_H
#define IDFSTUB_ESP_HTTP_CLIENT_H
#include <stdint.h>
#include "esp_err.h"

typedef struct esp_http_client *esp_http_client_handle_t;

/* Of the SDK's many fields, the two the glue sets. */
typedef struct {
    const char *url;
    int timeout_ms;
} esp_http_client_config_t;

esp_http_client_handle_t esp_http_client_init(const esp_http_client_config_t *config);
esp_err_t esp_http_client_open(esp_http_client_handle_t client, int write_len);
int64_t esp_http_client_fetch_headers(esp_http_client_handle_t client);
int esp_http_client_get_status_code(esp_http_client_handle_t client);
int esp_http_client_read(esp_http_client_handle_t client, char *buffer, int len);
esp_err_t esp_http_client_cleanup(esp_http_client_handle_t client);

#endif
