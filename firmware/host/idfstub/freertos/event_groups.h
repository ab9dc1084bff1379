/* freertos/event_groups.h stand-in. */
#ifndef IDFSTUB_FREERTOS_EVENT_GROUPS_H
#define IDFSTUB_FREERTOS_EVENT_GROUPS_H
#include "freertos/FreeRTOS.h"

typedef struct EventGroupDef_t *EventGroupHandle_t;
typedef TickType_t EventBits_t;

EventGroupHandle_t xEventGroupCreate(void);
EventBits_t xEventGroupWaitBits(EventGroupHandle_t xEventGroup, const EventBits_t uxBitsToWaitFor,
                                const BaseType_t xClearOnExit, const BaseType_t xWaitForAllBits,
                                TickType_t xTicksToWait);
EventBits_t xEventGroupClearBits(EventGroupHandle_t xEventGroup, const EventBits_t uxBitsToClear);
EventBits_t xEventGroupSetBits(EventGroupHandle_t xEventGroup, const EventBits_t uxBitsToSet);

#endif
