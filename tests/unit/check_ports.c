/*
 * check_ports.c: the loopback ports the tests give their daemons (tests/support/test_ports.h).
 *
 * A daemon's port must not be one the kernel hands out for anything else, nor one another test
 * process was given: every port lies outside the ephemeral range, two processes looking for ports
 * from the same one at once never get the same, and a port another process listens on is
 * passed over.
 */
#include "test_ports.h"
#include "test_support.h"

#include <check.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define PORTS_EACH 64

/* The ports test_ports.h hands out on this machine: below the ephemeral range, or above it where
 * it begins below 11264. */
static void handed_out(unsigned *lowest, unsigned *end)
{
	unsigned low = 0, high = 0;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%u %u", &low, &high), 2);
	fclose(f);
	*lowest = low >= 10240 + 1024 ? 10240 : high + 1;
	*end = low >= 10240 + 1024 ? low : 65536;
}

static void reserve_ports(unsigned *ports, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		ports[i] = test_ports_reserve();
		ck_assert_uint_ne(ports[i], 0);
	}
}

START_TEST(test_ports_are_distinct_and_outside_the_ephemeral_range)
{
	unsigned ports[PORTS_EACH], lowest, end;
	handed_out(&lowest, &end);
	reserve_ports(ports, PORTS_EACH);
	for (size_t i = 0; i < PORTS_EACH; i++) {
		ck_assert_uint_ge(ports[i], lowest);
		ck_assert_uint_lt(ports[i], end);
		for (size_t j = 0; j < i; j++)
			ck_assert_uint_ne(ports[i], ports[j]);
	}
}
END_TEST

/* count ports, each the first from first that this process can take. */
static void reserve_from(unsigned first, unsigned *ports, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		ports[i] = test_ports_reserve_at(first);
		ck_assert_uint_ne(ports[i], 0);
	}
}

START_TEST(test_two_processes_never_share_a_port)
{
	/* Both look from the same port: only the locks keep them apart. */
	unsigned lowest, end;
	handed_out(&lowest, &end);
	const unsigned first = lowest + 100;
	int out[2], hold[2]; /* the child's ports to the parent; the parent's "done" to the child */
	ck_assert_int_eq(pipe(out), 0);
	ck_assert_int_eq(pipe(hold), 0);
	unsigned mine[PORTS_EACH / 2];
	reserve_from(first, mine, PORTS_EACH / 2); /* before the fork: the child must not get them */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(out[0]);
		close(hold[1]);
		unsigned theirs[PORTS_EACH];
		for (size_t i = 0; i < PORTS_EACH; i++)
			theirs[i] = test_ports_reserve_at(first);
		ssize_t n = write(out[1], theirs, sizeof theirs);
		char done;
		while (read(hold[0], &done, 1) > 0) /* its ports stay held until the parent is done */
			;
		_exit(n == (ssize_t)sizeof theirs ? 0 : 1);
	}
	close(out[1]);
	close(hold[0]);
	unsigned theirs[PORTS_EACH];
	size_t got = 0;
	while (got < sizeof theirs) {
		ssize_t n = read(out[0], (char *)theirs + got, sizeof theirs - got);
		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	unsigned more[PORTS_EACH / 2]; /* taken while the child holds its ports */
	reserve_from(first, more, PORTS_EACH / 2);
	close(hold[1]);
	close(out[0]);
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (size_t i = 0; i < PORTS_EACH; i++) {
		ck_assert_uint_ne(theirs[i], 0);
		for (size_t j = 0; j < PORTS_EACH / 2; j++) {
			ck_assert_uint_ne(theirs[i], mine[j]);
			ck_assert_uint_ne(theirs[i], more[j]);
		}
	}
}
END_TEST

/* Whether another test process holds port's lock: the port would then be passed over for that,
 * not for its listener. */
static int locked_elsewhere(unsigned port)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/dirauth-test-ports-%u.lock", (unsigned)getuid());
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0; /* no lock file: nobody holds anything */
	struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = port, .l_len = 1};
	int held = fcntl(fd, F_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
	close(fd);
	return held;
}

START_TEST(test_a_port_in_use_is_skipped)
{
	/* A listener of another process on a port nobody reserved. */
	unsigned lowest, end;
	handed_out(&lowest, &end);
	const unsigned first = lowest + (end - lowest) / 2;
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		unsigned port = 0;
		for (unsigned p = first; p < first + 1000 && !port; p++) {
			int fd = socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in addr = {.sin_family = AF_INET,
			                           .sin_port = htons((uint16_t)p),
			                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
			if (fd >= 0 && !locked_elsewhere(p) &&
			    bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(fd, 1) == 0)
				port = p; /* fd stays open, listening, until the child exits */
			else if (fd >= 0)
				close(fd);
		}
		ssize_t n = write(fds[1], &port, sizeof port);
		pause();
		_exit(n == sizeof port ? 0 : 1);
	}
	close(fds[1]);
	unsigned listening = 0;
	ck_assert_int_eq(read(fds[0], &listening, sizeof listening), (ssize_t)sizeof listening);
	close(fds[0]);
	unsigned got = listening ? test_ports_reserve_at(listening) : 0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_uint_ne(listening, 0);
	ck_assert_uint_ne(got, 0);
	ck_assert_uint_ne(got, listening);
}
END_TEST

static Suite *ports_suite(void)
{
	Suite *suite = suite_create("ports");
	TCase *tc = tcase_create("reserve");
	tcase_add_test(tc, test_ports_are_distinct_and_outside_the_ephemeral_range);
	tcase_add_test(tc, test_two_processes_never_share_a_port);
	tcase_add_test(tc, test_a_port_in_use_is_skipped);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(ports_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
