/* policy.c — the resume-policy table and the names of both policy kinds. Adding a resume policy
 * is one file defining its `struct cg_resume_ops` plus one line here (and its enum value). */
#include <string.h>

#include "internal.h"

extern const struct cg_resume_ops cg_resume_fifo, cg_resume_best_fit, cg_resume_recent,
    cg_resume_random, cg_resume_aging_fit;

const struct cg_resume_ops *const cg_resume_table[CG_RESUME__COUNT] = {
    [CG_RESUME_FIFO] = &cg_resume_fifo,
    [CG_RESUME_BEST_FIT] = &cg_resume_best_fit,
    [CG_RESUME_RECENT] = &cg_resume_recent,
    [CG_RESUME_RANDOM] = &cg_resume_random,
    [CG_RESUME_AGING_FIT] = &cg_resume_aging_fit,
};

const char *cg_resume_policy_name(cg_resume_policy p)
{
    return (unsigned)p < CG_RESUME__COUNT ? cg_resume_table[p]->name : "?";
}

bool cg_resume_policy_parse(const char *name, cg_resume_policy *out)
{
    for (unsigned i = 0; name && i < CG_RESUME__COUNT; i++)
        if (strcmp(name, cg_resume_table[i]->name) == 0) {
            *out = (cg_resume_policy)i;
            return true;
        }
    return false;
}

const char *cg_placement_policy_name(cg_placement_policy p)
{
    return (unsigned)p < CG_PLACE__COUNT ? cg_place_table[p]->name : "?";
}

bool cg_placement_policy_parse(const char *name, cg_placement_policy *out)
{
    for (unsigned i = 0; name && i < CG_PLACE__COUNT; i++)
        if (strcmp(name, cg_place_table[i]->name) == 0) {
            *out = (cg_placement_policy)i;
            return true;
        }
    return false;
}
