/*
 * listener.h: the signer's UNIX socket. Creates the socket file mode 0600 and gives it to the
 * allowed uid (dirauthd's), so that only that uid and root can connect; accepts connections one
 * at a time, checks each peer with SO_PEERCRED against the allowed uid and drops others
 * (logging the uid, never serving them, root included), reads frames with a per-read timeout,
 * and hands each request to the service.
 *
 * A lock file next to the socket, "<socket path>.lock", is held (flock) while the listener
 * runs: it is how a second signer on the same path is refused and how a socket left by a
 * signer that was killed is known to be stale.
 *
 * Requests are served strictly one after another: the ledger's check-then-sign is never
 * concurrent with another.
 */
#ifndef DIRAUTH_SIGNER_LISTENER_H
#define DIRAUTH_SIGNER_LISTENER_H

#include "signer/service.h"

#include <sys/types.h>

struct signer_listener;

/* Takes the lock "<socket_path>.lock" (created 0600 if missing, left in place at stop), removes
 * a stale socket file at socket_path, binds a new socket there mode 0600, chowns it to
 * allowed_uid when that is not the effective uid (group unchanged), and starts serving in a new
 * thread; *out is freed by signer_listener_stop. Returns 0; DIRAUTH_ERR_EXISTS when another
 * process holds the lock ("another dirauth-signer is running"), a file other than a socket is at
 * socket_path, or something other than a regular file is at the lock's path;
 * DIRAUTH_ERR_PERMISSION when the socket cannot be given to allowed_uid (no CAP_CHOWN; the
 * socket file is removed again); DIRAUTH_ERR_IO (a path that is empty or too long for a socket
 * address, or a system call failing); DIRAUTH_ERR_NOMEM. Each refusal is also explained in one
 * line on standard error. */
int signer_listener_start(struct signer_service *service, const char *socket_path, uid_t allowed_uid,
                          struct signer_listener **out);

/* Stops, joins, removes the socket file, then releases the lock. Accepts NULL. */
void signer_listener_stop(struct signer_listener *listener);

#endif
