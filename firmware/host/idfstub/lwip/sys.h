/* lwip/sys.h stand-in, with ESP-IDF's FreeRTOS port (arch/sys_arch.h). */
#ifndef IDFSTUB_LWIP_SYS_H
#define IDFSTUB_LWIP_SYS_H
#include <stdbool.h>
#include "lwip/opt.h"

typedef struct QueueDefinition *sys_mutex_t;

void sys_mutex_lock(sys_mutex_t *mutex);
void sys_mutex_unlock(sys_mutex_t *mutex);

typedef enum {
    LWIP_CORE_LOCK_QUERY_HOLDER,
    LWIP_CORE_LOCK_MARK_HOLDER,
    LWIP_CORE_LOCK_UNMARK_HOLDER,
    LWIP_CORE_MARK_TCPIP_TASK,
    LWIP_CORE_IS_TCPIP_INITIALIZED,
} sys_thread_core_lock_t;

bool sys_thread_tcpip(sys_thread_core_lock_t type);

#endif
