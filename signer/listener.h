/*
 * listener.h: the signer's UNIX socket. Creates the socket file mode 0600 and gives it to the
 * allowed uid (dirauthd's), so that only that uid and root can connect; checks each peer with
 * SO_PEERCRED against the allowed uid and drops others (logging the uid, never serving them,
 * root included); serves the allowed peers' connections at the same time, each in its own
 * thread, up to a bound; reads frames with a deadline and hands each request to the service.
 *
 * A lock file next to the socket, "<socket path>.lock", is held (flock) while the listener
 * runs: it is how a second signer on the same path is refused and how a socket left by a
 * signer that was killed is known to be stale.
 *
 * No connection can hold up another: a frame must arrive whole within the frame timeout of its
 * first byte, a connection idle for the idle timeout between requests is closed, and each is
 * served by its own thread. At most max_connections are served at once; a connection beyond
 * that waits, not accepted, in the socket's backlog until one of them closes (at the latest
 * when it reaches one of the timeouts). The service is thread-safe (service.h).
 */
#ifndef DIRAUTH_SIGNER_LISTENER_H
#define DIRAUTH_SIGNER_LISTENER_H

#include "signer/service.h"

#include <sys/types.h>

#define SIGNER_LISTENER_DEFAULT_CONNECTIONS 16
#define SIGNER_LISTENER_MAX_CONNECTIONS     1024
#define SIGNER_LISTENER_TIMEOUT_MS          5000 /* the default idle and frame timeouts */

struct signer_listener;

struct signer_listener_options {
	size_t max_connections; /* served at once; 0: SIGNER_LISTENER_DEFAULT_CONNECTIONS; at most
	                           SIGNER_LISTENER_MAX_CONNECTIONS */
	int idle_timeout_ms;    /* a connection without a request for this long is closed; 0: the
	                           default */
	int frame_timeout_ms;   /* a frame must arrive whole this long after its first byte, and each
	                           answer be written within it; 0: the default */
};

/* Takes the lock "<socket_path>.lock" (created 0600 if missing, left in place at stop), removes
 * a stale socket file at socket_path, binds a new socket there mode 0600, chowns it to
 * allowed_uid when that is not the effective uid (group unchanged), and starts accepting in a
 * new thread, with options (NULL: the defaults); *out is freed by signer_listener_stop. Returns
 * 0; DIRAUTH_ERR_CONFIG when max_connections is above the bound; DIRAUTH_ERR_EXISTS when another
 * process holds the lock ("another dirauth-signer is running"), a file other than a socket is at
 * socket_path, or something other than a regular file is at the lock's path;
 * DIRAUTH_ERR_PERMISSION when the socket cannot be given to allowed_uid (no CAP_CHOWN; the
 * socket file is removed again); DIRAUTH_ERR_IO (a path that is empty or too long for a socket
 * address, or a system call failing); DIRAUTH_ERR_NOMEM. Each refusal is also explained in one
 * line on standard error. */
int signer_listener_start(struct signer_service *service, const char *socket_path, uid_t allowed_uid,
                          const struct signer_listener_options *options, struct signer_listener **out);

/* Stops accepting, stops every connection (a request being handled completes first), joins
 * every thread, removes the socket file, then releases the lock. Accepts NULL. */
void signer_listener_stop(struct signer_listener *listener);

#endif
