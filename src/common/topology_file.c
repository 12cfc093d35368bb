/* topology_file.c — the topology file's parser (format in topology_file.h). Every line is
 * checked whole before it counts; the first bad one ends the parse with its number. */
#include "topology_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TOKENS (CG_TOPO_MAX_GPUS + 2)

__attribute__((format(printf, 4, 5)))
static int bad(char *err, size_t errlen, unsigned line, const char *fmt, ...)
{
    if (err && errlen) {
        int n = snprintf(err, errlen, "line %u: ", line);
        if (n >= 0 && (size_t)n < errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* A whole number lo..hi written in plain digits (no sign, no leading zeros but "0"). */
static bool number(const char *s, size_t len, unsigned lo, unsigned hi, unsigned *out)
{
    if (len == 0 || len > 3 || (len > 1 && s[0] == '0'))
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

struct token { const char *s; size_t len; };

static bool is_word(const struct token *t, const char *w)
{
    return strlen(w) == t->len && memcmp(t->s, w, t->len) == 0;
}

/* Shows a token in a message: at most 32 characters, anything unprintable as '?'. */
static const char *show(const struct token *t, char buf[36])
{
    size_t n = t->len < 32 ? t->len : 32, i;
    for (i = 0; i < n; i++)
        buf[i] = t->s[i] >= 0x20 && t->s[i] < 0x7f ? t->s[i] : '?';
    if (t->len > n)
        buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
    buf[i] = '\0';
    return buf;
}

static const struct { const char *word; cg_topo_path path; } groups[] = {
    {"switch", CG_TOPO_SINGLE},
    {"multiswitch", CG_TOPO_MULTIPLE},
    {"hostbridge", CG_TOPO_HOSTBRIDGE},
    {"socket", CG_TOPO_NODE},
};

static int parse_line(cg_topo *t, const struct token *tok, unsigned ntok, unsigned line,
                      char *err, size_t errlen)
{
    char sb[36];
    unsigned gpu[CG_TOPO_MAX_GPUS];
    if (is_word(&tok[0], "nvlink")) {
        if (ntok != 3 && ntok != 4)
            return bad(err, errlen, line, "nvlink takes two GPUs and an optional link count");
        unsigned a, b, links = 1;
        for (unsigned i = 1; i < 3; i++)
            if (!number(tok[i].s, tok[i].len, 0, CG_TOPO_MAX_GPUS - 1, i == 1 ? &a : &b))
                return bad(err, errlen, line, "'%s' is not a GPU index (0-%d)", show(&tok[i], sb),
                           CG_TOPO_MAX_GPUS - 1);
        if (ntok == 4 && !number(tok[3].s, tok[3].len, 1, CG_TOPO_MAX_LINKS, &links))
            return bad(err, errlen, line, "'%s' is not a link count (1-%d)", show(&tok[3], sb),
                       CG_TOPO_MAX_LINKS);
        if (a == b)
            return bad(err, errlen, line, "GPU %u cannot be NVLinked to itself", a);
        if (t->nvlinks[a][b])
            return bad(err, errlen, line, "GPUs %u and %u are already NVLinked", a, b);
        t->nvlinks[a][b] = t->nvlinks[b][a] = (uint8_t)links;
        if (cg_topo_links_of(t, a) > CG_TOPO_MAX_LINKS || cg_topo_links_of(t, b) > CG_TOPO_MAX_LINKS)
            return bad(err, errlen, line, "a GPU has more than %d NVLinks", CG_TOPO_MAX_LINKS);
        gpu[0] = a;
        gpu[1] = b;
        ntok = 3;
    } else {
        unsigned g = 0;
        while (g < sizeof groups / sizeof groups[0] && !is_word(&tok[0], groups[g].word))
            g++;
        if (g == sizeof groups / sizeof groups[0])
            return bad(err, errlen, line, "unknown statement '%s' (nvlink, switch, multiswitch, "
                       "hostbridge, socket)", show(&tok[0], sb));
        if (ntok < 3)
            return bad(err, errlen, line, "%s needs at least two GPUs", groups[g].word);
        for (unsigned i = 1; i < ntok; i++) {
            if (!number(tok[i].s, tok[i].len, 0, CG_TOPO_MAX_GPUS - 1, &gpu[i - 1]))
                return bad(err, errlen, line, "'%s' is not a GPU index (0-%d)", show(&tok[i], sb),
                           CG_TOPO_MAX_GPUS - 1);
            for (unsigned j = 0; j + 1 < i; j++)
                if (gpu[j] == gpu[i - 1])
                    return bad(err, errlen, line, "GPU %u is named twice", gpu[j]);
        }
        for (unsigned i = 0; i + 1 < ntok; i++)
            for (unsigned j = 0; j + 1 < ntok; j++)
                if (i != j && t->path[gpu[i]][gpu[j]] > groups[g].path)
                    t->path[gpu[i]][gpu[j]] = (uint8_t)groups[g].path;
    }
    for (unsigned i = 0; i + 1 < ntok; i++)
        if (gpu[i] + 1 > t->ngpus)
            t->ngpus = gpu[i] + 1;
    return 0;
}

int cg_topo_parse(const char *text, size_t len, cg_topo *out, char *err, size_t errlen)
{
    cg_topo *t = malloc(sizeof *t);
    if (!t) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(t, 0, sizeof *t);
    for (unsigned a = 0; a < CG_TOPO_MAX_GPUS; a++)
        for (unsigned b = 0; b < CG_TOPO_MAX_GPUS; b++)
            t->path[a][b] = a == b ? 0 : CG_TOPO_SYSTEM;
    if (len > CG_TOPO_MAX_BYTES) {
        free(t);
        return bad(err, errlen, 1, "the file is larger than %d bytes", CG_TOPO_MAX_BYTES);
    }
    size_t pos = 0;
    for (unsigned line = 1; pos < len; line++) {
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        struct token tok[MAX_TOKENS];
        unsigned ntok = 0;
        for (size_t i = pos; i < end;) {
            char c = text[i];
            if (c == '#')
                break;
            if (c == ' ' || c == '\t' || c == '\r') {
                i++;
                continue;
            }
            if (c == '\0' || (unsigned char)c < 0x20 || c == 0x7f) {
                free(t);
                return bad(err, errlen, line, "a control character (byte %d)", (unsigned char)c);
            }
            size_t s = i;
            while (i < end && text[i] != ' ' && text[i] != '\t' && text[i] != '\r' &&
                   text[i] != '#' && (unsigned char)text[i] >= 0x20 && text[i] != 0x7f)
                i++;
            if (ntok == MAX_TOKENS) {
                free(t);
                return bad(err, errlen, line, "more than %d words", MAX_TOKENS);
            }
            tok[ntok++] = (struct token){text + s, i - s};
        }
        if (ntok && parse_line(t, tok, ntok, line, err, errlen) != 0) {
            free(t);
            return -1;
        }
        pos = end + 1;
    }
    memcpy(out, t, sizeof *t);
    free(t);
    return 0;
}

int cg_topo_load(const char *path, cg_topo *out, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > CG_TOPO_MAX_BYTES) {
        snprintf(err, errlen, "%s: %s", path, !S_ISREG(st.st_mode) ? "not a regular file"
                                                                  : "larger than 64 KiB");
        close(fd);
        return -1;
    }
    char *text = malloc(CG_TOPO_MAX_BYTES + 1);
    size_t n = 0;
    ssize_t r = 0;
    while (text && n <= CG_TOPO_MAX_BYTES &&
           ((r = read(fd, text + n, CG_TOPO_MAX_BYTES + 1 - n)) > 0 || (r < 0 && errno == EINTR)))
        n += r > 0 ? (size_t)r : 0;
    int saved = errno;
    close(fd);
    if (!text || r < 0 || n > CG_TOPO_MAX_BYTES) {
        snprintf(err, errlen, "%s: %s", path, !text ? "out of memory" : r < 0 ? strerror(saved)
                                                                      : "larger than 64 KiB");
        free(text);
        return -1;
    }
    char why[256];
    int rc = cg_topo_parse(text, n, out, why, sizeof why);
    free(text);
    if (rc != 0) {
        /* "line N: ..." becomes "PATH:N: ...", the way compilers name a place in a file. */
        if (strncmp(why, "line ", 5) == 0)
            snprintf(err, errlen, "%s:%s", path, why + 5);
        else
            snprintf(err, errlen, "%s: %s", path, why);
    }
    return rc;
}

unsigned cg_topo_links_of(const cg_topo *t, unsigned a)
{
    unsigned n = 0;
    for (unsigned b = 0; a < CG_TOPO_MAX_GPUS && b < CG_TOPO_MAX_GPUS; b++)
        n += t->nvlinks[a][b];
    return n;
}
