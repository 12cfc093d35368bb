/* settings.h — every daemon setting in one table (rows in settings.def, the table in
 * settings.c): its name (the flag `--NAME` and the configuration file's key `NAME`), what it
 * takes, its field, its default, its help and its pages' paragraph. The option parser, the
 * configuration file, `--help`, the defaults, struct daemon_options' fields (daemon.h) and the
 * pages that describe the settings (convgpud.8, convgpud.conf.5, OPERATIONS.md: settings_doc)
 * all come from those rows, so adding a setting is one row; docs.settings checks that the
 * committed pages are what the table prints. */
#ifndef CONVGPUD_SETTINGS_H
#define CONVGPUD_SETTINGS_H

#include <stddef.h>
#include <stdio.h>

struct daemon_options;

/* Sets every setting to its default (the defaults go through the same parsers as a user's
 * values, so a default is always a valid value). */
void settings_defaults(struct daemon_options *o);
/* Applies one setting by name; 0, or -1 with err ("NAME takes ..., not 'VALUE'"). Its signature
 * is config_parse's callback (ctx: struct daemon_options *). */
int settings_apply(void *ctx, const char *name, const char *value, char *err, size_t errlen);
/* The settings' lines of --help. */
void settings_usage(FILE *f);
/* How many settings there are, and the name of the i-th (for getopt's table). */
size_t settings_count(void);
const char *settings_name(size_t i);

/* The settings' documentation in FORMAT: man8 (convgpud.8's OPTIONS entries), conf5
 * (convgpud.conf.5's KEYS entries), conf (the example configuration file's keys, commented
 * out), markdown (OPERATIONS.md's table), synopsis (OPERATIONS.md's
 * synopsis block: BEFORE, every setting, AFTER: the program's own options), tsv (name,
 * argument, default, values; for tests). 0, or -1 for an unknown format. */
int settings_doc(FILE *f, const char *format, const char *before, const char *after);
/* Copies IN (named NAME in errors) to OUT with every generated region rewritten: after a line
 * holding "generated: convgpud --settings-doc FORMAT", FORMAT's text, up to the next line
 * holding "end generated". 0, or -1 with the reason on stderr (an unknown format, a region
 * without end, a file without regions). */
int settings_doc_file(FILE *in, FILE *out, const char *name, const char *before,
                      const char *after);

#endif
