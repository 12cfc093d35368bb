/* cdi_hook.h — the createRuntime hook of convgpu's CDI spec (see cdi_hook.c). */
#ifndef CONVGPU_OCI_CDI_HOOK_H
#define CONVGPU_OCI_CDI_HOOK_H

/* argv: "hook", "cdi-create-runtime", "--device", INDEX; the OCI state on stdin. Returns the
 * exit status: non-zero fails the container's create with nothing registered. */
int oci_cdi_hook_main(int argc, char **argv);

#endif
