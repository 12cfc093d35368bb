/* names.c — the naming rules (names.h). */
#include "names.h"

#include <string.h>

#include "name_chars.h"

bool name_valid(const char *s)
{
    return cg_name_chars_ok(s, 64);
}

bool name_valid_tenant(const char *s)
{
    return s && strlen(s) <= 32 && name_valid(s);
}
