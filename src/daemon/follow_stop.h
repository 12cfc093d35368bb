/* follow_stop.h — a container whose processes are all stopped (SIGSTOP: Slurm's `scontrol
 * suspend`) is paused, and resumed when they run again (SIGCONT: `scontrol resume`), for the
 * containers whose id begins with --follow-stop PREFIX (off by default; docs/SLURM.md,
 * "Suspend and resume").
 *
 * Why the daemon watches and not the interposer: a stopped process runs nothing, and catching
 * SIGTSTP in the application would replace its own handler. The daemon reads /proc/PID/stat of
 * the matching containers' processes every FOLLOW_STOP_PERIOD_MS and asks pause.c for a pause
 * when all of them are in state T; the checkpoint helper runs only the driver's restore thread
 * of a stopped process for the request (convgpu-checkpoint.c). When they run again the gate
 * (CG_GATE_PAUSED) and the driver's checkpoint lock still hold their GPU calls: the resume goes
 * through the safe offer (memory reserved first), restores, unlocks, then opens the gate.
 *
 * Invariant: only a container seen all-stopped (pause.stop_seen) is resumed on seeing its
 * processes run; an operator's `convgpu pause` of a running container is never undone here.
 * stop_seen of a paused container is in state.db (pause_stop) with its phase: a daemon
 * restarted while the processes were stopped, or after they were continued, resumes it when it
 * sees them run, as the one before would have. */
#ifndef CONVGPUD_FOLLOW_STOP_H
#define CONVGPUD_FOLLOW_STOP_H

struct daemon;

#define FOLLOW_STOP_PERIOD_MS 200

/* From the loop: polls when due; the milliseconds until the next poll, -1 when off. */
int follow_stop_tick(struct daemon *d);

#endif
