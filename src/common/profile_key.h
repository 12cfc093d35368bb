/* profile_key.h — the one rule for a profile key (an image reference or a command's basename),
 * which the daemon enforces where a key enters and the OCI shim checks before it sends one. */
#ifndef CONVGPU_PROFILE_KEY_H
#define CONVGPU_PROFILE_KEY_H

#include <stdbool.h>

#define CG_PROFILE_KEY_MAX 255

/* 1-255 printable ASCII characters, none of them a space, a quote or a backslash; NULL: false. */
bool cg_profile_key_valid(const char *s);

#endif
