/* profile_key.c — the profile key's rule (profile_key.h). */
#include "profile_key.h"

#include <string.h>

bool cg_profile_key_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > CG_PROFILE_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\'' || s[i] == '\\')
            return false;
    return true;
}
