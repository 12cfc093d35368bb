/* fork.h — keeping the interposer's state right across fork(). */
#ifndef CONVGPU_IP_FORK_H
#define CONVGPU_IP_FORK_H

/* Registers the pthread_atfork handlers (once, when enforcement is on). 0 or -1. */
int cg_fork_setup(void);

#endif
