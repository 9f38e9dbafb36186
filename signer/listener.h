/*
 * listener.h: the signer's UNIX socket. Creates the socket file mode 0600 (refusing to replace
 * anything but a stale socket), accepts connections one at a time, checks each peer with
 * SO_PEERCRED against the allowed uid and drops others (logging the uid, never serving them),
 * reads frames with a per-read timeout, and hands each request to the service.
 *
 * Requests are served strictly one after another: the ledger's check-then-sign is never
 * concurrent with another.
 */
#ifndef DIRAUTH_SIGNER_LISTENER_H
#define DIRAUTH_SIGNER_LISTENER_H

#include "service.h"

#include <sys/types.h>

struct signer_listener;

/* Binds socket_path and starts serving in a new thread. Returns 0, DIRAUTH_ERR_EXISTS (a
 * non-socket file is in the way), DIRAUTH_ERR_IO. */
int signer_listener_start(struct signer_service *service, const char *socket_path, uid_t allowed_uid,
                          struct signer_listener **out);

/* Serves in the calling thread until signer_listener_stop is called from another thread or a
 * signal handler sets *stop. For the program's main. */
int signer_listener_run(struct signer_service *service, const char *socket_path, uid_t allowed_uid,
                        volatile int *stop);

/* Stops, joins and removes the socket file. Accepts NULL. */
void signer_listener_stop(struct signer_listener *listener);

#endif
