/* names.h — which strings may name a container or a tenant. The model checks them where a name
 * enters (a create, a restore), the API's parsers where a request carries one: one rule for
 * both, in a file below both. */
#ifndef CONVGPUD_NAMES_H
#define CONVGPUD_NAMES_H

#include <stdbool.h>

/* A container id or name: 1-64 of [A-Za-z0-9_.-], not starting with '.' or '-'. */
bool name_valid(const char *s);
/* A tenant name: the same, at most 32 characters. */
bool name_valid_tenant(const char *s);

#endif
