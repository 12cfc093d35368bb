/* proto.h — the interposer <-> daemon wire protocol on a container's UNIX socket.
 *
 * SOCK_SEQPACKET, so every message is one datagram and needs no framing. Both ends are on one
 * host, so integers travel in host byte order. Every message starts with the same header; the
 * daemon treats everything it receives as hostile and decodes it with cg_proto_decode(), which
 * checks magic, version, type and exact length before a field is read. Anything that fails to
 * decode closes that client's connection and touches nothing else.
 *
 * The exchange:
 *   client: HELLO              daemon: WELCOME (+ the ledger fd via SCM_RIGHTS)   once per process
 *   client: ALLOC(id, bytes)   daemon: ALLOC_REPLY(id, status)  when granted or refused; a
 *                              suspended request is answered only when the policy resumes it
 *   client: FREED              (no reply) use went down while the container has waiters
 *   client: SWAPPED            (no reply) the process reported its part of a swap order in the
 *                              ledger (docs/SWAP.md): the daemon looks at the move at once
 *                              rather than at its next poll
 * Identity is never claimed: the daemon takes the pid from SO_PEERCRED and the container from
 * the socket the process connected to.
 */
#ifndef CONVGPU_PROTO_H
#define CONVGPU_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define CG_PROTO_MAGIC 0x43564750u /* "CVGP" */
/* Versions, for upgrades while containers run (docs/OPERATIONS.md, "Upgrades"). A process keeps
 * the interposer it started with, so after `apt install` of a newer convgpu a daemon talks to
 * processes of older interposers. Each end speaks CG_PROTO_VERSION and accepts every version
 * from CG_PROTO_MIN_VERSION up to it; the daemon answers each process in the version of its
 * HELLO. A new version that only adds meaning keeps MIN; one that changes a message's layout
 * raises MIN to itself, and a daemon then leaves processes of older interposers fenced under
 * their ledgers' quotas (it says so per container) instead of misreading them. A version above
 * CG_PROTO_VERSION is a newer peer: an older daemon after a downgrade refuses it by name.
 * (CONVGPU_VERSION_BUMP builds, tests/upgrade, define a higher CG_PROTO_VERSION.) */
#ifndef CG_PROTO_VERSION
#define CG_PROTO_VERSION 1u
#endif
#define CG_PROTO_MIN_VERSION 1u

enum cg_msg_type {
    CG_MSG_HELLO = 1,
    CG_MSG_WELCOME = 2,
    CG_MSG_ALLOC = 3,
    CG_MSG_ALLOC_REPLY = 4,
    CG_MSG_FREED = 5,
    CG_MSG_ERROR = 6,
    CG_MSG_SWAPPED = 7,
};

struct cg_msg_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t length;   /* whole message, header included */
    uint32_t reserved; /* must be zero */
    uint64_t id;       /* request id (ALLOC / ALLOC_REPLY), else zero */
};

#define CG_HELLO_RECONNECT 1u /* the process held `slot` under an earlier daemon instance */

struct cg_msg_hello {
    struct cg_msg_hdr hdr;
    uint32_t flags;
    uint32_t slot;         /* with CG_HELLO_RECONNECT: the slot it holds */
    uint32_t generation;   /* with CG_HELLO_RECONNECT: that slot's generation */
    uint32_t reserved;
};

struct cg_msg_welcome {
    struct cg_msg_hdr hdr;
    uint32_t slot;
    uint32_t generation;
    uint32_t device;
    uint32_t devices;      /* GPUs of the container (socket k: device ordinal k); 0 means 1 */
    uint64_t limit;
    uint64_t granularity;
    uint64_t context_charge;
};

struct cg_msg_alloc {
    struct cg_msg_hdr hdr;
    uint64_t bytes; /* the charge needed beyond the slot's quota (already rounded) */
};

enum cg_alloc_status {
    CG_ALLOC_GRANTED = 0,
    CG_ALLOC_OVER_LIMIT = 1,  /* use + bytes > limit: CUDA_ERROR_OUT_OF_MEMORY */
    CG_ALLOC_CANCELLED = 2,   /* container removed or request withdrawn */
    CG_ALLOC_INVALID = 3,     /* malformed request */
};

struct cg_msg_alloc_reply {
    struct cg_msg_hdr hdr;
    uint32_t status;
    uint32_t reserved;
};

struct cg_msg_freed {
    struct cg_msg_hdr hdr;
};

struct cg_msg_swapped {
    struct cg_msg_hdr hdr;
};

struct cg_msg_error {
    struct cg_msg_hdr hdr;
    uint32_t code;
    uint32_t reserved;
    char text[96]; /* NUL-terminated */
};

union cg_msg {
    struct cg_msg_hdr hdr;
    struct cg_msg_hello hello;
    struct cg_msg_welcome welcome;
    struct cg_msg_alloc alloc;
    struct cg_msg_alloc_reply alloc_reply;
    struct cg_msg_freed freed;
    struct cg_msg_swapped swapped;
    struct cg_msg_error error;
};

#define CG_MSG_MAX sizeof(union cg_msg)

/* Fills a header for `type` with the right length. */
void cg_proto_init(union cg_msg *m, enum cg_msg_type type, uint64_t id);

/* The version in a received message's header when its magic is ours: 0 with *version set, -1
 * when buf is shorter than a header or not ours. Lets a receiver tell "another version" from
 * "garbage" before cg_proto_decode refuses both. */
int cg_proto_peek_version(const void *buf, size_t len, uint16_t *version);

/* Validates `len` received bytes and copies them into *out. Returns 0, or -1 with *why set to a
 * static description (bad magic, a version outside CG_PROTO_MIN_VERSION..CG_PROTO_VERSION,
 * unknown type, wrong length, reserved field set, ...). out->hdr.version is the sender's
 * version. Never reads past `len`. */
int cg_proto_decode(const void *buf, size_t len, union cg_msg *out, const char **why);

const char *cg_msg_type_name(uint16_t type);

#endif
