/* name_chars.h — the one rule for names an operator or a tenant gives things (containers,
 * tenants): letters, digits, '_', '-', '.', not starting with '.' or '-' (no hidden files, no
 * option-like words), 1 to MAX characters. The daemon enforces it where a name enters; clients
 * check it first so that a bad name is refused before anything is sent. */
#ifndef CONVGPU_NAME_CHARS_H
#define CONVGPU_NAME_CHARS_H

#include <stdbool.h>
#include <stddef.h>

bool cg_name_chars_ok(const char *s, size_t max);

#endif
