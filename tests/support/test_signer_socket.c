/*
 * test_signer_socket.c: a hand-driven client of dirauth-signer's socket (test_signer_socket.h).
 */
#include "test_signer_socket.h"

#include "schema/snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int test_signer_connect(const char *path)
{
	struct sockaddr_un address;
	if (strlen(path) >= sizeof(address.sun_path))
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&address, 0, sizeof(address));
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int test_signer_read_exact(int fd, uint8_t *data, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t got = recv(fd, data + done, len - done, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		done += (size_t)got;
	}
	return 0;
}

int test_signer_header_text(const char *origin, uint64_t genesis, uint64_t length, uint64_t epoch,
                            unsigned variant, struct buffer *out)
{
	struct snapshot_header h;
	memset(&h, 0, sizeof(h));
	snprintf(h.namespace_name, sizeof(h.namespace_name), "mix");
	snprintf(h.origin, sizeof(h.origin), "%s", origin);
	h.epoch = epoch;
	h.valid_after = genesis + epoch * length;
	h.fresh_until = h.valid_after + length;
	h.valid_until = h.valid_after + 3 * length;
	h.record_count = variant;
	memset(h.records_root, (int)variant, sizeof(h.records_root));
	h.body_size = 1000 + variant;
	memset(h.body_sha256, 0x66, sizeof(h.body_sha256));
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	buffer_reset(out);
	return snapshot_header_encode(&h, out);
}
