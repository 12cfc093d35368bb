/* facts_toolkit.c — the ABI facts as the CUDA toolkit's cuda.h states them, and the
 * compile-time half of the check: our prototypes are redeclared here against the toolkit's
 * own declarations (internal mode declares every versioned and per-thread symbol), so any
 * signature that differs is a conflicting-types error, and each PFN type must match. */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>

#include <stddef.h>

#define CONVGPU_CUDA_DECLS_ONLY
#define CG_CU_DECL(name, params)  \
    CUresult name params;         \
    typedef CUresult(*PFN_##name) params; \
    _Static_assert(__builtin_types_compatible_p(PFN_##name, __typeof__(&name)), #name)
#include "cuda_types.h"

#include "facts.h"

#define SIZE(t) FACT_SIZE(t)
#define ALIGN(t) FACT_ALIGN(t)
#define OFFSET(t, f) FACT_OFFSET(t, f)
#define VALUE(c) FACT_VALUE(c)
const decl_fact toolkit_facts[] = {
#include "facts.def"
};
const unsigned toolkit_fact_count = sizeof toolkit_facts / sizeof toolkit_facts[0];
