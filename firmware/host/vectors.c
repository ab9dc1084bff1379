#include "vectors.h"

#include <stdio.h>
#include <string.h>

static void copy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) {
        n = cap - 1;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int vec_read(const char *path, vec_t *out, int max)
{
    char buf[512];
    int n = -1;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    while (fgets(buf, sizeof buf, f)) {
        char *eq;
        buf[strcspn(buf, "\n")] = '\0';
        if (buf[0] == '\0' || buf[0] == '#') {
            continue;
        }
        if (buf[0] == '[') {
            char *sp = strchr(buf, ' ');
            if (n + 1 >= max || sp == NULL) {
                break;
            }
            n++;
            memset(&out[n], 0, sizeof out[n]);
            *sp = '\0';
            copy(out[n].section, sizeof out[n].section, buf + 1);
            sp[strcspn(sp + 1, "]") + 1] = '\0';
            copy(out[n].name, sizeof out[n].name, sp + 1);
            continue;
        }
        if (n < 0 || (eq = strstr(buf, " =")) == NULL) {
            continue;
        }
        *eq = '\0';
        eq += 2;
        if (*eq == ' ') {
            eq++;
        }
        if (strcmp(buf, "line") == 0) {
            copy(out[n].line, sizeof out[n].line, eq);
        } else if (strcmp(buf, "kind") == 0) {
            copy(out[n].kind, sizeof out[n].kind, eq);
        } else if (strcmp(buf, "error") == 0) {
            copy(out[n].err, sizeof out[n].err, eq);
        } else if (out[n].nkv < VEC_KV) {
            copy(out[n].key[out[n].nkv], sizeof out[n].key[0], buf);
            copy(out[n].val[out[n].nkv], sizeof out[n].val[0], eq);
            out[n].nkv++;
        }
    }
    fclose(f);
    return n + 1;
}

const char *vec_get(const vec_t *v, const char *key)
{
    int i;
    for (i = 0; i < v->nkv; i++) {
        if (strcmp(v->key[i], key) == 0) {
            return v->val[i];
        }
    }
    return NULL;
}
