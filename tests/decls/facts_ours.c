/* facts_ours.c — the same ABI facts as src/common/cuda_types.h states them. */
#include "cuda_types.h"

#include <stddef.h>

#include "facts.h"

#define SIZE(t) FACT_SIZE(t)
#define ALIGN(t) FACT_ALIGN(t)
#define OFFSET(t, f) FACT_OFFSET(t, f)
#define VALUE(c) FACT_VALUE(c)
const decl_fact our_facts[] = {
#include "facts.def"
};
const unsigned our_fact_count = sizeof our_facts / sizeof our_facts[0];
