/*
 * check_listener.c: the signer's UNIX socket (signer/listener.c), in process, with a raw
 * socket client speaking the frame protocol.
 *
 * The listener runs on a real service (fresh keys, a real certificate, a real ledger) in a
 * temporary directory. Checked: the socket file is mode 0600 and removed at stop; a regular
 * file or a live socket in the way is refused and left alone, a stale socket is replaced;
 * many requests are served on one connection; a peer of another uid is dropped without an
 * answer (a child process that setuid()s to nobody, which needs root: the test says so and
 * skips that part otherwise); a malformed frame and an oversized frame length get one
 * DIRAUTH_ERR_SYNTAX answer and the connection is closed, and the listener goes on serving.
 */
#include "test_support.h"

#include "buffer.h"
#include "certificate.h"
#include "error.h"
#include "key.h"
#include "listener.h"
#include "note.h"
#include "receipt.h"
#include "service.h"
#include "signer_protocol.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define AUTHORITY "authority1.dirauth.example"
#define NOW       1800000000ULL
#define NOBODY    65534

static char dir[256];
static char socket_path[300];
static char stderr_path[300];
static uint64_t now_value = NOW;
static struct signer_service *service;
static struct note_verifier signing_verifier;

static uint64_t test_now(void *context)
{
	return *(const uint64_t *)context;
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
	struct signer_service_options options = {
	    .authority = AUTHORITY,
	    .signing_key_path = signing_path,
	    .certificate_paths = certificates,
	    .certificate_count = 1,
	    .ledger_directory = ledger_path,
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

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), &listener), 0);
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
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), &listener),
	                 DIRAUTH_ERR_EXISTS);
	ck_assert_ptr_null(listener);
	uint8_t *content = test_read_file(socket_path, &len);
	ck_assert_uint_eq(len, 9);
	ck_assert_mem_eq(content, "precious\n", 9);
	free(content);
	/* A directory is not a socket either. */
	unlink(socket_path);
	ck_assert_int_eq(mkdir(socket_path, 0700), 0);
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), &listener),
	                 DIRAUTH_ERR_EXISTS);
	rmdir(socket_path);
}
END_TEST

START_TEST(test_stale_and_live_sockets)
{
	struct signer_listener *listener = NULL, *second = NULL;
	struct sockaddr_un address;

	/* A socket file nobody listens on any more (a signer killed with SIGKILL leaves one). */
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&address, 0, sizeof(address));
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, socket_path, strlen(socket_path) + 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&address, sizeof(address)), 0);
	close(fd);
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), &listener), 0);
	assert_serving();
	/* A live one is not replaced. */
	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), &second), DIRAUTH_ERR_EXISTS);
	ck_assert_ptr_null(second);
	assert_serving();
	signer_listener_stop(listener);
}
END_TEST

/* Child: becomes nobody, connects if it can, sends a request; exits 0 when no answer came. */
static int child_as_nobody(void)
{
	struct sockaddr_un address;
	struct signer_request request;
	struct buffer frame;
	uint8_t byte;

	if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
		return 10;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&address, 0, sizeof(address));
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, socket_path, strlen(socket_path) + 1);
	if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0)
		return errno == EACCES ? 2 : 11; /* the 0600 socket keeps it out */
	memset(&request, 0, sizeof(request));
	request.operation = SIGNER_OP_GET_KEYS;
	buffer_init(&frame);
	if (signer_request_encode(&request, &frame) != 0)
		return 12;
	(void)send(fd, frame.data, frame.len, MSG_NOSIGNAL);
	ssize_t got = recv(fd, &byte, 1, 0);
	return got <= 0 ? 0 : 13;
}

static int run_child_as_nobody(void)
{
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(child_as_nobody());
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

START_TEST(test_wrong_uid_refused)
{
	struct signer_listener *listener = NULL;
	size_t len;

	if (geteuid() != 0) {
		fprintf(stderr, "check_listener: test_wrong_uid_refused SKIPPED: needs root to setuid(%d)\n",
		        NOBODY);
		return;
	}
	/* Capture the listener's stderr. */
	int saved = dup(2);
	int log = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(log, 0);
	dup2(log, 2);
	close(log);
	ck_assert_int_eq(chmod(dir, 0755), 0); /* let nobody reach the socket's directory */

	ck_assert_int_eq(signer_listener_start(service, socket_path, 0, &listener), 0);
	/* The socket's mode alone keeps nobody out. */
	ck_assert_int_eq(run_child_as_nobody(), 2);
	/* With the mode opened up, SO_PEERCRED still drops it: the request gets no answer. */
	ck_assert_int_eq(chmod(socket_path, 0666), 0);
	ck_assert_int_eq(run_child_as_nobody(), 0);
	assert_serving();
	signer_listener_stop(listener);

	/* The allowed uid is nobody: root itself is dropped. */
	ck_assert_int_eq(signer_listener_start(service, socket_path, NOBODY, &listener), 0);
	int fd = client_connect();
	client_request(fd, SIGNER_OP_GET_KEYS, NULL, 0);
	ck_assert(client_sees_close(fd));
	close(fd);
	signer_listener_stop(listener);

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char *text = (char *)test_read_file(stderr_path, &len);
	ck_assert_msg(strstr(text, "refused connection from uid 65534"), "stderr: %s", text);
	ck_assert_msg(strstr(text, "refused connection from uid 0"), "stderr: %s", text);
	free(text);
}
END_TEST

START_TEST(test_malformed_frame)
{
	struct signer_listener *listener = NULL;
	struct signer_response response;
	uint8_t *body;
	const uint8_t garbage[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'};

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), &listener), 0);
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

	ck_assert_int_eq(signer_listener_start(service, socket_path, getuid(), &listener), 0);
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

struct run_state {
	volatile int stop;
	int result;
};

static void *run_thread(void *argument)
{
	struct run_state *state = argument;
	state->result = signer_listener_run(service, socket_path, getuid(), &state->stop);
	return NULL;
}

START_TEST(test_run_until_stopped)
{
	struct run_state state = {.stop = 0, .result = 1};
	struct stat st;
	pthread_t thread;

	ck_assert_int_eq(pthread_create(&thread, NULL, run_thread, &state), 0);
	for (int i = 0; i < 500 && lstat(socket_path, &st) != 0; i++)
		test_sleep_ms(10);
	ck_assert_int_eq(lstat(socket_path, &st), 0);
	assert_serving();
	state.stop = 1;
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	ck_assert_int_eq(state.result, 0);
	ck_assert_int_ne(lstat(socket_path, &st), 0);
}
END_TEST

static Suite *listener_suite(void)
{
	Suite *suite = suite_create("listener");
	TCase *tc = tcase_create("listener");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_serves_many_requests_on_one_connection);
	tcase_add_test(tc, test_refuses_file_in_the_way);
	tcase_add_test(tc, test_stale_and_live_sockets);
	tcase_add_test(tc, test_wrong_uid_refused);
	tcase_add_test(tc, test_malformed_frame);
	tcase_add_test(tc, test_oversized_frame_length);
	tcase_add_test(tc, test_run_until_stopped);
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
