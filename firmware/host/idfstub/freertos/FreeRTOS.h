/* freertos/FreeRTOS.h stand-in: ESP-IDF's FreeRTOS on Xtensa (portmacro.h,
 * projdefs.h, spinlock.h), the types and macros the glue uses. */
#ifndef IDFSTUB_FREERTOS_H
#define IDFSTUB_FREERTOS_H
#include <stddef.h>
#include <stdint.h>
#include "esp_bit_defs.h"
#include "sdkconfig.h"

typedef uint8_t StackType_t;
typedef int BaseType_t;
typedef unsigned int UBaseType_t;
typedef uint32_t TickType_t;

#define portMAX_DELAY ((TickType_t)0xffffffffUL)
#define pdFALSE ((BaseType_t)0)
#define pdTRUE ((BaseType_t)1)
#define configTICK_RATE_HZ CONFIG_FREERTOS_HZ
#define pdMS_TO_TICKS(xTimeInMs) \
    ((TickType_t)(((TickType_t)(xTimeInMs) * (TickType_t)configTICK_RATE_HZ) / (TickType_t)1000U))

typedef void (*TaskFunction_t)(void *);

/* The critical section's spinlock (esp_hw_support's spinlock_t). */
typedef struct {
    uint32_t owner;
    uint32_t count;
} portMUX_TYPE;
#define portMUX_INITIALIZER_UNLOCKED {.owner = 0xB33FFFFF, .count = 0}

void vPortEnterCritical(portMUX_TYPE *mux);
void vPortExitCritical(portMUX_TYPE *mux);
#define portENTER_CRITICAL(mux) vPortEnterCritical(mux)
#define portEXIT_CRITICAL(mux) vPortExitCritical(mux)

/* A task's control block, allocated by the caller (its fields are the
 * kernel's). */
typedef struct xSTATIC_TCB {
    void *pxDummy1;
    UBaseType_t uxDummy5;
    uint8_t ucDummy7[16];
} StaticTask_t;

#endif
