/* uidcount.h — how many of something each user holds (connections, followers): a small map from
 * uid to counters. Used where a bound per user is checked at the moment a descriptor is taken,
 * so one user's thousand connections cost the check one lookup, not a walk. */
#ifndef CONVGPUD_UIDCOUNT_H
#define CONVGPUD_UIDCOUNT_H

#include <stdbool.h>
#include <sys/types.h>

struct uid_count {
    uid_t uid;
    unsigned n;     /* what the bound is about (connections) */
    unsigned aux;   /* a second count kept with it (event followers) */
};

struct uid_counts {
    struct uid_count *v;
    unsigned len, cap;
};

/* The entry of uid, or NULL when it holds nothing. */
struct uid_count *uidcount_get(const struct uid_counts *m, uid_t uid);
/* Adds dn to n and daux to aux of uid's entry (made on first use; dropped when both reach 0).
 * Negative deltas never take a count below 0. -1 only when out of memory (nothing changed). */
int uidcount_add(struct uid_counts *m, uid_t uid, int dn, int daux);
/* The entry with the largest n, leaving out `except` (NULL when none). */
struct uid_count *uidcount_heaviest(const struct uid_counts *m, uid_t except);
void uidcount_free(struct uid_counts *m);

#endif
