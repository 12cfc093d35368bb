/* settings.c — the table of the daemon's settings (settings.h), made from the rows of
 * settings.def, which also make struct daemon_options' fields (daemon.h). Common kinds (a whole
 * number in a range, a size, yes/no) are parsed from the row alone; a setting with its own
 * rules has a small parser beside the table. Every refusal reads "NAME takes WHAT, not 'VALUE'"
 * unless the setting has more to say (a topology file's own error, a group that does not
 * exist). The pages that describe the settings (convgpud.8's OPTIONS, convgpud.conf.5's KEYS,
 * OPERATIONS.md's synopsis and table, the example configuration file) are printed from the same
 * rows (settings_doc), so a row of settings.def is the only place a setting is written;
 * `make docs` puts them in the files, the build into the installed man pages, and docs.settings
 * fails when the files are stale. */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adaptive.h"
#include "daemon.h"
#include "log.h"
#include "oversub.h"
#include "profile.h"
#include "size.h"
#include "topology_file.h"

enum setting_kind {
    K_UINT,   /* unsigned, min..max */
    K_SIZE,   /* uint64_t bytes (cg_parse_size), at least min */
    K_BOOL,   /* bool: yes|no (true|false) */
    K_CUSTOM, /* parse() */
};

/* The words of the documentation (doc, default_words, values) are in a small markup that each
 * page renders its own way: `code` is a literal (bold in a man page, code in Markdown), {name}
 * names another setting (--name in convgpud.8, name in convgpud.conf.5 and OPERATIONS.md), and
 * the UTF-8 multiplication sign is roff's \(mu. Nothing else is special. */
struct setting {
    const char *name;
    const char *arg;  /* what --help shows after the flag */
    const char *def;  /* the default, applied through the parser at start; NULL: zero/none */
    const char *default_words; /* where def is NULL: the default as the pages say it */
    const char *help; /* one paragraph, wrapped by --help; says the default in words */
    const char *doc;  /* the pages' paragraph (man pages, OPERATIONS.md), without the default
                       * and the values, which the pages add from the row */
    enum setting_kind kind;
    size_t offset;    /* of the row's field in struct daemon_options (K_CUSTOM: its parser's) */
    unsigned long long min, max;
    const char *takes; /* the words of a refusal: "NAME takes TAKES, not 'VALUE'" */
    const char *values; /* K_CUSTOM: what it takes, for the pages (the others': from the row) */
    int (*parse)(struct daemon_options *o, const char *value, char *err, size_t errlen);
};

#define OPT(field) offsetof(struct daemon_options, field)

/* ---- settings with rules of their own ------------------------------------------------------ */

static int p_runtime_dir(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (value[0] != '/' || strlen(value) >= sizeof o->runtime_dir - 80) {
        snprintf(err, errlen, "runtime-dir must be an absolute path of at most %zu characters",
                 sizeof o->runtime_dir - 80);
        return -1;
    }
    snprintf(o->runtime_dir, sizeof o->runtime_dir, "%s", value);
    return 0;
}

static int p_emulate(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (strlen(value) >= sizeof o->emulate) {
        snprintf(err, errlen, "emulate takes a device list such as 5GiB or 4x8GiB");
        return -1;
    }
    snprintf(o->emulate, sizeof o->emulate, "%s", value);
    return 0;
}

static int p_topology(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    /* Parsed here so that a bad file stops the daemon before anything starts; the emulated NVML
     * reads it again from the absolute path. */
    static cg_topo scratch;
    char reason[PATH_MAX + 256], full[PATH_MAX];
    if (cg_topo_load(value, &scratch, reason, sizeof reason) != 0) {
        snprintf(err, errlen, "topology: %s", reason);
        return -1;
    }
    if (!realpath(value, full) || strlen(full) >= sizeof o->topology) {
        snprintf(err, errlen, "topology: %s: cannot resolve the path", value);
        return -1;
    }
    snprintf(o->topology, sizeof o->topology, "%s", full);
    return 0;
}

static int p_policy(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    o->policy_explicit = true;
    if (!cg_resume_policy_parse(value, &o->policy)) {
        snprintf(err, errlen, "unknown policy '%s' (fifo, best-fit, recent, random, %s)", value,
                 cg_resume_policy_name(CG_RESUME_AGING_FIT));
        return -1;
    }
    return 0;
}

static int p_placement(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    o->policy_explicit = true;
    if (!cg_placement_policy_parse(value, &o->placement)) {
        snprintf(err, errlen, "unknown placement '%s' (first-fit, least-loaded, binpack, "
                              "load-balance, standalone, interference)", value);
        return -1;
    }
    return 0;
}

static int p_fair_share(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (!cg_fair_mode_parse(value, &o->fair_share)) {
        snprintf(err, errlen, "unknown fair-share mode '%s' (none, static, adaptive)", value);
        return -1;
    }
    return 0;
}

static int p_oversubscribe(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    return oversub_parse(value, &o->oversub, err, errlen) != 0 ? -1 : 0;
}

static int p_granularity(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    const char *why;
    if (cg_parse_size(value, &v, &why) != 0 || v == 0 || v % CG_LEDGER_PAGE || (v & (v - 1))) {
        snprintf(err, errlen, "granularity must be a power of two multiple of 4KiB, not '%s'",
                 value);
        return -1;
    }
    o->granularity = v;
    return 0;
}

static int p_metrics(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (strlen(value) >= sizeof o->metrics_addr || !strchr(value, ':')) {
        snprintf(err, errlen, "metrics takes ADDR:PORT, e.g. 127.0.0.1:9400");
        return -1;
    }
    snprintf(o->metrics_addr, sizeof o->metrics_addr, "%s", value);
    return 0;
}

static int p_pause_fallback(struct daemon_options *o, const char *value, char *err,
                            size_t errlen)
{
    if (strcmp(value, "none") != 0 && strcmp(value, "swap") != 0) {
        snprintf(err, errlen, "pause-fallback takes none or swap, not '%s'", value);
        return -1;
    }
    o->pause_fallback_swap = strcmp(value, "swap") == 0;
    return 0;
}

static int p_auto_pause(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0) {
        snprintf(err, errlen, "auto-pause takes yes or no, not '%s'", value);
        return -1;
    }
    o->auto_pause = strcmp(value, "yes") == 0;
    return 0;
}

static int p_follow_stop(struct daemon_options *o, const char *value, char *err,
                         size_t errlen)
{
    if (strcmp(value, "off") == 0) {
        o->follow_stop[0] = '\0';
        return 0;
    }
    bool name_like = value[0] != '\0';
    for (const char *v = value; *v; v++)
        if (!isalnum((unsigned char)*v) && !strchr("-_.", *v))
            name_like = false;
    if (!name_like || strlen(value) >= sizeof o->follow_stop) {
        snprintf(err, errlen, "follow-stop takes a container id prefix such as slurm- (at most "
                              "%zu characters) or off", sizeof o->follow_stop - 1);
        return -1;
    }
    snprintf(o->follow_stop, sizeof o->follow_stop, "%s", value);
    return 0;
}

static int p_checkpoint_helper(struct daemon_options *o, const char *value, char *err,
                               size_t errlen)
{
    if (value[0] != '/' || strlen(value) >= sizeof o->checkpoint_helper) {
        snprintf(err, errlen, "checkpoint-helper takes an absolute path, not '%s'", value);
        return -1;
    }
    snprintf(o->checkpoint_helper, sizeof o->checkpoint_helper, "%s", value);
    return 0;
}

static int p_control_group(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    if (strlen(value) >= sizeof o->control_group || !getgrnam(value)) {
        snprintf(err, errlen, "control-group: no group named '%s'", value);
        return -1;
    }
    snprintf(o->control_group, sizeof o->control_group, "%s", value);
    return 0;
}

static int p_operators_group(struct daemon_options *o, const char *value, char *err,
                             size_t errlen)
{
    struct group *g = strlen(value) < sizeof o->operators_group ? getgrnam(value) : NULL;
    if (!g) {
        snprintf(err, errlen, "operators-group: no group named '%s'", value);
        return -1;
    }
    snprintf(o->operators_group, sizeof o->operators_group, "%s", value);
    o->operators_gid = g->gr_gid;
    return 0;
}

static int p_user_memory_quota(struct daemon_options *o, const char *value, char *err,
                               size_t errlen)
{
    size_t n = strlen(value);
    uint64_t v;
    const char *why;
    if (n > 1 && value[n - 1] == '%') {
        char *end;
        errno = 0;
        unsigned long pct = strtoul(value, &end, 10);
        if (errno || end != value + n - 1 || value[0] < '0' || value[0] > '9' || pct < 1 ||
            pct > 100) {
            snprintf(err, errlen, "user-memory-quota: a percentage is 1%% to 100%%, not '%s'",
                     value);
            return -1;
        }
        o->user_memory_quota = 0;
        o->user_memory_quota_pct = (unsigned)pct;
    } else if (cg_parse_size(value, &v, &why) != 0 || v == 0) {
        snprintf(err, errlen, "user-memory-quota takes a size (e.g. 8GiB) or a percentage of the "
                              "node's capacity (e.g. 50%%), not '%s'", value);
        return -1;
    } else {
        o->user_memory_quota = v;
    }
    return 0;
}

static int p_default_gpu_compute(struct daemon_options *o, const char *value, char *err,
                                 size_t errlen)
{
    unsigned pct = 0;
    if (strcmp(value, "none") != 0 && !cg_compute_pct_parse(value, &pct)) {
        snprintf(err, errlen, "default-gpu-compute takes a whole percentage from 1 to 100, or "
                              "none, not '%s'", value);
        return -1;
    }
    o->default_compute_pct = pct;
    return 0;
}

static int p_default_compute_mode(struct daemon_options *o, const char *value, char *err,
                                  size_t errlen)
{
    if (!cg_compute_mode_parse(value, &o->default_compute_mode)) {
        snprintf(err, errlen, "default-compute-mode takes hard or elastic, not '%s'", value);
        return -1;
    }
    return 0;
}

/* Seconds as a decimal, within [min, max] (0 allowed where zero0), into *out. */
static bool seconds(const char *value, double min, double max, bool zero0, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || *end || end == value || !((zero0 && v == 0) || (v >= min && v <= max)))
        return false;
    *out = v;
    return true;
}

static int p_watchdog_interval(struct daemon_options *o, const char *value, char *err,
                               size_t errlen)
{
    if (!seconds(value, 0.1, 86400, true, &o->watchdog_interval)) {
        snprintf(err, errlen, "watchdog-interval takes seconds: 0 (off) or 0.1 to 86400");
        return -1;
    }
    return 0;
}

static int p_swap_limit(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    const char *why;
    if (cg_parse_size(value, &v, &why) != 0) {
        snprintf(err, errlen, "swap-limit: bad size '%s': %s", value, why);
        return -1;
    }
    o->swap_limit = v;
    o->swap_limit_set = true;
    return 0;
}

static int p_swap_hold_share(struct daemon_options *o, const char *value, char *err,
                             size_t errlen)
{
    if (strcmp(value, "0") == 0 || strcmp(value, "0%") == 0) {
        o->swap_hold_pct = 0;
    } else if (!cg_pct_parse(value, 100, &o->swap_hold_pct)) {
        snprintf(err, errlen, "swap-hold-share takes a whole percentage from 0 to 100, not '%s'",
                 value);
        return -1;
    }
    return 0;
}

static int p_fair_interval(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    double s;
    if (!seconds(value, 1, ADAPTIVE_INTERVAL_MAX_S, false, &s)) {
        snprintf(err, errlen, "fair-interval takes seconds from 1 to %d, not '%s'",
                 ADAPTIVE_INTERVAL_MAX_S, value);
        return -1;
    }
    o->fair_interval_ns = (uint64_t)(s * 1e9);
    return 0;
}

static int p_aging(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    double s;
    if (!seconds(value, 1, 86400, false, &s)) {
        snprintf(err, errlen, "aging takes seconds from 1 to 86400, not '%s'", value);
        return -1;
    }
    o->aging_ns = (uint64_t)(s * 1e9);
    return 0;
}

static int p_profile_limits(struct daemon_options *o, const char *value, char *err,
                            size_t errlen)
{
    if (strcmp(value, "off") == 0) {
        o->profile_margin_pct = 0;
    } else if (!profile_margin_parse(value, &o->profile_margin_pct)) {
        snprintf(err, errlen, "profile-limits takes a margin from 1%% to %u%% (e.g. 20%%), or "
                              "off, not '%s'", PROFILE_MARGIN_MAX_PCT, value);
        return -1;
    }
    return 0;
}

static int p_log_level(struct daemon_options *o, const char *value, char *err, size_t errlen)
{
    enum log_level lv;
    if (!log_parse_level(value, &lv)) {
        snprintf(err, errlen, "unknown log-level '%s' (error, warn, info, debug)", value);
        return -1;
    }
    o->log_level = (int)lv;
    return 0;
}

/* ---- the table ------------------------------------------------------------------------------ */

/* The rows are in settings.def (its head says their shape); here each becomes a struct setting.
 * The struct's fields come from the same rows (daemon.h), so OPT(field) always names one. */
#define KIND_CUSTOM(type, field, fn, values) K_CUSTOM, OPT(field), 0, 0, NULL, values, fn
#define KIND_STRING(field, size, fn, values) K_CUSTOM, OPT(field), 0, 0, NULL, values, fn
#define KIND_UINT(field, lo, hi, words) K_UINT, OPT(field), lo, hi, words, NULL, NULL
#define KIND_SIZE(field, lo) K_SIZE, OPT(field), lo, 0, "a size (e.g. 64MiB)", NULL, NULL
#define KIND_BOOL(field) K_BOOL, OPT(field), 0, 0, "yes or no", NULL, NULL
#define D(value) value, NULL /* a default the parser applies at start */
#define W(words) NULL, words /* no default value to apply: the pages say what happens */
#define STR_(x) #x
#define STR(x) STR_(x)
#define SETTING(name, arg, def, help, doc, kind) {name, arg, def, help, doc, kind},

static const struct setting settings[] = {
#include "settings.def"
};
#define NSETTINGS (sizeof settings / sizeof settings[0])

_Static_assert(PROFILE_MAX_KEYS_DEFAULT == 256 && PROFILE_MAX_BYTES_DEFAULT == (1u << 20),
               "profile-max-keys and profile-max-bytes: the table's defaults are profile.h's");

size_t settings_count(void) { return NSETTINGS; }
const char *settings_name(size_t i) { return i < NSETTINGS ? settings[i].name : NULL; }

static int apply_row(struct daemon_options *o, const struct setting *s, const char *value,
                     char *err, size_t errlen)
{
    char *field = (char *)o + s->offset;
    switch (s->kind) {
    case K_UINT: {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(value, &end, 10);
        if (errno || *end || end == value || value[0] < '0' || value[0] > '9' || n < s->min ||
            n > s->max)
            break;
        *(unsigned *)field = (unsigned)n;
        return 0;
    }
    case K_SIZE: {
        uint64_t v;
        const char *why;
        if (cg_parse_size(value, &v, &why) != 0 || v < s->min)
            break;
        *(uint64_t *)field = v;
        return 0;
    }
    case K_BOOL:
        if (strcmp(value, "yes") == 0 || strcmp(value, "true") == 0) {
            *(bool *)field = true;
            return 0;
        }
        if (strcmp(value, "no") == 0 || strcmp(value, "false") == 0) {
            *(bool *)field = false;
            return 0;
        }
        break;
    case K_CUSTOM:
        return s->parse(o, value, err, errlen);
    }
    if (s->kind == K_SIZE && s->min)
        snprintf(err, errlen, "%s takes a size of at least %lluKiB, not '%s'", s->name,
                 s->min >> 10, value);
    else
        snprintf(err, errlen, "%s takes %s, not '%s'", s->name, s->takes, value);
    return -1;
}

int settings_apply(void *ctx, const char *name, const char *value, char *err, size_t errlen)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (strcmp(settings[i].name, name) == 0)
            return apply_row(ctx, &settings[i], value, err, errlen);
    snprintf(err, errlen, "unknown setting '%s'", name);
    return -1;
}

void settings_defaults(struct daemon_options *o)
{
    const char *env_dir = getenv("CONVGPU_RUNTIME_DIR");
    snprintf(o->runtime_dir, sizeof o->runtime_dir, "%s",
             env_dir && *env_dir ? env_dir : "/run/convgpu");
    char err[256];
    for (size_t i = 0; i < NSETTINGS; i++)
        if (settings[i].def && apply_row(o, &settings[i], settings[i].def, err, sizeof err) != 0)
            abort(); /* a default the table's own parser refuses: caught by every test */
}

/* One setting's help: the flag and its argument, then the text wrapped under column 24. */
static void usage_row(FILE *f, const struct setting *s)
{
    char head[64];
    int n = snprintf(head, sizeof head, "  --%s %s", s->name, s->arg);
    fputs(head, f);
    int col = n;
    if (n >= 23) {
        fputs("  ", f);
        col += 2;
    } else {
        col += fprintf(f, "%*s", 24 - n, "");
    }
    const char *p = s->help;
    while (*p) {
        size_t w = strcspn(p, " ");
        if (col + 1 + (int)w > 92 && col > 24) {
            col = fprintf(f, "\n%24s", "") - 1;
        } else if (p != s->help) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, w, f);
        col += (int)w;
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}

void settings_usage(FILE *f)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        usage_row(f, &settings[i]);
}

/* ---- the pages: convgpud.8, convgpud.conf.5 and OPERATIONS.md from the same rows ----------- */

enum page { PAGE_MAN8, PAGE_CONF5, PAGE_MARKDOWN, PAGE_PLAIN };

struct text {
    char s[8192]; /* the longest row renders to under 2 KiB */
    size_t n;
};

static void put(struct text *t, const char *s)
{
    size_t k = strlen(s);
    if (t->n + k >= sizeof t->s)
        abort(); /* a row longer than the buffer: caught by every test of the pages */
    memcpy(t->s + t->n, s, k + 1);
    t->n += k;
}

/* A literal in roff: dashes as \-, backslashes as \e. */
static void put_roff_literal(struct text *t, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c[2] = {s[i], '\0'};
        put(t, s[i] == '-' ? "\\-" : s[i] == '\\' ? "\\e" : c);
    }
}

/* The markup of the table's words (see struct setting) as the page writes it. */
static void render(struct text *t, enum page page, const char *m)
{
    bool roff = page == PAGE_MAN8 || page == PAGE_CONF5, code = false;
    while (*m) {
        if (*m == '`') {
            code = !code;
            /* \% keeps roff from hyphenating a literal */
            put(t, roff ? (code ? "\\fB\\%" : "\\fR") : page == PAGE_MARKDOWN ? "`" : "");
            m++;
        } else if (*m == '{' && strchr(m, '}')) {
            size_t len = (size_t)(strchr(m, '}') - m - 1);
            if (roff) {
                put(t, "\\fB\\%");
                if (page == PAGE_MAN8)
                    put(t, "\\-\\-");
                put_roff_literal(t, m + 1, len);
                put(t, "\\fR");
            } else {
                char name[64];
                snprintf(name, sizeof name, "%.*s", (int)len, m + 1);
                put(t, page == PAGE_MARKDOWN ? "`" : "");
                put(t, name);
                put(t, page == PAGE_MARKDOWN ? "`" : "");
            }
            m += len + 2;
        } else if (roff && strncmp(m, "\u00d7", strlen("\u00d7")) == 0) {
            put(t, "\\(mu");
            m += strlen("\u00d7");
        } else if (roff && (*m == '\\' || (*m == '-' && code))) {
            put_roff_literal(t, m, 1);
            m++;
        } else if (page == PAGE_MARKDOWN && *m == '|') {
            put(t, "\\|");
            m++;
        } else {
            char c[2] = {*m++, '\0'};
            put(t, c);
        }
    }
}

/* The default as the pages say it: the value the parser applies, or the row's words. */
static void render_default(struct text *t, enum page page, const struct setting *s)
{
    if (!s->def) {
        render(t, page, s->default_words);
        return;
    }
    char code[64];
    snprintf(code, sizeof code, "`%s`", s->def);
    render(t, page, code);
}

/* What a setting takes as the pages say it: from the row for the common kinds. */
static void render_values(struct text *t, enum page page, const struct setting *s)
{
    char words[160];
    switch (s->kind) {
    case K_UINT:
        snprintf(words, sizeof words, "`%llu` to `%llu`", s->min, s->max);
        break;
    case K_SIZE:
        if (s->min)
            snprintf(words, sizeof words, "a size of at least `%lluKiB`", s->min >> 10);
        else
            snprintf(words, sizeof words, "a size such as `64MiB` or `2GiB`");
        break;
    case K_BOOL:
        snprintf(words, sizeof words, "`yes` or `no`");
        break;
    case K_CUSTOM:
        snprintf(words, sizeof words, "%s", s->values);
        break;
    }
    render(t, page, words);
}

/* Roff text filled to about 90 columns; a line that would begin with a control character gets
 * the zero-width \& in front. */
static void print_roff(FILE *f, const char *s)
{
    while (*s) {
        const char *end = s + strlen(s), *brk = end;
        if (end - s > 90) {
            brk = s + 90;
            while (brk > s && *brk != ' ')
                brk--;
            if (brk == s)
                brk = strchr(s + 90, ' ') ? strchr(s + 90, ' ') : end;
        }
        fprintf(f, "%s%.*s\n", *s == '.' || *s == '\'' ? "\\&" : "", (int)(brk - s), s);
        s = *brk ? brk + 1 : brk;
    }
}

static void doc_roff(FILE *f, enum page page, const struct setting *s)
{
    struct text t = {.n = 0};
    fputs(".TP\n.BI ", f);
    if (page == PAGE_MAN8)
        put(&t, "\\-\\-");
    put_roff_literal(&t, s->name, strlen(s->name));
    fprintf(f, "%s \"%s%s\"\n", t.s, page == PAGE_CONF5 ? " = " : " ", s->arg);
    t.n = 0;
    t.s[0] = '\0';
    render(&t, page, s->doc);
    print_roff(f, t.s);
    t.n = 0;
    put(&t, "Default: ");
    render_default(&t, page, s);
    put(&t, ". Values: ");
    render_values(&t, page, s);
    put(&t, ".");
    fputs(".br\n", f);
    print_roff(f, t.s);
}

static void doc_markdown(FILE *f, const struct setting *s)
{
    struct text t = {.n = 0};
    put(&t, "| `");
    put(&t, s->name);
    put(&t, "` | ");
    render_default(&t, PAGE_MARKDOWN, s);
    put(&t, " | ");
    render_values(&t, PAGE_MARKDOWN, s);
    put(&t, " | ");
    render(&t, PAGE_MARKDOWN, s->doc);
    put(&t, " |");
    fprintf(f, "%s\n", t.s);
}

static void doc_tsv(FILE *f, const struct setting *s)
{
    struct text t = {.n = 0};
    render_default(&t, PAGE_PLAIN, s);
    put(&t, "\t");
    render_values(&t, PAGE_PLAIN, s);
    fprintf(f, "%s\t%s\t%s\n", s->name, s->arg, t.s);
}

/* The configuration file's example (packaging/convgpud.conf.example, installed commented out
 * as /etc/convgpu/convgpud.conf): every key with its help as a comment, then the key commented
 * out with its default, or its argument's name where the default is not a value. */
static void doc_conf(FILE *f, const struct setting *s)
{
    int col = fprintf(f, "# %s:", s->name);
    for (const char *p = s->help; *p;) {
        size_t w = strcspn(p, " ");
        if (col + 1 + (int)w > 96) {
            fputs("\n#", f);
            col = 1;
        }
        col += fprintf(f, " %.*s", (int)w, p);
        p += w;
        while (*p == ' ')
            p++;
    }
    fprintf(f, "\n#%s = %s\n\n", s->name, s->def ? s->def : s->arg);
}

/* The synopsis: every setting as [--NAME ARG] between the program's own options, filled to 96
 * columns under the program's name, in the fenced block docs.blocks checks against --help. */
static void doc_synopsis(FILE *f, const char *before, const char *after)
{
    fputs("<!-- doc-test: options convgpud -->\n```\nconvgpud", f);
    int col = (int)strlen("convgpud");
    char item[160];
    for (size_t i = 0; i <= NSETTINGS + 1; i++) {
        if (i == 0)
            snprintf(item, sizeof item, "%s", before);
        else if (i <= NSETTINGS)
            snprintf(item, sizeof item, "[--%s %s]", settings[i - 1].name, settings[i - 1].arg);
        else
            snprintf(item, sizeof item, "%s", after);
        /* before/after may hold several items: fill word groups "[...]" one by one */
        for (const char *p = item; *p;) {
            const char *close = strchr(p, ']');
            size_t len = close ? (size_t)(close - p + 1) : strlen(p);
            if (col + 1 + (int)len > 96) {
                fputs("\n        ", f);
                col = 8;
            }
            fprintf(f, " %.*s", (int)len, p);
            col += 1 + (int)len;
            p += len;
            while (*p == ' ')
                p++;
        }
    }
    fputs("\n```\n", f);
}

int settings_doc(FILE *f, const char *format, const char *before, const char *after)
{
    if (strcmp(format, "synopsis") == 0) {
        doc_synopsis(f, before, after);
        return 0;
    }
    if (strcmp(format, "markdown") == 0)
        fputs("| setting | default | values | meaning |\n|---|---|---|---|\n", f);
    else if (strcmp(format, "man8") != 0 && strcmp(format, "conf5") != 0 &&
             strcmp(format, "conf") != 0 && strcmp(format, "tsv") != 0)
        return -1;
    for (size_t i = 0; i < NSETTINGS; i++) {
        if (strcmp(format, "man8") == 0)
            doc_roff(f, PAGE_MAN8, &settings[i]);
        else if (strcmp(format, "conf5") == 0)
            doc_roff(f, PAGE_CONF5, &settings[i]);
        else if (strcmp(format, "markdown") == 0)
            doc_markdown(f, &settings[i]);
        else if (strcmp(format, "conf") == 0)
            doc_conf(f, &settings[i]);
        else
            doc_tsv(f, &settings[i]);
    }
    return 0;
}

int settings_doc_file(FILE *in, FILE *out, const char *name, const char *before,
                      const char *after)
{
    static const char begin[] = "generated: convgpud --settings-doc ";
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0, regions = 0, inside = 0;
    int rc = 0;
    while (getline(&line, &cap, in) >= 0) {
        lineno++;
        const char *b = strstr(line, begin);
        if (inside) {
            if (b) {
                fprintf(stderr, "convgpud: %s:%u: a region begins before line %u's ends\n",
                        name, lineno, inside);
                rc = -1;
                break;
            }
            if (strstr(line, "end generated")) {
                fputs(line, out);
                inside = 0;
            }
            continue;
        }
        fputs(line, out);
        if (!b)
            continue;
        char format[16];
        size_t len = strspn(b + strlen(begin), "abcdefghijklmnopqrstuvwxyz0123456789");
        snprintf(format, sizeof format, "%.*s", (int)len, b + strlen(begin));
        if (len >= sizeof format || strcmp(format, "tsv") == 0 ||
            settings_doc(out, format, before, after) != 0) {
            fprintf(stderr, "convgpud: %s:%u: no such format '%s'\n", name, lineno, format);
            rc = -1;
            break;
        }
        inside = lineno;
        regions++;
    }
    if (rc == 0 && inside) {
        fprintf(stderr, "convgpud: %s:%u: the region has no end (a line with 'end generated')\n",
                name, inside);
        rc = -1;
    } else if (rc == 0 && !regions) {
        fprintf(stderr, "convgpud: %s: no region (a line with '%s')\n", name, begin);
        rc = -1;
    }
    free(line);
    return rc;
}
