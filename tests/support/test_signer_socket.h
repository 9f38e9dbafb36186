/*
 * test_signer_socket.h: the client's side of a real dirauth-signer's UNIX socket, by hand, for
 * test_signer and bench_signer_crash, which start the signer binary and speak its protocol
 * (signer_protocol/signer_protocol.h) frame by frame: connecting, reading whole frames, and the example
 * snapshot header they ask it to sign.
 *
 * Nothing here aborts: a refused connection or a closed socket is what these programs wait for
 * or provoke, so each function reports it and the caller decides.
 */
#ifndef DIRAUTH_TEST_SIGNER_SOCKET_H
#define DIRAUTH_TEST_SIGNER_SOCKET_H

#include "base/buffer.h"

#include <stddef.h>
#include <stdint.h>

/* A new connection to the socket at path: the descriptor (close-on-exec), or -1 when it cannot
 * be made (no socket there yet, nobody accepting). */
int test_signer_connect(const char *path);

/* Reads exactly len bytes from fd into data, across short reads and EINTR. Returns 0, or -1 when
 * the connection ends or fails first. */
int test_signer_read_exact(int fd, uint8_t *data, size_t len);

/* Replaces out with the text of an example snapshot header of namespace "mix" under origin for
 * epoch, its times those of a schedule of genesis and length seconds (validity 3 epochs);
 * variant sets its record count, records root and body size, so that two variants of one epoch
 * are two different headers. Returns 0 or the error of snapshot_header_encode. */
int test_signer_header_text(const char *origin, uint64_t genesis, uint64_t length, uint64_t epoch,
                            unsigned variant, struct buffer *out);

#endif
