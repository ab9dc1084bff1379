/* sdkconfig.h stand-in: the Kconfig defaults (components/tailpath_telemetry/Kconfig,
 * main/Kconfig.projbuild) and sdkconfig.defaults' lwIP choice. The Makefile's
 * idf-check also compiles the other side of each #if. */
#ifndef IDFSTUB_SDKCONFIG_H
#define IDFSTUB_SDKCONFIG_H

#define CONFIG_FREERTOS_HZ 100

#define CONFIG_TAILPATH_TELEMETRY_PERIOD_MS 5000
#define CONFIG_TAILPATH_TELEMETRY_TASK_STACK 3072
#define CONFIG_TAILPATH_TELEMETRY_TASK_PRIO 2
/* CONFIG_TAILPATH_CORELOCK_ABORT: a bool, default n, so undefined (the
 * Makefile defines it for the second pass). */

#define CONFIG_TAILPATH_WIFI_SSID ""
#define CONFIG_TAILPATH_WIFI_PASSWORD ""
#define CONFIG_TAILPATH_FETCH_URL ""
#define CONFIG_TAILPATH_FETCH_PERIOD_S 60
#define CONFIG_TAILPATH_FETCH_PEER -1

#ifndef IDFSTUB_NO_CORE_LOCKING
#define CONFIG_LWIP_TCPIP_CORE_LOCKING 1
#endif

#endif
