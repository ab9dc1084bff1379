/* tp_corelock.c: lwIP core-lock re-entry guard. Portable C99. */
#include "tp_corelock.h"

#include <stddef.h>

tp_corelock_result_t tp_corelock_enter(tp_corelock_t *g, const void *self)
{
    if (g == NULL || self == NULL) {
        return TP_CORELOCK_BAD;
    }
    /* Only self can have written self into owner, so this read is race-free
     * for the question asked (another task's writes never equal self). */
    if (g->owner == self) {
        g->reentries++;
        return TP_CORELOCK_REENTRY;
    }
    return TP_CORELOCK_TAKE;
}

void tp_corelock_taken(tp_corelock_t *g, const void *self)
{
    if (g != NULL) {
        g->owner = self;
    }
}

int tp_corelock_exit(tp_corelock_t *g, const void *self)
{
    if (g == NULL || self == NULL) {
        return 0;
    }
    if (g->owner != self) {
        g->bad_exits++;
        return 0;
    }
    g->owner = NULL;
    return 1;
}

int tp_corelock_held(const tp_corelock_t *g, const void *self)
{
    return g != NULL && self != NULL && g->owner == self;
}
