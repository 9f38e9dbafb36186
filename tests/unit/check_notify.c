/*
 * check_notify.c: the service manager's datagram (notify/notify.h), received on a socket the test
 * binds as systemd would: at a path, and in the abstract namespace; nothing without
 * $NOTIFY_SOCKET; each refusal with its code and nothing sent; a reload's start with the
 * monotonic time systemd matches it by.
 */
#include "notify/notify.h"

#include "base/error.h"
#include "test_support.h"

#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A datagram socket bound at name (a path, or '@' and an abstract name), as the manager's. */
static int manager_socket(const char *name)
{
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	size_t len = strlen(name);
	ck_assert_uint_lt(len, sizeof address.sun_path);
	memcpy(address.sun_path, name, len);
	if (name[0] == '@')
		address.sun_path[0] = '\0';
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	ck_assert_int_ge(fd, 0);
	socklen_t length =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '@' ? 0 : 1));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&address, length), 0);
	return fd;
}

/* The next datagram on fd within a second, NUL-terminated in out; "" when none came. */
static void receive(int fd, char *out, size_t cap)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	out[0] = 0;
	if (poll(&p, 1, 1000) != 1)
		return;
	ssize_t n = recv(fd, out, cap - 1, 0);
	out[n > 0 ? n : 0] = 0;
}

START_TEST(test_told_at_a_path_and_in_the_abstract_namespace)
{
	char dir[256], path[300], abstract[64], got[NOTIFY_MESSAGE_MAX + 1];
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/notify.sock", dir);
	int at_path = manager_socket(path);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", path, 1), 0);
	ck_assert_int_eq(notify_send("READY=1\nSTATUS=serving"), 0);
	receive(at_path, got, sizeof got);
	ck_assert_str_eq(got, "READY=1\nSTATUS=serving");

	snprintf(abstract, sizeof abstract, "@dirauth-check-notify-%ld", (long)getpid());
	int in_abstract = manager_socket(abstract);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", abstract, 1), 0);
	ck_assert_int_eq(notify_send("STOPPING=1"), 0);
	receive(in_abstract, got, sizeof got);
	ck_assert_str_eq(got, "STOPPING=1");

	/* Refusals: nothing reaches the manager. */
	char long_state[NOTIFY_MESSAGE_MAX + 2];
	memset(long_state, 'x', sizeof long_state - 1);
	long_state[sizeof long_state - 1] = 0;
	ck_assert_int_eq(notify_send(long_state), DIRAUTH_ERR_BOUNDS);
	receive(in_abstract, got, sizeof got);
	ck_assert_str_eq(got, "");
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", "relative/notify.sock", 1), 0);
	ck_assert_int_eq(notify_send("READY=1"), DIRAUTH_ERR_CONFIG);
	snprintf(path, sizeof path, "%s/nobody-listens.sock", dir);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", path, 1), 0);
	ck_assert_int_eq(notify_send("READY=1"), DIRAUTH_ERR_IO);
	/* Without the variable (a daemon not started by a manager): nothing to do, no failure. */
	ck_assert_int_eq(unsetenv("NOTIFY_SOCKET"), 0);
	ck_assert_int_eq(notify_send("READY=1"), 0);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", "", 1), 0);
	ck_assert_int_eq(notify_send("READY=1"), 0);
	unsetenv("NOTIFY_SOCKET");
	close(at_path);
	close(in_abstract);
	test_remove_tree(dir);
}
END_TEST

static unsigned long long monotonic_usec(void)
{
	struct timespec now;
	ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &now), 0);
	return (unsigned long long)now.tv_sec * 1000000ull + (unsigned long long)now.tv_nsec / 1000ull;
}

START_TEST(test_a_reload_says_when_it_began)
{
	char dir[256], path[300], got[NOTIFY_MESSAGE_MAX + 1];
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/notify.sock", dir);
	int manager = manager_socket(path);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", path, 1), 0);
	unsigned long long before = monotonic_usec();
	ck_assert_int_eq(notify_reloading("reloading the configuration"), 0);
	unsigned long long after = monotonic_usec();
	receive(manager, got, sizeof got);
	unsigned long long usec = 0;
	int consumed = 0;
	ck_assert_int_eq(sscanf(got, "RELOADING=1\nMONOTONIC_USEC=%llu\n%n", &usec, &consumed), 1);
	ck_assert_int_gt(consumed, 0);
	ck_assert_str_eq(got + consumed, "STATUS=reloading the configuration");
	ck_assert(usec >= before && usec <= after);
	/* A status too long for one message: refused, nothing sent. */
	char long_status[NOTIFY_MESSAGE_MAX];
	memset(long_status, 'x', sizeof long_status - 1);
	long_status[sizeof long_status - 1] = 0;
	ck_assert_int_eq(notify_reloading(long_status), DIRAUTH_ERR_BOUNDS);
	receive(manager, got, sizeof got);
	ck_assert_str_eq(got, "");
	/* Without the variable: nothing to do, no failure. */
	unsetenv("NOTIFY_SOCKET");
	ck_assert_int_eq(notify_reloading("reloading"), 0);
	close(manager);
	test_remove_tree(dir);
}
END_TEST

static Suite *notify_suite(void)
{
	Suite *suite = suite_create("notify");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_told_at_a_path_and_in_the_abstract_namespace);
	tcase_add_test(tc, test_a_reload_says_when_it_began);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(notify_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
