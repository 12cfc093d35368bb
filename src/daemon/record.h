/* record.h — the daemon's own account of a container: what it assigned, which processes hold
 * which ledger slot, and what it granted each of them.
 *
 * The ledger (ledger.h) is shared with the container's processes, so everything in it is a
 * claim: a tenant can write any number into its header and slots. The daemon therefore keeps
 * the numbers it acts on here, in a file of its own (DIR/records/<id>, 0600, in a 0700
 * directory), written only by the daemon, mapped so that it survives the daemon's death exactly
 * as the ledger does:
 *
 *   - assigned: the container's assignment; a restarted daemon restores it from here, never from
 *     the ledger header;
 *   - per slot: the owner's pid and start time as the daemon read them (SO_PEERCRED and /proc)
 *     when it handed the slot out, the generation, and quota: the pages the daemon granted. A
 *     slot's use is read as min(ledger used, record quota), so whatever a tenant writes, the
 *     daemon counts no more than it granted and adopts no process it did not welcome;
 *   - grant notes (a grant charged whose reply is not sent yet), so a restarted daemon answers a
 *     re-sent request without charging it twice (decide.c, record_* below);
 *   - the ledger's inode, so that a restarted daemon can find the same sealed memfd again in the
 *     mappings of the container's live processes (container.c).
 *
 * Only the daemon writes the file, single-threaded; the order of its stores matters only for a
 * daemon killed between two of them, so a compiler barrier separates the steps of a grant. */
#ifndef CONVGPUD_RECORD_H
#define CONVGPUD_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ledger.h"

#define CG_RECORD_MAGIC 0x52475643u /* "CVGR" */
/* A daemon reads the records of versions CG_RECORD_MIN_VERSION..CG_RECORD_VERSION (an upgrade
 * keeps every running container's account); a record of a newer version means a downgrade,
 * which record_check_downgrade() refuses before anything is restored. */
#ifndef CG_RECORD_VERSION
#define CG_RECORD_VERSION 1u
#endif
#define CG_RECORD_MIN_VERSION 1u

struct cg_record_slot {
    uint32_t pid;          /* 0: free */
    uint32_t generation;
    uint64_t start;        /* the owner's start time; never 0 for a slot in use */
    uint32_t quota;        /* pages granted: the quota half the daemon last wrote */
    uint32_t noted;        /* notes[0, noted) are grants not yet answered */
    struct cg_ledger_grant notes[CG_LEDGER_NOTES];
    uint8_t pad_[8];
};

struct cg_record {
    uint32_t magic;
    uint32_t version;
    uint64_t assigned;     /* bytes */
    uint64_t ledger_dev;
    uint64_t ledger_ino;
    uint32_t high;         /* slots [0, high) may be in use */
    uint32_t pad0_;
    uint64_t peak;         /* bytes: the highest use read from the ledger (profile.h) */
    uint8_t pad_[16];
    struct cg_record_slot slots[CG_LEDGER_SLOTS];
};

_Static_assert(sizeof(struct cg_record_slot) == 64, "one slot per cache line");
_Static_assert(sizeof(struct cg_record) == 64 + 64 * CG_LEDGER_SLOTS, "fixed layout");

#define CG_RECORD_SIZE sizeof(struct cg_record)

/* Creates DIR/records/<id> (fresh) or opens it (restore; a missing, foreign or malformed record
 * is replaced by a fresh one and *found is false). The file's blocks are allocated up front, so a
 * full file system cannot fault a later store. Returns the mapping, or NULL with err. */
struct cg_record *record_open(int records_fd, const char *id, bool restore, bool *found, char *err,
                              size_t errlen);
void record_close(struct cg_record *r);
/* 0 when no record in records_fd is newer than this daemon reads; -1 with err naming the first
 * that is (a downgrade while containers run: their accounts would be lost), and what to do. */
int record_check_downgrade(int records_fd, char *err, size_t errlen);
int record_unlink(int records_fd, const char *id);

#endif
