/* settings.h — every daemon setting in one table (settings.c): its name (the flag `--NAME` and
 * the configuration file's key `NAME`), what it takes, its default, and its help. The option
 * parser, the configuration file, `--help` and the defaults all come from that table, so adding
 * a setting is one row (and its field in struct daemon_options); the man pages are checked
 * against `--help` (package.manpages) and OPERATIONS.md's table against it (docs.blocks). */
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

#endif
