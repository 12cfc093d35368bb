/* facts.h — one ABI fact (size, alignment, offset or value) by name, as each side sees it. */
#ifndef CONVGPU_DECLS_FACTS_H
#define CONVGPU_DECLS_FACTS_H

typedef struct {
    const char *name;
    long long value;
} decl_fact;

extern const decl_fact toolkit_facts[];
extern const decl_fact our_facts[];
extern const unsigned toolkit_fact_count, our_fact_count;

#define FACT_SIZE(t)      {"sizeof(" #t ")", (long long)sizeof(t)},
#define FACT_ALIGN(t)     {"_Alignof(" #t ")", (long long)_Alignof(t)},
#define FACT_OFFSET(t, f) {"offsetof(" #t ", " #f ")", (long long)offsetof(t, f)},
#define FACT_VALUE(c)     {#c, (long long)(c)},

#endif
