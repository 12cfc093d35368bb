/* names.c — the naming rules (names.h). */
#include "names.h"

#include <string.h>

bool name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64 || s[0] == '.' || s[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

bool name_valid_tenant(const char *s)
{
    return s && strlen(s) <= 32 && name_valid(s);
}
