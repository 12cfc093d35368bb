/* fdspare.h — the daemon's spare descriptor: what lets it refuse a connection when it is out of
 * descriptors. A listening socket whose pending connection cannot be accepted (EMFILE) stays
 * readable, and a level-triggered loop would spin on it; giving the spare up lets the connection
 * be accepted and closed at once, so the caller sees a refusal and nobody spins. */
#ifndef CONVGPUD_FDSPARE_H
#define CONVGPUD_FDSPARE_H

struct daemon;

/* Opens the spare (at start). */
void fdspare_open(struct daemon *d);
/* Accepts one pending connection on listen_fd and closes it, using the spare. */
void fdspare_shed(struct daemon *d, int listen_fd);

#endif
