/* proto.c — building and validating interposer <-> daemon messages (see proto.h). */
#include "proto.h"

#include <string.h>

static size_t expected_length(uint16_t type)
{
    switch (type) {
    case CG_MSG_HELLO: return sizeof(struct cg_msg_hello);
    case CG_MSG_WELCOME: return sizeof(struct cg_msg_welcome);
    case CG_MSG_ALLOC: return sizeof(struct cg_msg_alloc);
    case CG_MSG_ALLOC_REPLY: return sizeof(struct cg_msg_alloc_reply);
    case CG_MSG_FREED: return sizeof(struct cg_msg_freed);
    case CG_MSG_ERROR: return sizeof(struct cg_msg_error);
    case CG_MSG_SWAPPED: return sizeof(struct cg_msg_swapped);
    default: return 0;
    }
}

const char *cg_msg_type_name(uint16_t type)
{
    switch (type) {
    case CG_MSG_HELLO: return "HELLO";
    case CG_MSG_WELCOME: return "WELCOME";
    case CG_MSG_ALLOC: return "ALLOC";
    case CG_MSG_ALLOC_REPLY: return "ALLOC_REPLY";
    case CG_MSG_FREED: return "FREED";
    case CG_MSG_ERROR: return "ERROR";
    case CG_MSG_SWAPPED: return "SWAPPED";
    default: return "UNKNOWN";
    }
}

void cg_proto_init(union cg_msg *m, enum cg_msg_type type, uint64_t id)
{
    memset(m, 0, sizeof *m);
    m->hdr.magic = CG_PROTO_MAGIC;
    m->hdr.version = CG_PROTO_VERSION;
    m->hdr.type = (uint16_t)type;
    m->hdr.length = (uint32_t)expected_length((uint16_t)type);
    m->hdr.id = id;
}

static int reject(const char **why, const char *text)
{
    if (why)
        *why = text;
    return -1;
}

int cg_proto_peek_version(const void *buf, size_t len, uint16_t *version)
{
    struct cg_msg_hdr h;
    if (!buf || len < sizeof h)
        return -1;
    memcpy(&h, buf, sizeof h);
    if (h.magic != CG_PROTO_MAGIC)
        return -1;
    *version = h.version;
    return 0;
}

int cg_proto_decode(const void *buf, size_t len, union cg_msg *out, const char **why)
{
    if (!buf || len < sizeof(struct cg_msg_hdr))
        return reject(why, "message shorter than its header");
    struct cg_msg_hdr h;
    memcpy(&h, buf, sizeof h);
    if (h.magic != CG_PROTO_MAGIC)
        return reject(why, "bad magic");
    if (h.version < CG_PROTO_MIN_VERSION)
        return reject(why, "protocol version older than this end adopts");
    if (h.version > CG_PROTO_VERSION)
        return reject(why, "protocol version newer than this end's");
    size_t want = expected_length(h.type);
    if (want == 0)
        return reject(why, "unknown message type");
    if (h.length != want || len != want)
        return reject(why, "wrong length for message type");
    if (h.reserved != 0)
        return reject(why, "reserved header field set");
    memset(out, 0, sizeof *out);
    memcpy(out, buf, want);
    switch (h.type) {
    case CG_MSG_HELLO:
        if (out->hello.reserved || (out->hello.flags & ~CG_HELLO_RECONNECT))
            return reject(why, "unknown HELLO flags");
        if ((out->hello.flags & CG_HELLO_RECONNECT) == 0 && (out->hello.slot || out->hello.generation))
            return reject(why, "slot given without RECONNECT");
        break;
    case CG_MSG_ALLOC:
        if (out->alloc.bytes == 0)
            return reject(why, "zero-byte ALLOC");
        break;
    case CG_MSG_ALLOC_REPLY:
        if (out->alloc_reply.status > CG_ALLOC_INVALID || out->alloc_reply.reserved)
            return reject(why, "unknown ALLOC_REPLY status");
        break;
    case CG_MSG_ERROR:
        out->error.text[sizeof out->error.text - 1] = '\0';
        break;
    default:
        break;
    }
    return 0;
}
