/* ledger_attack.c — what a tenant's process can do with the ledger the daemon hands it, for the
 * security tests (test_tenant_files.sh). It connects like the interposer (HELLO, WELCOME with
 * the ledger fd), then does as told and reports key=value lines:
 *
 *   ledger_attack SOCKET ACTION...
 *
 *   resize                 ftruncate the ledger to 0, to 1 GiB, fallocate 1 MiB past its end:
 *                          shrink=ok|EPERM.. grow=.. fallocate=..
 *   forge-header BYTES     write BYTES into the header's limit and assigned
 *   forge-own PAGES        our slot's word := PAGES quota, PAGES used
 *   forge-slot I PID START a free slot I names process PID started at START (0 allowed), with
 *                          256 pages of quota and use, and high_slot raised to cover it
 *   alloc BYTES            send ALLOC and wait for the reply: alloc_status=N (0 granted)
 *   slot                   print used= quota= of our slot
 *   hold FILE              wait until FILE exists (at most 120 s)
 *
 * Exit status: 0 when every action ran, 3 when the connection failed, 2 usage. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ledger.h"
#include "proto.h"

static int sock = -1, lfd = -1;
static struct cg_ledger *ledger;
static uint32_t slot;

static const char *result(int rc)
{
    return rc == 0 ? "ok" : errno == EPERM ? "EPERM" : strerror(errno);
}

static int recv_msg(union cg_msg *m, int *fd)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    if (poll(&p, 1, 60000) != 1)
        return -1;
    unsigned char buf[CG_MSG_MAX + 64];
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                        .msg_controllen = sizeof cbuf};
    ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    if (n <= 0)
        return -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm && fd; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(fd, CMSG_DATA(cm), sizeof *fd);
    const char *why;
    return cg_proto_decode(buf, (size_t)n, m, &why);
}

static int connect_hello(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof sa) != 0) {
        printf("connect=error errno=%s\n", strerror(errno));
        return -1;
    }
    union cg_msg m;
    cg_proto_init(&m, CG_MSG_HELLO, 0);
    if (send(sock, &m, m.hdr.length, MSG_NOSIGNAL) != (ssize_t)m.hdr.length)
        return -1;
    if (recv_msg(&m, &lfd) != 0 || m.hdr.type != CG_MSG_WELCOME || lfd < 0) {
        printf("welcome=no\n");
        return -1;
    }
    slot = m.welcome.slot;
    ledger = mmap(NULL, CG_LEDGER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
    if (ledger == MAP_FAILED) {
        printf("map=error errno=%s\n", strerror(errno));
        return -1;
    }
    printf("welcome=yes slot=%u pid=%d\n", slot, (int)getpid());
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ledger_attack SOCKET ACTION...\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (connect_hello(argv[1]) != 0)
        return 3;
    uint64_t next_id = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool has1 = i + 1 < argc, has3 = i + 3 < argc;
        if (strcmp(a, "resize") == 0) {
            int s = ftruncate(lfd, 0);
            printf("shrink=%s\n", result(s));
            s = ftruncate(lfd, 1 << 30);
            printf("grow=%s\n", result(s));
            int e = posix_fallocate(lfd, (off_t)CG_LEDGER_SIZE, 1 << 20);
            errno = e;
            printf("fallocate=%s\n", result(e ? -1 : 0));
        } else if (strcmp(a, "forge-header") == 0 && has1) {
            uint64_t v = strtoull(argv[++i], NULL, 10);
            atomic_store(&ledger->limit, v);
            atomic_store(&ledger->assigned, v);
            printf("forged_header=%" PRIu64 "\n", v);
        } else if (strcmp(a, "forge-own") == 0 && has1) {
            uint64_t pages = strtoull(argv[++i], NULL, 10);
            atomic_store(&ledger->slots[slot].word, cg_ledger_pack(pages, pages));
            printf("forged_own=%" PRIu64 "\n", pages);
        } else if (strcmp(a, "forge-slot") == 0 && has3) {
            uint32_t k = (uint32_t)strtoul(argv[i + 1], NULL, 10);
            uint32_t pid = (uint32_t)strtoul(argv[i + 2], NULL, 10);
            uint64_t start = strtoull(argv[i + 3], NULL, 10);
            i += 3;
            if (k >= CG_LEDGER_SLOTS)
                return 2;
            struct cg_ledger_slot *s = &ledger->slots[k];
            atomic_store(&s->word, cg_ledger_pack(256, 256));
            s->owner_start = start;
            atomic_store(&s->generation, 1);
            atomic_store(&s->pid, pid);
            if (atomic_load(&ledger->high_slot) <= k)
                atomic_store(&ledger->high_slot, k + 1);
            printf("forged_slot=%u pid=%u start=%" PRIu64 "\n", k, pid, start);
        } else if (strcmp(a, "alloc") == 0 && has1) {
            union cg_msg m;
            cg_proto_init(&m, CG_MSG_ALLOC, next_id++);
            m.alloc.bytes = strtoull(argv[++i], NULL, 10);
            if (send(sock, &m, m.hdr.length, MSG_NOSIGNAL) != (ssize_t)m.hdr.length ||
                recv_msg(&m, NULL) != 0 || m.hdr.type != CG_MSG_ALLOC_REPLY) {
                printf("alloc_status=none\n");
                continue;
            }
            printf("alloc_status=%u\n", m.alloc_reply.status);
        } else if (strcmp(a, "slot") == 0) {
            uint64_t w = atomic_load(&ledger->slots[slot].word);
            printf("used=%" PRIu64 " quota=%" PRIu64 "\n", (uint64_t)(cg_ledger_used(w) * CG_LEDGER_PAGE),
                   (uint64_t)(cg_ledger_quota(w) * CG_LEDGER_PAGE));
        } else if (strcmp(a, "hold") == 0 && has1) {
            const char *f = argv[++i];
            printf("holding=yes\n");
            for (int t = 0; t < 120000 && access(f, F_OK) != 0; t += 10)
                usleep(10000);
        } else {
            fprintf(stderr, "ledger_attack: bad action '%s'\n", a);
            return 2;
        }
    }
    return 0;
}
