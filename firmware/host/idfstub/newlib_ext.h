/* What ESP-IDF's newlib declares in <string.h> that glibc's does not at
 * -std=c11 (forced in with -include; a redeclaration where glibc has it). */
#ifndef IDFSTUB_NEWLIB_EXT_H
#define IDFSTUB_NEWLIB_EXT_H
#include <stddef.h>
size_t strlcpy(char *restrict dst, const char *restrict src, size_t size);
#endif
