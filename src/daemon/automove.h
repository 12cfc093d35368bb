/* automove.h — the scheduler's own moves to make room (--auto-move N, off by default; issue 38
 * item 2, docs/SCHEDULING.md "Moving a container to make room"). A container waits for memory
 * its GPU does not have (its allocations are asked on its own GPU); moving one running container off that GPU
 * to another of the same model would make room. cg_defrag_pick_on (src/core/defrag.c) picks
 * the move of the fewest bytes; pause.c carries it out as `convgpu move` does (reserved on the
 * target first, checkpointed, restored there).
 *
 * Invariant: at most N moves start in any 60 s (the operator's bound); one at a time (none
 * starts while another container is pausing, moving or resuming); only a running container
 * that is on one GPU, not exclusive, not swapped or held, moves. */
#ifndef CONVGPUD_AUTOMOVE_H
#define CONVGPUD_AUTOMOVE_H

struct daemon;

#define AUTOMOVE_PERIOD_MS 500
#define AUTOMOVE_WINDOW_NS 60000000000ull

/* From the loop: looks for a move when due; the milliseconds until the next look, -1 when off. */
int automove_tick(struct daemon *d);

#endif
