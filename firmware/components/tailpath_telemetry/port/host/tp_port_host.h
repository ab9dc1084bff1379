/*
 * tp_port_host.h: host implementation of tp_port.h for tests and the
 * scenario runner: a settable clock, settable heap figures, output to a
 * callback, and a pthread mutex that aborts on recursive locking.
 */
#ifndef TP_PORT_HOST_H
#define TP_PORT_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "tp_port.h"

typedef void (*tp_host_writer_t)(void *ctx, const char *line, size_t len);

void tp_host_set_now(uint32_t ms);
void tp_host_set_heap(const tp_heap_t *h);
/** Where tp_port_write goes; NULL writes to stdout. */
void tp_host_set_writer(tp_host_writer_t fn, void *ctx);
/** Number of tp_port_lock calls so far (to check hooks lock). */
unsigned long tp_host_lock_count(void);

#endif
