/* hook.h — the shim's OCI hooks (createRuntime, poststop). */
#ifndef CONVGPU_OCI_HOOK_H
#define CONVGPU_OCI_HOOK_H

/* argv[0] is "hook", argv[1] the hook's name. Returns the exit status. */
int oci_hook_main(int argc, char **argv);

#endif
