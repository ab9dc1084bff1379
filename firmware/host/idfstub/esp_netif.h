/* esp_netif.h and esp_netif_types.h stand-in (components/esp_netif). */
#ifndef IDFSTUB_ESP_NETIF_H
#define IDFSTUB_ESP_NETIF_H
#include "esp_err.h"
#include "esp_event.h"

typedef struct esp_netif_obj esp_netif_t;

ESP_EVENT_DECLARE_BASE(IP_EVENT);

/* The SDK's enum starts with this event; the others are left out. */
typedef enum {
    IP_EVENT_STA_GOT_IP,
    IP_EVENT_STA_LOST_IP,
} ip_event_t;

esp_err_t esp_netif_init(void);

#endif
