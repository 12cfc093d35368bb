/* dlsym.c — our dlsym: the way into the driver that preloading alone does not cover.
 *
 * The CUDA runtime (also the statically linked cudart nvcc uses by default) dlopens libcuda.so.1
 * and looks entry points up on that handle; a lookup on a handle never sees preloaded symbols.
 * So we answer every dlsym: the real lookup decides whether the name exists there, and for a
 * hooked name that exists we hand out our wrapper instead. Everything else is the real answer.
 *
 * RTLD_NEXT is relative to the *caller*, which glibc takes from dlsym's return address. So for
 * RTLD_NEXT the entry point jumps (not calls) into the real dlsym: the caller's return address
 * is still on the stack and libc answers exactly as if we were not there. This also keeps us out
 * of the way of sanitizer runtimes, which resolve their interceptors with dlsym(RTLD_NEXT, ...)
 * before they are initialised (walking link maps ourselves crashes there). The price: a
 * RTLD_NEXT lookup of a hooked name from an object loaded after us gets the driver's function.
 * The jump needs a few lines of assembly (x86-64); elsewhere RTLD_NEXT is passed on from here,
 * which resolves relative to this library. */
#include "hooks.h"

#include <dlfcn.h>
#include <stddef.h>

/* Every handle but RTLD_NEXT. */
CG_UNINSTRUMENTED void *cg_dlsym_handle(void *handle, const char *name);
CG_UNINSTRUMENTED void *cg_dlsym_handle(void *handle, const char *name)
{
    void *p = cg_real_dlsym(handle, name);
    if (p) {
        int id = cg_hook_find(name);
        if (id >= 0)
            return cg_hooks[id].wrapper;
    }
    return p;
}

/* The stub's slow path when libc's dlsym is not yet known: find it, then the stub jumps. */
CG_UNINSTRUMENTED void *cg_dlsym_resolve(void);
CG_UNINSTRUMENTED void *cg_dlsym_resolve(void)
{
    (void)cg_real_dlsym(NULL, NULL) ; /* resolves cg_real_dlsym_ptr; the lookup itself fails */
    return atomic_load_explicit(&cg_real_dlsym_ptr, memory_order_acquire);
}

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
#ifdef __CET__
        "    endbr64\n"
#endif
        "    cmpq $-1, %rdi\n"               /* RTLD_NEXT */
        "    je 1f\n"
        "    jmp cg_dlsym_handle\n"
        "1:  movq cg_real_dlsym_ptr(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jz 2f\n"
        "    jmp *%rax\n"                     /* tail call: libc sees our caller */
        "2:  pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"                 /* keep the stack 16-byte aligned for the call */
        "    call cg_dlsym_resolve\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz 3f\n"
        "    jmp *%rax\n"
        "3:  xorl %eax, %eax\n"
        "    ret\n"
        ".size dlsym, .-dlsym\n");
#else
CG_EXPORT CG_UNINSTRUMENTED void *dlsym(void *restrict handle, const char *restrict name)
{
    return cg_dlsym_handle(handle, name);
}
#endif
