/* fields.c: prints the field table (tp_frame.h), one line per frame kind:
 * the letter, then "key type" pairs in wire order with the type as
 * docs/telemetry.md names it. firmware's Go test holds it to the doc, which
 * devlink/telemetry's test holds the Go table to. */
#include <stdio.h>

#include "tp_frame.h"

#define DOC_U32 "u32"
#define DOC_U16 "u16"
#define DOC_I8 "i32" /* an int8_t here, signed decimal on the wire */
#define DOC_BOOL "0/1"
#define DOC_IP "IPv4"
#define DOC_ADDR "addr"
#define DOC_RESET "word"
#define DOC_DERPBY "word"
#define DOC_HOST "word"
#define DOC_WORD "word"
#define DOC_KIBS "fixed"
#define PRINT_FIELD_(member, key, TYPE, WHEN) printf(" %s %s", key, DOC_##TYPE);
#define PRINT_KIND_(name, letter, FIELDS) \
    printf("%c", letter);                 \
    FIELDS(PRINT_FIELD_)                  \
    printf("\n");

int main(void)
{
    TP_FRAME_KINDS(PRINT_KIND_)
    return 0;
}
