/*
 * app_main.c: tailpath CoreS3 app. Joins Wi-Fi (Kconfig), starts telemetry,
 * and optionally fetches a URL every TAILPATH_FETCH_PERIOD_S seconds,
 * reporting bytes, ms and KiB/s in an F frame. A project that also runs the
 * ESP32 Tailscale port calls the other hooks from the port (docs/firmware.md).
 */
#include <string.h>

#include "esp_event.h"
#include "esp_http_client.h"
#include "esp_log.h"
#include "esp_netif.h"
#include "esp_timer.h"
#include "esp_wifi.h"
#include "freertos/FreeRTOS.h"
#include "freertos/event_groups.h"
#include "freertos/task.h"
#include "nvs_flash.h"

#include "tailpath_telemetry.h"
#include "tp_port_esp.h"

static const char *TAG = "tailpath";
static EventGroupHandle_t net_events;
#define GOT_IP BIT0

static void on_event(void *arg, esp_event_base_t base, int32_t id, void *data)
{
    (void)arg;
    if (base == WIFI_EVENT && id == WIFI_EVENT_STA_START) {
        esp_wifi_connect();
    } else if (base == WIFI_EVENT && id == WIFI_EVENT_STA_CONNECTED) {
        wifi_ap_record_t ap;
        if (esp_wifi_sta_get_ap_info(&ap) == ESP_OK) {
            tp_wifi_connected(ap.rssi);
        }
    } else if (base == WIFI_EVENT && id == WIFI_EVENT_STA_DISCONNECTED) {
        const wifi_event_sta_disconnected_t *d = data;
        tp_wifi_disconnected();
        xEventGroupClearBits(net_events, GOT_IP);
        ESP_LOGW(TAG, "Wi-Fi disconnected (reason %d), reconnecting", d ? d->reason : -1);
        esp_wifi_connect();
    } else if (base == IP_EVENT && id == IP_EVENT_STA_GOT_IP) {
        xEventGroupSetBits(net_events, GOT_IP);
    }
}

static void wifi_start(void)
{
    wifi_init_config_t init = WIFI_INIT_CONFIG_DEFAULT();
    wifi_config_t cfg = {0};
    ESP_ERROR_CHECK(esp_netif_init());
    ESP_ERROR_CHECK(esp_event_loop_create_default());
    esp_netif_create_default_wifi_sta();
    ESP_ERROR_CHECK(esp_wifi_init(&init));
    ESP_ERROR_CHECK(esp_event_handler_register(WIFI_EVENT, ESP_EVENT_ANY_ID, on_event, NULL));
    ESP_ERROR_CHECK(esp_event_handler_register(IP_EVENT, IP_EVENT_STA_GOT_IP, on_event, NULL));
    strlcpy((char *)cfg.sta.ssid, CONFIG_TAILPATH_WIFI_SSID, sizeof cfg.sta.ssid);
    strlcpy((char *)cfg.sta.password, CONFIG_TAILPATH_WIFI_PASSWORD, sizeof cfg.sta.password);
    ESP_ERROR_CHECK(esp_wifi_set_mode(WIFI_MODE_STA));
    ESP_ERROR_CHECK(esp_wifi_set_config(WIFI_IF_STA, &cfg));
    ESP_ERROR_CHECK(esp_wifi_start());
}

/* fetch_once GETs the URL, reads the whole body and reports it. */
static void fetch_once(void)
{
    static char buf[4096];
    esp_http_client_config_t cfg = {.url = CONFIG_TAILPATH_FETCH_URL, .timeout_ms = 30000};
    int64_t start = esp_timer_get_time();
    uint32_t bytes = 0, ms;
    int status = 0;
    const char *err = NULL;
    esp_http_client_handle_t c = esp_http_client_init(&cfg);
    if (c == NULL) {
        err = "init";
    } else if (esp_http_client_open(c, 0) != ESP_OK) {
        err = "connect";
    } else {
        int n = 0;
        if (esp_http_client_fetch_headers(c) < 0) {
            err = "headers";
        }
        status = esp_http_client_get_status_code(c);
        while (err == NULL && (n = esp_http_client_read(c, buf, sizeof buf)) > 0) {
            bytes += (uint32_t)n;
        }
        if (err == NULL && n < 0) {
            err = "read";
        }
    }
    ms = (uint32_t)((esp_timer_get_time() - start) / 1000);
    if (c != NULL) {
        esp_http_client_cleanup(c);
    }
    {
        uint64_t t = tp_kibs_tenths(bytes, ms);
        ESP_LOGI(TAG, "GET done: status %d, %u bytes in %u ms (%u.%u KiB/s)%s%s", status, (unsigned)bytes,
                 (unsigned)ms, (unsigned)(t / 10), (unsigned)(t % 10), err ? ", error " : "", err ? err : "");
    }
    tp_fetch_result(bytes, ms, (uint32_t)status, err, CONFIG_TAILPATH_FETCH_PEER);
}

void app_main(void)
{
    esp_err_t r = nvs_flash_init();
    if (r == ESP_ERR_NVS_NO_FREE_PAGES || r == ESP_ERR_NVS_NEW_VERSION_FOUND) {
        ESP_ERROR_CHECK(nvs_flash_erase());
        r = nvs_flash_init();
    }
    ESP_ERROR_CHECK(r);
    net_events = xEventGroupCreate();

    tp_port_esp_start(CONFIG_TAILPATH_TELEMETRY_PERIOD_MS);
    ESP_LOGI(TAG, "telemetry v2 on console every %d ms", CONFIG_TAILPATH_TELEMETRY_PERIOD_MS);
    wifi_start();

    for (int64_t next_fetch = 0;;) {
        wifi_ap_record_t ap;
        xEventGroupWaitBits(net_events, GOT_IP, pdFALSE, pdTRUE, portMAX_DELAY);
        if (esp_wifi_sta_get_ap_info(&ap) == ESP_OK) {
            tp_wifi_rssi(ap.rssi);
        }
        if (CONFIG_TAILPATH_FETCH_URL[0] != '\0' && esp_timer_get_time() >= next_fetch) {
            ESP_LOGI(TAG, "GET %s", CONFIG_TAILPATH_FETCH_URL);
            fetch_once();
            next_fetch = esp_timer_get_time() + (int64_t)CONFIG_TAILPATH_FETCH_PERIOD_S * 1000000;
        }
        vTaskDelay(pdMS_TO_TICKS(5000));
    }
}
