/* lwip/tcpip.h stand-in: the core lock's mutex. */
#ifndef IDFSTUB_LWIP_TCPIP_H
#define IDFSTUB_LWIP_TCPIP_H
#include "lwip/opt.h"
#include "lwip/sys.h"

#if LWIP_TCPIP_CORE_LOCKING
extern sys_mutex_t lock_tcpip_core;
#endif

#endif
