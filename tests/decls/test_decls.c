/* test_decls.c — compares our CUDA declarations with the toolkit's, fact by fact. (Function
 * signatures were already compared when facts_toolkit.c compiled.) */
#include "facts.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
    unsigned bad = 0;
    if (toolkit_fact_count != our_fact_count) {
        fprintf(stderr, "fact tables differ in length\n");
        return 1;
    }
    for (unsigned i = 0; i < our_fact_count; i++) {
        if (strcmp(toolkit_facts[i].name, our_facts[i].name) != 0 ||
            toolkit_facts[i].value != our_facts[i].value) {
            fprintf(stderr, "MISMATCH %s: ours %lld, toolkit %lld\n", our_facts[i].name,
                    our_facts[i].value, toolkit_facts[i].value);
            bad++;
        }
    }
    printf("%u facts compared, %u mismatches\n", our_fact_count, bad);
    return bad ? 1 : 0;
}
