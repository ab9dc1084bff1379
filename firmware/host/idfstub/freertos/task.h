/* freertos/task.h stand-in. */
#ifndef IDFSTUB_FREERTOS_TASK_H
#define IDFSTUB_FREERTOS_TASK_H
#include "freertos/FreeRTOS.h"

typedef struct tskTaskControlBlock *TaskHandle_t;

#define taskENTER_CRITICAL(x) portENTER_CRITICAL(x)
#define taskEXIT_CRITICAL(x) portEXIT_CRITICAL(x)

TaskHandle_t xTaskCreateStatic(TaskFunction_t pxTaskCode, const char *const pcName, const uint32_t ulStackDepth,
                               void *const pvParameters, UBaseType_t uxPriority,
                               StackType_t *const puxStackBuffer, StaticTask_t *const pxTaskBuffer);
void vTaskDelay(const TickType_t xTicksToDelay);
TaskHandle_t xTaskGetCurrentTaskHandle(void);
char *pcTaskGetName(TaskHandle_t xTaskToQuery);

#endif
