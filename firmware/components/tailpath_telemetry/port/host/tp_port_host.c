/* tp_port_host.c: tp_port.h for the host (tests, scenario runner). */
#define _POSIX_C_SOURCE 200809L
#include "tp_port_host.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t holder;
static int held;
static unsigned long locks;
static uint32_t now_ms;
static tp_heap_t heap;
static tp_host_writer_t writer;
static void *writer_ctx;

void tp_host_set_now(uint32_t ms) { now_ms = ms; }

void tp_host_set_heap(const tp_heap_t *h)
{
    if (h) {
        heap = *h;
    }
}

void tp_host_set_writer(tp_host_writer_t fn, void *ctx)
{
    writer = fn;
    writer_ctx = ctx;
}

unsigned long tp_host_lock_count(void) { return locks; }

uint32_t tp_port_now_ms(void) { return now_ms; }

void tp_port_lock(void)
{
    /* A recursive lock would deadlock on the device: fail loudly here. */
    if (held && pthread_equal(holder, pthread_self())) {
        fprintf(stderr, "tp_port_lock: recursive lock\n");
        abort();
    }
    pthread_mutex_lock(&mu);
    holder = pthread_self();
    held = 1;
    locks++;
}

void tp_port_unlock(void)
{
    held = 0;
    pthread_mutex_unlock(&mu);
}

void tp_port_write(const char *line, size_t len)
{
    if (writer) {
        writer(writer_ctx, line, len);
    } else {
        fwrite(line, 1, len, stdout);
    }
}

void tp_port_heap(tp_heap_t *out)
{
    if (out) {
        *out = heap;
    }
}
