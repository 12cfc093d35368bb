/* fuzz_ocihook.c — libFuzzer harness for the OCI hooks' handling of the container state JSON
 * that runc writes on their stdin (src/integrations/oci/hook.c). The parsing is inline in
 * oci_hook_main, so the harness calls that public function with stdin replaced by the input
 * (fmemopen); the first byte picks the hook (create-runtime or poststop). The daemon is
 * unreachable (the runtime directory does not exist), so every path that asks it gets a
 * connection error, and poststop's file removal under <runtime-dir>/oci/<id>/ cannot touch
 * anything: a missing first component ends every path lookup, ".." included. The exit status
 * must be 0, 1 or 2. stderr (the hook's error messages) is silenced during a call; sanitizer
 * reports are written to fd 2 directly and still show. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("CONVGPU_RUNTIME_DIR", "/nonexistent-convgpu-fuzz/run", 1);
    devnull = fopen("/dev/null", "w");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    FILE *in = fmemopen((void *)(data + 1), size - 1 ? size - 1 : 1, "r");
    if (!in)
        return 0;
    if (size == 1)
        fgetc(in); /* an empty stdin: fmemopen cannot open a zero-size buffer */
    char *argv[] = {(char *)"hook", (char *)(data[0] & 1 ? "poststop" : "create-runtime"), NULL};
    FILE *saved_in = stdin, *saved_err = stderr;
    stdin = in;
    if (devnull)
        stderr = devnull;
    int rc = oci_hook_main(2, argv);
    stdin = saved_in;
    stderr = saved_err;
    fclose(in);
    if (rc < 0 || rc > 2)
        abort();
    return 0;
}
