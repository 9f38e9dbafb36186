/*
 * notify.c: one datagram to the service manager's socket (notify.h).
 *
 * The address is $NOTIFY_SOCKET as systemd gives it: a filesystem path, or with a leading '@' a
 * name in Linux's abstract namespace (the '@' sent as a NUL byte, the length exact). The socket is
 * opened for the one message and closed, so no descriptor outlives the call (nor leaks into a
 * child); the send does not block on a manager that does not read.
 */
#include "notify/notify.h"

#include "base/error.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int notify_send(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct sockaddr_un address;
	size_t name_len, state_len = strlen(state);
	if (!name || !name[0])
		return 0;
	if (state_len > NOTIFY_MESSAGE_MAX)
		return DIRAUTH_ERR_BOUNDS;
	name_len = strlen(name);
	if ((name[0] != '/' && name[0] != '@') || name_len >= sizeof address.sun_path)
		return DIRAUTH_ERR_CONFIG;
	memset(&address, 0, sizeof address);
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, name, name_len);
	if (name[0] == '@')
		address.sun_path[0] = '\0'; /* the abstract namespace */
	socklen_t length =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + name_len + (name[0] == '/' ? 1 : 0));
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return DIRAUTH_ERR_IO;
	ssize_t sent;
	do
		sent = sendto(fd, state, state_len, MSG_NOSIGNAL, (const struct sockaddr *)&address, length);
	while (sent < 0 && errno == EINTR);
	close(fd);
	return sent == (ssize_t)state_len ? 0 : DIRAUTH_ERR_IO;
}

int notify_reloading(const char *status)
{
	struct timespec now;
	char state[NOTIFY_MESSAGE_MAX + 1];
	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return DIRAUTH_ERR_IO;
	unsigned long long usec =
	    (unsigned long long)now.tv_sec * 1000000ull + (unsigned long long)now.tv_nsec / 1000ull;
	int n = snprintf(state, sizeof state, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=%s", usec, status);
	if (n < 0 || (size_t)n >= sizeof state)
		return DIRAUTH_ERR_BOUNDS;
	return notify_send(state);
}
