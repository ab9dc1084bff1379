/* vectors.h: reader for firmware/testdata/vectors.txt (host tests only). */
#ifndef VECTORS_H
#define VECTORS_H

#define VEC_MAX 64
#define VEC_KV 24

typedef struct {
    char section[16], name[64], line[400], kind[4], err[16];
    int nkv;
    char key[VEC_KV][16];
    char val[VEC_KV][80];
} vec_t;

/* Reads up to max vectors from path; returns the count, -1 on error. */
int vec_read(const char *path, vec_t *out, int max);
/* Value of key in v, or NULL. */
const char *vec_get(const vec_t *v, const char *key);

#endif
