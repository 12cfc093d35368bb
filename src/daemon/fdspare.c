/* fdspare.c — shedding a connection when out of descriptors (fdspare.h). */
#include "fdspare.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"

void fdspare_open(struct daemon *d)
{
    if (d->spare_fd < 0)
        d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void fdspare_shed(struct daemon *d, int listen_fd)
{
    if (d->spare_fd >= 0) {
        close(d->spare_fd);
        d->spare_fd = -1;
    }
    int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0)
        close(fd);
    fdspare_open(d);
}
