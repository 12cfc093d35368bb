/* fuzz_proto.c — libFuzzer harness for the interposer -> daemon message decoder. Any input
 * must be either rejected with a reason or decoded into a message whose header matches its
 * type's exact length; the decoder must never read past the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Copy into an exact-size heap buffer so ASan catches any over-read. */
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    union cg_msg m;
    const char *why = NULL;
    int rc = cg_proto_decode(buf, size, &m, &why);
    if (rc == 0) {
        if (m.hdr.magic != CG_PROTO_MAGIC || m.hdr.length != size || m.hdr.reserved != 0)
            abort();
        union cg_msg again;
        cg_proto_init(&again, (enum cg_msg_type)m.hdr.type, m.hdr.id);
        if (again.hdr.length != m.hdr.length)
            abort();
    } else if (!why || !*why) {
        abort();
    }
    free(buf);
    return 0;
}
