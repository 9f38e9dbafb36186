/*
 * run_directory.c: the files of an authority's run directory (run_directory.h).
 *
 * The clock is written through a rename because dirauthd and the signer read it on every tick:
 * a write in place could be read half done, as a time far in the past.
 */
#include "tests/harness/run_directory.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int run_directory_write_clock(const char *clock_path, uint64_t now)
{
	char text[32], temp[PATH_MAX + 8];
	int len = snprintf(text, sizeof text, "%llu\n", (unsigned long long)now);
	if (snprintf(temp, sizeof temp, "%s.tmp", clock_path) >= (int)sizeof temp) {
		errno = ENAMETOOLONG;
		return DIRAUTH_ERR_IO;
	}
	int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return DIRAUTH_ERR_IO;
	int written = write(fd, text, (size_t)len) == len;
	int saved = errno;
	if (close(fd) != 0 && written) {
		written = 0;
		saved = errno;
	}
	if (!written || rename(temp, clock_path) != 0) {
		if (written)
			saved = errno;
		unlink(temp);
		errno = saved;
		return DIRAUTH_ERR_IO;
	}
	return 0;
}

int run_directory_signer_listening(const char *socket_path)
{
	struct sockaddr_un address;
	size_t len = strlen(socket_path);
	if (len >= sizeof address.sun_path)
		return 0;
	memset(&address, 0, sizeof address);
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, socket_path, len + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int connected = connect(fd, (struct sockaddr *)&address, sizeof address) == 0;
	close(fd);
	return connected;
}

int run_directory_signer_config(const struct run_directory_signer *signer, struct buffer *out)
{
	int rc =
	    buffer_appendf(out,
	                   "authority: %s\n"
	                   "socket: signer.sock\n"
	                   "allowed_uid: %u\n"
	                   "state_dir: signer-state\n"
	                   "signing_key: keys/%s\n"
	                   "certificates: [keys/%s]\n",
	                   signer->authority, (unsigned)getuid(), signer->signing_key, signer->certificate);
	if (rc == 0 && signer->log_keys)
		rc = buffer_append_string(out, "log_key: keys/log.key\n"
		                               "cosignature_key: keys/cosignature.key\n");
	if (rc == 0)
		rc = buffer_append_string(out, "audit_log: signer-audit.log\n");
	if (rc == 0 && !signer->system_clock)
		rc = buffer_append_string(out, "clock: { source: file, path: clock }\n");
	if (rc == 0)
		rc = buffer_append_string(out, "namespaces:\n");
	return rc == 0 ? 0 : DIRAUTH_ERR_NOMEM;
}
