/* lwip/opt.h stand-in: ESP-IDF's lwipopts.h (components/lwip/port), whose
 * core lock also marks its holder, so that sys_thread_tcpip can answer
 * LWIP_CORE_LOCK_QUERY_HOLDER. */
#ifndef IDFSTUB_LWIP_OPT_H
#define IDFSTUB_LWIP_OPT_H
#include "sdkconfig.h"

#ifdef CONFIG_LWIP_TCPIP_CORE_LOCKING
#define LWIP_TCPIP_CORE_LOCKING 1
#define LOCK_TCPIP_CORE()                                     \
    do {                                                      \
        sys_mutex_lock(&lock_tcpip_core);                     \
        sys_thread_tcpip(LWIP_CORE_LOCK_MARK_HOLDER);         \
    } while (0)
#define UNLOCK_TCPIP_CORE()                                   \
    do {                                                      \
        sys_thread_tcpip(LWIP_CORE_LOCK_UNMARK_HOLDER);       \
        sys_mutex_unlock(&lock_tcpip_core);                   \
    } while (0)
#else
#define LWIP_TCPIP_CORE_LOCKING 0
#endif

#endif
