/*
 * check_listener.c: the signer's UNIX socket (signer/listener.c), in process, with a raw
 * socket client speaking the frame protocol.
 *
 * The listener runs on a real service (fresh keys, a real certificate, a real ledger) in a
 * temporary directory. Checked: the socket file is mode 0600 and removed at stop; a regular
 * file in the way is refused and left alone; the lock file "<socket>.lock" decides whether a
 * signer runs: a second listener on the same path is refused while the lock is held (by this
 * process or another), a socket left by a signer killed with SIGKILL is stale and replaced,
 * and a lock path that is a symbolic link or a directory is refused; many requests are served
 * on one connection; a malformed frame and an oversized frame length get one DIRAUTH_ERR_SYNTAX
 * answer and the connection is closed, and the listener goes on serving. Connections are served
 * at once: a peer that says nothing and one that trickles a byte a second do not delay another
 * client's signature; with max_connections served the next connection waits unanswered and is
 * served when one closes; an idle connection is closed after the idle timeout; of eight
 * different headers asked for one (origin, epoch) at the same moment exactly one is signed.
 *
 * The uid checks need root, to setuid() in forked children (the tests say so and skip those
 * parts otherwise): a socket started for another allowed uid is given to that uid, mode 0600,
 * and a child of that uid is served while a child of a third uid cannot connect (EACCES) and
 * root, which can, is dropped by SO_PEERCRED without an answer; a peer of another uid is also
 * dropped when the socket's mode is opened up; a stale socket owned by another uid is replaced
 * even by a signer that cannot connect to it; a signer without CAP_CHOWN refuses to start
 * rather than leave a socket dirauthd cannot reach.
 */
#include "test_support.h"

#include "base/buffer.h"
#include "schema/certificate.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "signer/key.h"
#include "signer/listener.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "signer/service.h"
#include "signer_protocol/signer_protocol.h"
#include "schema/snapshot.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AUTHORITY "authority1.dirauth.example"
#define ORIGIN    "dirauth.example/mix"
#define NOW       1800000000ULL
#define LENGTH    60ULL
#define GENESIS   (NOW - 10 * LENGTH) /* epoch 10 begins at NOW */
#define NOBODY    65534
#define STRANGER  65533 /* neither the signer nor the allowed uid */

static char dir[256];
static char socket_path[300];
static char stderr_path[300];
static char lock_path[310];
static int saved_stderr = -1;
static _Atomic uint64_t now_value = NOW;
static struct signer_service *service;
static struct note_verifier signing_verifier;

static int test_now(void *context, uint64_t *now)
{
	*now = *(_Atomic uint64_t *)context;
	return 0;
}

static void setup(void)
{
	char key_dir[300], signing_path[320], identity_path[320], cert_path[320], ledger_path[320],
	    detail[512];
	struct signer_key *signing = NULL, *identity = NULL;
	struct certificate c;
	struct buffer text, note;
	struct note_signature signature;

	/* Short paths: a socket address holds 108 bytes. */
	snprintf(dir, sizeof(dir), "/tmp/check_listener.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(socket_path, sizeof(socket_path), "%s/s.sock", dir);
	snprintf(stderr_path, sizeof(stderr_path), "%s/stderr", dir);
	snprintf(lock_path, sizeof(lock_path), "%s.lock", socket_path);
	snprintf(key_dir, sizeof(key_dir), "%s/keys", dir);
	ck_assert_int_eq(mkdir(key_dir, 0700), 0);
	snprintf(signing_path, sizeof(signing_path), "%s/signing.key", key_dir);
	snprintf(identity_path, sizeof(identity_path), "%s/identity.key", key_dir);
	snprintf(cert_path, sizeof(cert_path), "%s/signing.cert", dir);
	snprintf(ledger_path, sizeof(ledger_path), "%s/ledger", dir);
	ck_assert_int_eq(signer_key_generate(AUTHORITY, &signing), 0);
	ck_assert_int_eq(signer_key_save(signing, signing_path), 0);
	ck_assert_int_eq(signer_key_generate(AUTHORITY, &identity), 0);
	signing_verifier = *signer_key_verifier(signing);

	memset(&c, 0, sizeof(c));
	snprintf(c.authority, sizeof(c.authority), "%s", AUTHORITY);
	c.identity = *signer_key_verifier(identity);
	c.signing_key = signing_verifier;
	c.valid_after = NOW - 3600;
	c.valid_until = NOW + 86400;
	buffer_init(&text);
	buffer_init(&note);
	ck_assert_int_eq(certificate_encode(&c, &text), 0);
	ck_assert_int_eq(signer_key_sign(identity, text.data, text.len, &signature), 0);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, &note), 0);
	test_write_file(cert_path, note.data, note.len, 0644);
	buffer_free(&text);
	buffer_free(&note);
	signer_key_free(signing);
	signer_key_free(identity);

	const char *certificates[] = {cert_path};
	struct signer_namespace mix = {
	    .name = "mix",
	    .origin = ORIGIN,
	    .schedule = {.genesis = GENESIS, .length = LENGTH, .validity_epochs = 3}};
	struct signer_service_options options = {
	    .authority = AUTHORITY,
	    .signing_key_path = signing_path,
	    .certificate_paths = certificates,
	    .certificate_count = 1,
	    .ledger_directory = ledger_path,
	    .namespaces = &mix,
	    .namespace_count = 1,
	    .audit = NULL,
	    .now = test_now,
	    .now_context = &now_value,
	};
	service = NULL;
	int rc = signer_service_open(&options, &service, detail, sizeof(detail));
	if (rc)
		ck_abort_msg("signer_service_open: %d %s", rc, detail);
}

static void teardown(void)
{
	signer_service_close(service);
	test_remove_tree(dir);
}

/* ---- a raw client ---- */

static int client_connect(void)
{
	struct sockaddr_un address;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	memset(&address, 0, sizeof(address));
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, socket_path, strlen(socket_path) + 1);
	if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0)
		ck_abort_msg("connect %s: %s", socket_path, strerror(errno));
	return fd;
}

static void client_write(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;
	while (len > 0) {
		ssize_t sent = send(fd, p, len, MSG_NOSIGNAL);
		ck_assert_int_gt(sent, 0);
		p += sent;
		len -= (size_t)sent;
	}
}

/* Reads exactly len bytes; returns 0, or -1 at end of file or error. */
static int client_read(int fd, uint8_t *data, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t got = recv(fd, data + done, len - done, 0);
		if (got <= 0)
			return -1;
		done += (size_t)got;
	}
	return 0;
}

/* Reads one response into *response (body kept in *body for its borrowed pointers). Returns 0
 * or -1 when the connection closed instead. */
static int client_response(int fd, struct signer_response *response, uint8_t **body)
{
	uint8_t prefix[4];
	size_t len;
	*body = NULL;
	if (client_read(fd, prefix, 4) != 0)
		return -1;
	ck_assert_int_eq(signer_frame_length(prefix, &len), 0);
	*body = malloc(len ? len : 1);
	ck_assert_int_eq(client_read(fd, *body, len), 0);
	ck_assert_int_eq(signer_response_decode(*body, len, response), 0);
	return 0;
}

static void client_request(int fd, uint8_t operation, const uint8_t *text, size_t text_len)
{
	struct signer_request request;
	struct buffer frame;
	memset(&request, 0, sizeof(request));
	request.operation = operation;
	request.text = text;
	request.text_len = text_len;
	buffer_init(&frame);
	ck_assert_int_eq(signer_request_encode(&request, &frame), 0);
	client_write(fd, frame.data, frame.len);
	buffer_free(&frame);
}

/* True when the peer closes without sending anything. */
static int client_sees_close(int fd)
{
	uint8_t byte;
	ssize_t got = recv(fd, &byte, 1, 0);
	return got == 0 || (got < 0 && errno == ECONNRESET);
}

static void receipt_text(uint64_t epoch, struct buffer *out)
{
	struct receipt r;
	memset(&r, 0, sizeof(r));
	snprintf(r.authority, sizeof(r.authority), "%s", AUTHORITY);
	snprintf(r.namespace_name, sizeof(r.namespace_name), "mix");
	memset(r.service_id, 0x11, sizeof(r.service_id));
	r.sequence = 1;
	memset(r.registration_digest, 0x22, sizeof(r.registration_digest));
	r.accepted_at = NOW;
	r.publish_by_epoch = epoch;
	buffer_reset(out);
	ck_assert_int_eq(receipt_encode(&r, out), 0);
}

/* A GET_KEYS round trip on a new connection succeeds. */
static void assert_serving(void)
{
	struct signer_response response;
	uint8_t *body;
	int fd = client_connect();
	client_request(fd, SIGNER_OP_GET_KEYS, NULL, 0);
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	ck_assert_int_eq(response.result, 0);
	ck_assert_ptr_nonnull(memchr(response.payload, '\n', response.payload_len));
	free(body);
	close(fd);
}

/* ---- tests ---- */

START_TEST(test_serves_many_requests_on_one_connection)
{
	struct signer_listener *listener = NULL;
	struct signer_response response;
	struct stat st;
	struct buffer text;
	uint8_t *body;

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener), 0);
	ck_assert_int_eq(lstat(socket_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0600);

	int fd = client_connect();
	buffer_init(&text);
	for (uint64_t i = 1; i <= 5; i++) {
		receipt_text(i, &text);
		client_request(fd, SIGNER_OP_SIGN_RECEIPT, text.data, text.len);
		ck_assert_int_eq(client_response(fd, &response, &body), 0);
		ck_assert_int_eq(response.result, 0);
		ck_assert(response.has_signature);
		ck_assert_str_eq(response.signature.name, AUTHORITY);
		ck_assert_uint_eq(response.signature.key_id, signing_verifier.key_id);
		free(body);
	}
	/* A refusal travels back with its detail, and the connection stays usable. */
	client_request(fd, SIGNER_OP_SIGN_VOTE, text.data, text.len);
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	ck_assert_int_eq(response.result, DIRAUTH_ERR_REFUSED);
	ck_assert(!response.has_signature);
	ck_assert(response.detail[0] != '\0');
	free(body);
	client_request(fd, SIGNER_OP_GET_KEYS, NULL, 0);
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	ck_assert_int_eq(response.result, 0);
	free(body);
	close(fd);
	buffer_free(&text);

	signer_listener_stop(listener);
	ck_assert_int_ne(lstat(socket_path, &st), 0);
	signer_listener_stop(NULL);
}
END_TEST

START_TEST(test_refuses_file_in_the_way)
{
	struct signer_listener *listener = NULL;
	size_t len;
	test_write_file(socket_path, "precious\n", 9, 0644);
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener),
	                 DIRAUTH_ERR_EXISTS);
	ck_assert_ptr_null(listener);
	uint8_t *content = test_read_file(socket_path, &len);
	ck_assert_uint_eq(len, 9);
	ck_assert_mem_eq(content, "precious\n", 9);
	free(content);
	/* A directory is not a socket either. */
	unlink(socket_path);
	ck_assert_int_eq(mkdir(socket_path, 0700), 0);
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener),
	                 DIRAUTH_ERR_EXISTS);
	rmdir(socket_path);
}
END_TEST

/* ---- standard error, captured ---- */

/* Sends this process's standard error to stderr_path until stderr_end(). */
static void stderr_begin(void)
{
	fflush(stderr);
	saved_stderr = dup(2);
	ck_assert_int_ge(saved_stderr, 0);
	int log = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(log, 0);
	ck_assert_int_ge(dup2(log, 2), 0);
	close(log);
}

/* Restores standard error; returns what was written meanwhile (free it). */
static char *stderr_end(void)
{
	size_t len;
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	saved_stderr = -1;
	return (char *)test_read_file(stderr_path, &len);
}

/* Binds a socket file at path and closes it, as a signer killed with SIGKILL leaves one. */
static void make_stale_socket(const char *path)
{
	struct sockaddr_un address;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	memset(&address, 0, sizeof(address));
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, path, strlen(path) + 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&address, sizeof(address)), 0);
	close(fd);
}

START_TEST(test_stale_socket_and_running_signer)
{
	struct signer_listener *listener = NULL, *second = NULL;
	struct stat st;

	/* A socket file nobody listens on any more, and no lock file yet. */
	make_stale_socket(socket_path);
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener), 0);
	assert_serving();
	ck_assert_int_eq(lstat(lock_path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0600);

	/* A second signer on the same path is refused by the lock, and the first goes on serving. */
	stderr_begin();
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &second),
	                 DIRAUTH_ERR_EXISTS);
	char *text = stderr_end();
	ck_assert_ptr_null(second);
	ck_assert_msg(strstr(text, "another dirauth-signer is running on"), "stderr: %s", text);
	ck_assert_msg(strstr(text, socket_path), "stderr: %s", text);
	free(text);
	assert_serving();
	signer_listener_stop(listener);

	/* Stopped: the socket is gone, the lock file stays, and a new listener starts. */
	ck_assert_int_ne(lstat(socket_path, &st), 0);
	ck_assert_int_eq(lstat(lock_path, &st), 0);
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener), 0);
	assert_serving();
	signer_listener_stop(listener);
}
END_TEST

START_TEST(test_lock_held_by_another_process)
{
	struct signer_listener *listener = NULL;
	struct stat st;
	int ready[2];
	char byte;

	/* A "signer" in another process: it holds the lock, its socket is there. */
	make_stale_socket(socket_path);
	ck_assert_int_eq(pipe(ready), 0);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(lock_path, O_RDWR | O_CREAT, 0600);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &byte, 1), 1);
	close(ready[0]);

	stderr_begin();
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener),
	                 DIRAUTH_ERR_EXISTS);
	char *text = stderr_end();
	ck_assert_ptr_null(listener);
	ck_assert_msg(strstr(text, "another dirauth-signer is running on"), "stderr: %s", text);
	free(text);
	/* Its socket was left alone. */
	ck_assert_int_eq(lstat(socket_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));

	/* It is killed: the kernel releases its lock, so its socket is stale and replaced. */
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener), 0);
	assert_serving();
	signer_listener_stop(listener);
}
END_TEST

START_TEST(test_lock_path_not_a_file)
{
	struct signer_listener *listener = NULL;
	char target[320];
	struct stat st;
	size_t len;

	/* A symbolic link at the lock's path is not followed: its target is neither created nor locked. */
	snprintf(target, sizeof(target), "%s/target", dir);
	ck_assert_int_eq(symlink(target, lock_path), 0);
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener),
	                 DIRAUTH_ERR_EXISTS);
	ck_assert_ptr_null(listener);
	ck_assert_int_ne(lstat(target, &st), 0);
	ck_assert_int_ne(lstat(socket_path, &st), 0);
	test_write_file(target, "precious\n", 9, 0644);
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener),
	                 DIRAUTH_ERR_EXISTS);
	uint8_t *content = test_read_file(target, &len);
	ck_assert_uint_eq(len, 9);
	ck_assert_mem_eq(content, "precious\n", 9);
	free(content);
	ck_assert_int_eq(unlink(lock_path), 0);

	/* A directory. */
	ck_assert_int_eq(mkdir(lock_path, 0700), 0);
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener),
	                 DIRAUTH_ERR_EXISTS);
	ck_assert_int_ne(lstat(socket_path, &st), 0);
	ck_assert_int_eq(rmdir(lock_path), 0);

	/* A path too long for a socket address. */
	char long_path[200];
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	ck_assert_int_eq(signer_listener_start(service, long_path, getuid(), NULL, &listener),
	                 DIRAUTH_ERR_IO);
	ck_assert_int_eq(signer_listener_start(service, "", getuid(), NULL, &listener), DIRAUTH_ERR_IO);
	ck_assert_ptr_null(listener);
}
END_TEST

/* ---- peers of other uids (root only) ---- */

#define CHILD_SERVED      1
#define CHILD_NO_ANSWER   0
#define CHILD_NOT_ALLOWED 2 /* connect() failed with EACCES */

static const char *child_socket_path;

/* Child: becomes uid (and gid), connects to child_socket_path if it can and asks for the keys.
 * Returns CHILD_SERVED for a valid answer, CHILD_NO_ANSWER when the connection was closed
 * without one, CHILD_NOT_ALLOWED when connect() failed with EACCES, 10 and up otherwise. */
static int child_client(uid_t uid)
{
	struct sockaddr_un address;
	struct signer_request request;
	struct signer_response response;
	struct buffer frame;
	uint8_t prefix[4];
	size_t len;

	if (setgid(uid) != 0 || setuid(uid) != 0)
		return 10;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return 11;
	memset(&address, 0, sizeof(address));
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, child_socket_path, strlen(child_socket_path) + 1);
	if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0)
		return errno == EACCES ? CHILD_NOT_ALLOWED : 12;
	memset(&request, 0, sizeof(request));
	request.operation = SIGNER_OP_GET_KEYS;
	buffer_init(&frame);
	if (signer_request_encode(&request, &frame) != 0)
		return 13;
	(void)send(fd, frame.data, frame.len, MSG_NOSIGNAL);
	if (client_read(fd, prefix, sizeof(prefix)) != 0)
		return CHILD_NO_ANSWER;
	if (signer_frame_length(prefix, &len) != 0)
		return 14;
	uint8_t *body = malloc(len ? len : 1);
	if (!body || client_read(fd, body, len) != 0)
		return 15;
	if (signer_response_decode(body, len, &response) != 0)
		return 16;
	if (response.result != 0 || !memchr(response.payload, '\n', response.payload_len))
		return 17;
	return CHILD_SERVED;
}

/* Runs child_client(uid) against path in a forked child; returns its exit status. */
static int run_child_client(const char *path, uid_t uid)
{
	child_socket_path = path;
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(child_client(uid));
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static bool skip_unless_root(const char *test)
{
	if (geteuid() == 0)
		return false;
	fprintf(stderr, "check_listener: %s SKIPPED: needs root to setuid(%d)\n", test, NOBODY);
	return true;
}

START_TEST(test_wrong_uid_refused)
{
	struct signer_listener *listener = NULL;

	if (skip_unless_root("test_wrong_uid_refused"))
		return;
	stderr_begin();
	ck_assert_int_eq(chmod(dir, 0755), 0); /* let nobody reach the socket's directory */

	/* The allowed uid is the signer's own: the socket stays its own, 0600. */
	ck_assert_int_eq(signer_listener_start(service, socket_path, 0, NULL, &listener), 0);
	struct stat st;
	ck_assert_int_eq(lstat(socket_path, &st), 0);
	ck_assert_uint_eq(st.st_uid, 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	/* The socket's mode alone keeps nobody out. */
	ck_assert_int_eq(run_child_client(socket_path, NOBODY), CHILD_NOT_ALLOWED);
	/* With the mode opened up, SO_PEERCRED still drops it: the request gets no answer. */
	ck_assert_int_eq(chmod(socket_path, 0666), 0);
	ck_assert_int_eq(run_child_client(socket_path, NOBODY), CHILD_NO_ANSWER);
	assert_serving();
	signer_listener_stop(listener);

	char *text = stderr_end();
	ck_assert_msg(strstr(text, "refused connection from uid 65534"), "stderr: %s", text);
	free(text);
}
END_TEST

START_TEST(test_socket_given_to_allowed_uid)
{
	struct signer_listener *listener = NULL;
	struct stat st;

	if (skip_unless_root("test_socket_given_to_allowed_uid"))
		return;
	stderr_begin();
	ck_assert_int_eq(chmod(dir, 0755), 0);

	ck_assert_int_eq(signer_listener_start(service, socket_path, NOBODY, NULL, &listener), 0);
	ck_assert_int_eq(lstat(socket_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_uid, NOBODY);
	ck_assert_uint_eq(st.st_gid, getegid()); /* the group is left alone */
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	/* The lock file stays the signer's. */
	ck_assert_int_eq(lstat(lock_path, &st), 0);
	ck_assert_uint_eq(st.st_uid, geteuid());
	ck_assert_int_eq(st.st_mode & 0777, 0600);

	/* dirauthd's uid is served, on several connections. */
	ck_assert_int_eq(run_child_client(socket_path, NOBODY), CHILD_SERVED);
	ck_assert_int_eq(run_child_client(socket_path, NOBODY), CHILD_SERVED);
	/* Any other uid cannot even connect. */
	ck_assert_int_eq(run_child_client(socket_path, STRANGER), CHILD_NOT_ALLOWED);
	/* Root can connect, and SO_PEERCRED drops it without an answer (the request may not even
	 * be sent: the signer may have closed first). */
	struct signer_request request;
	struct buffer frame;
	memset(&request, 0, sizeof(request));
	request.operation = SIGNER_OP_GET_KEYS;
	buffer_init(&frame);
	ck_assert_int_eq(signer_request_encode(&request, &frame), 0);
	int fd = client_connect();
	(void)send(fd, frame.data, frame.len, MSG_NOSIGNAL);
	buffer_free(&frame);
	ck_assert(client_sees_close(fd));
	close(fd);
	ck_assert_int_eq(run_child_client(socket_path, NOBODY), CHILD_SERVED);
	signer_listener_stop(listener);
	ck_assert_int_ne(lstat(socket_path, &st), 0);

	char *text = stderr_end();
	ck_assert_msg(strstr(text, "refused connection from uid 0"), "stderr: %s", text);
	ck_assert_msg(!strstr(text, "refused connection from uid 65534"), "stderr: %s", text);
	free(text);
}
END_TEST

/* A directory under dir owned by STRANGER, for a signer of that uid; its socket path in out. */
static void stranger_directory(char *out, size_t cap)
{
	char sub[300];
	ck_assert_int_eq(chmod(dir, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/run", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_eq(chown(sub, STRANGER, STRANGER), 0);
	snprintf(out, cap, "%s/s.sock", sub);
}

/* Child: a signer running as STRANGER, without CAP_CHOWN, starts a listener on path for
 * allowed_uid and stops it. Exits with the start's result negated (0 on success); on success,
 * 20 if the socket was not STRANGER's 0600 socket. */
static int child_signer(const char *path, uid_t allowed_uid)
{
	struct signer_listener *listener = NULL;
	struct stat st;
	if (setgid(STRANGER) != 0 || setuid(STRANGER) != 0)
		return 10;
	int rc = signer_listener_start(service, path, allowed_uid, NULL, &listener);
	if (rc)
		return -rc;
	if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_uid != STRANGER ||
	    (st.st_mode & 0777) != 0600)
		rc = 20;
	signer_listener_stop(listener);
	return rc;
}

static int run_child_signer(const char *path, uid_t allowed_uid)
{
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(child_signer(path, allowed_uid));
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

START_TEST(test_stale_socket_of_another_uid)
{
	struct signer_listener *listener = NULL;
	char stranger_socket[320];
	struct stat st;

	if (skip_unless_root("test_stale_socket_of_another_uid"))
		return;
	ck_assert_int_eq(chmod(dir, 0755), 0);
	/* A signer that gave its socket to nobody was killed: the socket stays, nobody's, 0600. */
	make_stale_socket(socket_path);
	ck_assert_int_eq(chmod(socket_path, 0600), 0);
	ck_assert_int_eq(lchown(socket_path, NOBODY, (gid_t)-1), 0);
	ck_assert_int_eq(signer_listener_start(service, socket_path, NOBODY, NULL, &listener), 0);
	ck_assert_int_eq(run_child_client(socket_path, NOBODY), CHILD_SERVED);
	signer_listener_stop(listener);

	/* The same for a signer that is not root: it cannot connect to that socket (EACCES), which
	 * must not make the socket look live. */
	stranger_directory(stranger_socket, sizeof(stranger_socket));
	make_stale_socket(stranger_socket);
	ck_assert_int_eq(chmod(stranger_socket, 0600), 0);
	ck_assert_int_eq(lchown(stranger_socket, NOBODY, (gid_t)-1), 0);
	ck_assert_int_eq(run_child_signer(stranger_socket, STRANGER), 0);
	ck_assert_int_ne(lstat(stranger_socket, &st), 0);
}
END_TEST

START_TEST(test_socket_cannot_be_given_away)
{
	char stranger_socket[320];
	struct stat st;

	if (skip_unless_root("test_socket_cannot_be_given_away"))
		return;
	/* A signer that is neither root nor nobody, with no CAP_CHOWN, asked to admit nobody. */
	stranger_directory(stranger_socket, sizeof(stranger_socket));
	stderr_begin();
	int status = run_child_signer(stranger_socket, NOBODY);
	char *text = stderr_end();
	ck_assert_int_eq(status, -DIRAUTH_ERR_PERMISSION);
	ck_assert_msg(strstr(text, "cannot give the socket to uid 65534: Operation not permitted; run "
	                           "dirauth-signer with CAP_CHOWN or as uid 65534"),
	              "stderr: %s", text);
	free(text);
	/* Nothing is left listening: the socket is removed again. */
	ck_assert_int_ne(lstat(stranger_socket, &st), 0);
}
END_TEST

/* A client that writes a whole batch before reading gets every answer, in order; a malformed
 * frame inside a batch is answered after the requests before it and ends the connection. */
START_TEST(test_pipelined_requests_answered_in_order)
{
	struct signer_listener *listener = NULL;
	struct signer_response response;
	struct signer_request request;
	struct buffer text, frames;
	uint8_t *body;
	const uint8_t garbage[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'};

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener), 0);
	buffer_init(&text);
	buffer_init(&frames);
	for (uint64_t i = 1; i <= 200; i++) {
		receipt_text(1 + i % 5, &text);
		memset(&request, 0, sizeof request);
		request.operation = i == 100 ? SIGNER_OP_SIGN_VOTE : SIGNER_OP_SIGN_RECEIPT;
		request.text = text.data;
		request.text_len = text.len;
		ck_assert_int_eq(signer_request_encode(&request, &frames), 0);
	}
	int fd = client_connect();
	client_write(fd, frames.data, frames.len);
	for (uint64_t i = 1; i <= 200; i++) {
		ck_assert_int_eq(client_response(fd, &response, &body), 0);
		if (i == 100) {
			ck_assert_int_eq(response.result, DIRAUTH_ERR_REFUSED);
			ck_assert(!response.has_signature);
		} else {
			ck_assert_int_eq(response.result, 0);
			ck_assert(response.has_signature);
			receipt_text(1 + i % 5, &text);
			ck_assert_int_eq(crypto_ed25519_verify(signing_verifier.public_key, text.data,
			                                       text.len, response.signature.signature),
			                 0);
		}
		free(body);
	}
	close(fd);

	buffer_reset(&frames);
	for (uint64_t i = 1; i <= 2; i++) {
		receipt_text(i, &text);
		memset(&request, 0, sizeof request);
		request.operation = SIGNER_OP_SIGN_RECEIPT;
		request.text = text.data;
		request.text_len = text.len;
		ck_assert_int_eq(signer_request_encode(&request, &frames), 0);
	}
	ck_assert_int_eq(buffer_append(&frames, garbage, sizeof garbage), 0);
	receipt_text(3, &text);
	request.text = text.data;
	request.text_len = text.len;
	ck_assert_int_eq(signer_request_encode(&request, &frames), 0);
	fd = client_connect();
	client_write(fd, frames.data, frames.len);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(client_response(fd, &response, &body), 0);
		ck_assert_int_eq(response.result, 0);
		ck_assert(response.has_signature);
		free(body);
	}
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	ck_assert_int_eq(response.result, DIRAUTH_ERR_SYNTAX);
	free(body);
	ck_assert(client_sees_close(fd));
	close(fd);
	buffer_free(&frames);
	buffer_free(&text);
	assert_serving();
	signer_listener_stop(listener);
}
END_TEST

START_TEST(test_malformed_frame)
{
	struct signer_listener *listener = NULL;
	struct signer_response response;
	uint8_t *body;
	const uint8_t garbage[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'};

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener), 0);
	int fd = client_connect();
	client_write(fd, garbage, sizeof(garbage));
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	ck_assert_int_eq(response.result, DIRAUTH_ERR_SYNTAX);
	ck_assert(!response.has_signature);
	free(body);
	ck_assert(client_sees_close(fd));
	close(fd);

	/* A request of an unknown version. */
	struct signer_request request;
	struct buffer frame;
	memset(&request, 0, sizeof(request));
	request.operation = SIGNER_OP_GET_KEYS;
	buffer_init(&frame);
	ck_assert_int_eq(signer_request_encode(&request, &frame), 0);
	frame.data[4] = SIGNER_PROTOCOL_VERSION + 1;
	fd = client_connect();
	client_write(fd, frame.data, frame.len);
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	ck_assert_int_eq(response.result, DIRAUTH_ERR_SYNTAX);
	free(body);
	ck_assert(client_sees_close(fd));
	close(fd);
	/* Trailing bytes inside the frame. */
	frame.data[4] = SIGNER_PROTOCOL_VERSION;
	frame.data[3]++;
	buffer_append(&frame, "x", 1);
	fd = client_connect();
	client_write(fd, frame.data, frame.len);
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	ck_assert_int_eq(response.result, DIRAUTH_ERR_SYNTAX);
	free(body);
	close(fd);
	buffer_free(&frame);

	/* A frame cut short by the client: dropped, and the next client is served. */
	const uint8_t cut[] = {0, 0, 1, 0, 1, 2};
	fd = client_connect();
	client_write(fd, cut, sizeof(cut));
	shutdown(fd, SHUT_WR);
	ck_assert(client_sees_close(fd));
	close(fd);
	assert_serving();
	signer_listener_stop(listener);
}
END_TEST

START_TEST(test_oversized_frame_length)
{
	struct signer_listener *listener = NULL;
	struct signer_response response;
	uint8_t *body;
	const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff};
	uint8_t just_over[4];
	uint32_t over = SIGNER_FRAME_MAX + 1;

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener), 0);
	int fd = client_connect();
	client_write(fd, huge, sizeof(huge));
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	ck_assert_int_eq(response.result, DIRAUTH_ERR_SYNTAX);
	free(body);
	ck_assert(client_sees_close(fd));
	close(fd);

	just_over[0] = (uint8_t)(over >> 24);
	just_over[1] = (uint8_t)(over >> 16);
	just_over[2] = (uint8_t)(over >> 8);
	just_over[3] = (uint8_t)over;
	fd = client_connect();
	client_write(fd, just_over, sizeof(just_over));
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	ck_assert_int_eq(response.result, DIRAUTH_ERR_SYNTAX);
	free(body);
	ck_assert(client_sees_close(fd));
	close(fd);
	assert_serving();
	signer_listener_stop(listener);
}
END_TEST

/* A peer that trickles a frame a byte at a time is dropped once the frame's deadline passes, and
 * the signer then serves others: no peer holds it, however slowly it writes. */
START_TEST(test_trickling_frame_dropped)
{
	struct signer_listener *listener = NULL;
	const uint8_t prefix[] = {0, 0, 3, 232}; /* announces 1000 bytes */
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener), 0);
	int fd = client_connect();
	client_write(fd, prefix, sizeof(prefix));
	int dropped = 0;
	/* One byte every 250 ms would take 250 s to finish the frame; within 10 s it is dropped. */
	for (int i = 0; i < 40 && !dropped; i++) {
		test_sleep_ms(250);
		dropped = send(fd, "x", 1, MSG_NOSIGNAL) < 0;
		struct pollfd closed = {.fd = fd, .events = POLLIN, .revents = 0};
		if (poll(&closed, 1, 0) == 1)
			dropped = 1;
	}
	ck_assert_msg(dropped, "a trickling peer held the signer for the whole frame");
	close(fd);
	assert_serving();
	signer_listener_stop(listener);
}
END_TEST

/* ---- several connections at once ---- */

static void header_text(uint64_t epoch, uint8_t variant, struct buffer *out)
{
	struct snapshot_header h;
	memset(&h, 0, sizeof(h));
	snprintf(h.namespace_name, sizeof(h.namespace_name), "mix");
	snprintf(h.origin, sizeof(h.origin), "%s", ORIGIN);
	h.epoch = epoch;
	h.valid_after = GENESIS + epoch * LENGTH;
	h.fresh_until = h.valid_after + LENGTH;
	h.valid_until = h.valid_after + 3 * LENGTH;
	h.record_count = variant;
	memset(h.records_root, variant, sizeof(h.records_root));
	h.body_size = 100 + variant;
	memset(h.body_sha256, 0x66, sizeof(h.body_sha256));
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	buffer_reset(out);
	ck_assert_int_eq(snapshot_header_encode(&h, out), 0);
}

static int64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* True when fd becomes readable (an answer, or the close) within ms. */
static bool client_readable(int fd, int ms)
{
	struct pollfd readable = {.fd = fd, .events = POLLIN, .revents = 0};
	return poll(&readable, 1, ms) == 1;
}

/* A peer that sends a byte a second into a frame it never finishes, until told to stop. */
struct trickler {
	int fd;
	atomic_bool stop;
	pthread_t thread;
};

static void *trickle(void *argument)
{
	struct trickler *t = argument;
	while (!atomic_load(&t->stop)) {
		(void)send(t->fd, "x", 1, MSG_NOSIGNAL);
		for (int i = 0; i < 20 && !atomic_load(&t->stop); i++)
			test_sleep_ms(50);
	}
	return NULL;
}

/* A peer that connects and says nothing and one that trickles its frame a byte a second hold
 * their own connections only: another client's signature is not delayed by them. */
START_TEST(test_slow_peers_do_not_delay_others)
{
	struct signer_listener *listener = NULL;
	struct signer_response response;
	struct buffer text;
	uint8_t *body;
	const uint8_t prefix[] = {0, 0, 3, 232}; /* announces 1000 bytes */

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener), 0);
	int silent = client_connect();
	struct trickler t = {.fd = client_connect()};
	atomic_init(&t.stop, false);
	client_write(t.fd, prefix, sizeof(prefix));
	ck_assert_int_eq(pthread_create(&t.thread, NULL, trickle, &t), 0);
	test_sleep_ms(300); /* both are accepted and being read from */

	buffer_init(&text);
	int fd = client_connect();
	int64_t start = monotonic_ms();
	header_text(10, 1, &text);
	client_request(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len);
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	int64_t took = monotonic_ms() - start;
	ck_assert_int_eq(response.result, 0);
	ck_assert(response.has_signature);
	free(body);
	ck_assert_msg(took < 1000, "a signature took %lld ms beside two slow peers", (long long)took);
	/* The slow peers are still connected: nothing was waiting for them to go. */
	ck_assert(!client_readable(silent, 0));
	ck_assert(!client_readable(t.fd, 0));
	receipt_text(1, &text);
	client_request(fd, SIGNER_OP_SIGN_RECEIPT, text.data, text.len);
	ck_assert_int_eq(client_response(fd, &response, &body), 0);
	ck_assert_int_eq(response.result, 0);
	free(body);

	atomic_store(&t.stop, true);
	pthread_join(t.thread, NULL);
	close(fd);
	close(silent);
	close(t.fd);
	buffer_free(&text);
	signer_listener_stop(listener);
}
END_TEST

/* With max_connections served, the next connection waits unanswered, and is served as soon as
 * one of them closes. */
START_TEST(test_connection_bound)
{
	struct signer_listener *listener = NULL;
	struct signer_listener_options options = {.max_connections = 2, .idle_timeout_ms = 20000};
	struct signer_response response;
	uint8_t *body;

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), &options, &listener), 0);
	int held[2];
	for (int i = 0; i < 2; i++) {
		held[i] = client_connect();
		client_request(held[i], SIGNER_OP_GET_KEYS, NULL, 0); /* served: it holds a place */
		ck_assert_int_eq(client_response(held[i], &response, &body), 0);
		ck_assert_int_eq(response.result, 0);
		free(body);
	}
	int waiting = client_connect(); /* the kernel queues it */
	client_request(waiting, SIGNER_OP_GET_KEYS, NULL, 0);
	ck_assert_msg(!client_readable(waiting, 700), "a third connection was served beyond the bound");
	close(held[0]);
	ck_assert_msg(client_readable(waiting, 3000), "the waiting connection was not served");
	ck_assert_int_eq(client_response(waiting, &response, &body), 0);
	ck_assert_int_eq(response.result, 0);
	free(body);
	/* The other held connection is still served. */
	client_request(held[1], SIGNER_OP_GET_KEYS, NULL, 0);
	ck_assert_int_eq(client_response(held[1], &response, &body), 0);
	ck_assert_int_eq(response.result, 0);
	free(body);
	close(held[1]);
	close(waiting);
	signer_listener_stop(listener);

	/* More places than the listener can have: refused at start. */
	options.max_connections = SIGNER_LISTENER_MAX_CONNECTIONS + 1;
	stderr_begin();
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), &options, &listener),
	                 DIRAUTH_ERR_CONFIG);
	free(stderr_end());
	ck_assert_ptr_null(listener);
}
END_TEST

/* A connection idle for the idle timeout is closed; one that keeps asking is not. */
START_TEST(test_idle_connection_closed)
{
	struct signer_listener *listener = NULL;
	struct signer_listener_options options = {.idle_timeout_ms = 400};
	struct signer_response response;
	uint8_t *body;

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), &options, &listener), 0);
	int fd = client_connect();
	int64_t start = monotonic_ms();
	ck_assert(client_readable(fd, 5000));
	ck_assert(client_sees_close(fd));
	ck_assert_int_ge(monotonic_ms() - start, 300);
	close(fd);

	fd = client_connect();
	for (int i = 0; i < 5; i++) {
		test_sleep_ms(200);
		client_request(fd, SIGNER_OP_GET_KEYS, NULL, 0);
		ck_assert_int_eq(client_response(fd, &response, &body), 0);
		ck_assert_int_eq(response.result, 0);
		free(body);
	}
	close(fd);
	signer_listener_stop(listener);
}
END_TEST

#define RACERS 8

struct racer {
	pthread_barrier_t *start;
	uint8_t variant;
	int32_t result;
	int has_signature;
	uint8_t signature[64];
};

/* One client asking, at the same moment as the others, for its own header for epoch 10. */
static void *race(void *argument)
{
	struct racer *r = argument;
	struct signer_response response;
	struct buffer text;
	uint8_t *body = NULL;
	buffer_init(&text);
	header_text(10, r->variant, &text);
	int fd = client_connect();
	pthread_barrier_wait(r->start);
	client_request(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len);
	r->result = client_response(fd, &response, &body) == 0 ? response.result : 1;
	r->has_signature = r->result == 0 && response.has_signature;
	if (r->has_signature)
		memcpy(r->signature, response.signature.signature, 64);
	free(body);
	close(fd);
	buffer_free(&text);
	return NULL;
}

/* Connections are served at once, but the ledger's check-and-record is not: of RACERS different
 * headers asked for one (origin, epoch) at the same moment, exactly one is signed. */
START_TEST(test_concurrent_headers_one_signature)
{
	struct signer_listener *listener = NULL;
	struct racer racers[RACERS];
	pthread_t threads[RACERS];
	pthread_barrier_t start;

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), NULL, &listener), 0);
	ck_assert_int_eq(pthread_barrier_init(&start, NULL, RACERS), 0);
	for (int i = 0; i < RACERS; i++) {
		racers[i] = (struct racer){.start = &start, .variant = (uint8_t)(i + 1)};
		ck_assert_int_eq(pthread_create(&threads[i], NULL, race, &racers[i]), 0);
	}
	int signed_count = 0, winner = -1;
	for (int i = 0; i < RACERS; i++) {
		pthread_join(threads[i], NULL);
		if (racers[i].result == 0) {
			ck_assert(racers[i].has_signature);
			signed_count++;
			winner = i;
		} else {
			ck_assert_int_eq(racers[i].result, DIRAUTH_ERR_COLLISION);
		}
	}
	pthread_barrier_destroy(&start);
	ck_assert_int_eq(signed_count, 1);

	/* The winner's header is signed again identically; every other is still refused. */
	for (int i = 0; i < RACERS; i++) {
		struct signer_response response;
		struct buffer text;
		uint8_t *body;
		buffer_init(&text);
		header_text(10, racers[i].variant, &text);
		int fd = client_connect();
		client_request(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len);
		ck_assert_int_eq(client_response(fd, &response, &body), 0);
		if (i == winner) {
			ck_assert_int_eq(response.result, 0);
			ck_assert_mem_eq(response.signature.signature, racers[i].signature, 64);
		} else {
			ck_assert_int_eq(response.result, DIRAUTH_ERR_COLLISION);
		}
		free(body);
		close(fd);
		buffer_free(&text);
	}
	signer_listener_stop(listener);
}
END_TEST

static Suite *listener_suite(void)
{
	Suite *suite = suite_create("listener");
	TCase *tc = tcase_create("listener");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_serves_many_requests_on_one_connection);
	tcase_add_test(tc, test_pipelined_requests_answered_in_order);
	tcase_add_test(tc, test_refuses_file_in_the_way);
	tcase_add_test(tc, test_stale_socket_and_running_signer);
	tcase_add_test(tc, test_lock_held_by_another_process);
	tcase_add_test(tc, test_lock_path_not_a_file);
	tcase_add_test(tc, test_wrong_uid_refused);
	tcase_add_test(tc, test_socket_given_to_allowed_uid);
	tcase_add_test(tc, test_stale_socket_of_another_uid);
	tcase_add_test(tc, test_socket_cannot_be_given_away);
	tcase_add_test(tc, test_malformed_frame);
	tcase_add_test(tc, test_oversized_frame_length);
	tcase_add_test(tc, test_trickling_frame_dropped);
	tcase_add_test(tc, test_slow_peers_do_not_delay_others);
	tcase_add_test(tc, test_connection_bound);
	tcase_add_test(tc, test_idle_connection_closed);
	tcase_add_test(tc, test_concurrent_headers_one_signature);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(listener_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
