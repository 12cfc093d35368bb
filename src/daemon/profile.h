/* profile.h — what past runs of a job teach the daemon: its peak GPU memory, how long it ran and
 * how busy it kept the GPU (seed 001: users rarely know their job's peak; the daemon learns it
 * from the runs it has seen; issue 21 item 3).
 *
 * Follow one run: `convgpu run --gpu-memory 1GiB -- ./train` creates a container whose profile
 * key is the command's basename ("train"; an integration that knows the image names the image
 * instead, API field "image") and whose tenant is the container's. Whenever the daemon
 * reads the container's use from its ledger (a request's decision, ps/inspect, /metrics, a
 * process's exit, and once a second), the highest reading is kept in the container's record
 * (record.h: a daemon restart keeps it). When the container is removed (rm, or its runner or
 * init exited) profile_record() adds the run — that peak, the time since creation, the mean
 * compute utilisation over the time the daemon measured it — to state.db. A later container of
 * the same tenant and key created with `--limit profile` (or without a limit at all, on a daemon
 * started with --profile-limits MARGIN) gets the profile's peak plus the margin as its limit,
 * clamped to the device's capacity; with no profile yet it gets what it would have got before
 * profiles existed (its gpu_memory, which is then required).
 *
 * Aggregation: each (tenant, key) keeps its last PROFILE_WINDOW runs, one row each; the profile
 * is their highest peak, mean duration and mean utilisation (over the runs where it was
 * measured), with the count of every run ever recorded. A window, not an exponential mean: a
 * limit must cover the peak, so the peak is a maximum (a mean would under-size every other run),
 * and a maximum over all time would never forget a job that shrank; the window forgets after 16
 * runs, and its rows are plain numbers an operator can check with sqlite3.
 *
 * Not recorded: a container no process ever used (peak 0: nothing learnt), one without a key
 * (created through the API with neither "image" nor "command"), one created with "profile":
 * false (convgpu interfere's pairs: slowed down on purpose), and one whose owner died while
 * the daemon was down (its end was not seen). A daemon's stop ends no container.
 *
 * The tenant is the container's (tenant.h: its owner's user unless named). */
#ifndef CONVGPUD_PROFILE_H
#define CONVGPUD_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct daemon;
struct container;

#define PROFILE_WINDOW 16             /* runs kept per (tenant, key) */
#define PROFILE_KEY_MAX 255           /* bytes of a key (an image reference can be long) */
#define PROFILE_TENANT_MAX 64
#define PROFILE_DEFAULT_MARGIN_PCT 20 /* --limit profile on a daemon without --profile-limits */
#define PROFILE_MARGIN_MAX_PCT 100    /* a margin above doubling the peak is a typo */
/* Bounds on one tenant's profiles (issue 42 item 4: distinct long keys grew state.db until
 * the disk was full). A tenant keeps at most --profile-max-keys profiles whose rows take at most
 * --profile-max-bytes, counted as PROFILE_ROW_BYTES per row (a profile's and each of its runs')
 * plus the tenant's and the key's text in each; at most (PROFILE_WINDOW + 1) x (64 + 255 +
 * PROFILE_ROW_BYTES) = 7 KiB for one profile. Recording a run that takes the tenant over either
 * drops its least recently run other profiles, oldest first, in the same transaction. */
#define PROFILE_MAX_KEYS_DEFAULT 256
#define PROFILE_MAX_BYTES_DEFAULT (1u << 20)
#define PROFILE_MAX_BYTES_MIN (16u << 10)
#define PROFILE_ROW_BYTES 64          /* a row's numbers and SQLite's own cost, roughly */

/* A container's part of profiles (struct container's `profile`): the key its runs are recorded
 * under ("" = none), and since when compute.busy_ns counts (creation, or the start of the
 * daemon that restored it). Its peak is its record's (record.h), kept by every reading. */
struct profile_state {
    char key[PROFILE_KEY_MAX + 1];
    uint64_t since;          /* monotonic ns */
};

/* One finished run, as stored. */
struct profile_run {
    char tenant[PROFILE_TENANT_MAX + 1];
    char key[PROFILE_KEY_MAX + 1];
    uint64_t peak;           /* bytes: the highest use seen, context charges included */
    uint64_t duration_ns;    /* creation to removal */
    bool util_known;         /* the daemon measured its device time (NVML per-process samples) */
    uint32_t util_permille;  /* mean share of one GPU's time, 1/1000 (0 when not known) */
    int64_t ended_unix;
};

/* A profile: the aggregate of a (tenant, key)'s last PROFILE_WINDOW runs. */
struct profile {
    char tenant[PROFILE_TENANT_MAX + 1];
    char key[PROFILE_KEY_MAX + 1];
    uint64_t peak;           /* the highest of the window's peaks */
    double duration_s;       /* their mean */
    double utilization;      /* mean of the measured runs' utilisation, 0..1; 0 when unknown */
    bool utilization_known;  /* at least one run in the window was measured */
    unsigned window;         /* runs in the window (1..PROFILE_WINDOW) */
    uint64_t runs;           /* every run recorded since the profile began */
    int64_t last_unix;       /* when the latest run ended */
};

/* "20%" (or "20"): a margin of 1% to PROFILE_MARGIN_MAX_PCT, a whole number; false otherwise
 * ("0%", "abc", "300%", "", "20.5%"). */
bool profile_margin_parse(const char *text, unsigned *pct);

/* The key of a new container: the image when one was given, else the basename of the command;
 * "" when neither (nothing is then recorded). Both were validated at the API's edge. */
void profile_key_of(const char *image, const char *command, char *out, size_t len);
/* The application a profile key names, as placement and the interference matrix see it: a
 * 64-bit hash (FNV-1a) of the key, never 0. */
uint64_t profile_app_hash(const char *key);

/* Reads every container's use once (the loop calls it once a second), so a peak reached and
 * left on the fast path between two requests is still seen when it lasts that long. */
void profile_sample(struct daemon *d);
/* The container ends: its run is added to its profile. Returns 0 (recorded, or nothing to
 * record), or the store's error (logged; the removal goes on). */
int profile_record(struct daemon *d, struct container *c);

/* The accessor the adaptive fair share reads (issue 21 item 2): the profile of (tenant, key),
 * read-only. Returns 0 and fills whichever of peak (bytes), duration_s (mean seconds) and
 * utilization (mean share of one GPU's time, 0..1; 0 when never measured) are not NULL; 1 when
 * there is no profile; -1 when the store could not be read. */
int profile_get(struct daemon *d, const char *tenant, const char *key, uint64_t *peak,
                double *duration_s, double *utilization);

/* What placement knows of a new container's application (seed 003; the core's load-balance and
 * standalone placements): its profile's mean utilisation as a whole percent (0: never
 * measured, or no profile) and its key's hash (0: no key). Never fails: a store that cannot be
 * read leaves the utilisation unknown. */
void profile_placement_hint(struct daemon *d, const char *tenant, const char *key,
                            unsigned *util_pct, uint64_t *app);

/* The limit a container asking for its profile gets: peak + margin_pct%, rounded up to whole
 * MiB and clamped to `capacity`. Returns 0 with *limit and *peak, 1 when there is no profile
 * (or its peak is 0), -1 when the store could not be read. */
int profile_limit(struct daemon *d, const char *tenant, const char *key, unsigned margin_pct,
                  uint64_t capacity, uint64_t *limit, uint64_t *peak);

#endif
