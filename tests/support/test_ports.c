/*
 * test_ports.c: ports reserved outside the ephemeral range (test_ports.h).
 *
 * The lock file is opened once per process (a fork's child opens its own: POSIX record locks are
 * not inherited) and never closed, since closing any descriptor of it would drop every lock the
 * process holds. Record locks do not conflict within one process, so the ports a process took
 * are also kept in a list here; a process takes a few dozen at most.
 */
#include "test_ports.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
	PORTS_LOWEST = 10240,  /* above the well-known and most registered services' ports */
	PORTS_TAKEN_MAX = 512, /* reservations one process may hold */
	PORTS_SPAN_MIN = 1024, /* the fewest ports worth searching */
};

static pthread_mutex_t ports_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t ports_owner; /* the process that opened ports_fd */
static int ports_fd = -1; /* the lock file, opened by ports_owner */
static unsigned ports_taken[PORTS_TAKEN_MAX];
static size_t ports_taken_count;
static unsigned ports_next; /* where the search goes on, from a start of ports_owner's own */
static bool ports_seeded;

/* The ports to hand out, [*lowest, *lowest + *span): from PORTS_LOWEST up to the kernel's
 * ephemeral range, or, where that range begins too low (some containers give it nearly all
 * ports), above it. false when neither leaves PORTS_SPAN_MIN ports. */
static bool port_range(unsigned *lowest, unsigned *span)
{
	unsigned low = 32768, high = 60999;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (f) {
		if (fscanf(f, "%u %u", &low, &high) != 2 || low > high || high > 65535) {
			low = 32768;
			high = 60999;
		}
		fclose(f);
	}
	if (low >= PORTS_LOWEST + PORTS_SPAN_MIN) {
		*lowest = PORTS_LOWEST;
		*span = low - PORTS_LOWEST;
		return true;
	}
	if (65535 - high >= PORTS_SPAN_MIN) {
		*lowest = high + 1;
		*span = 65535 - high;
		return true;
	}
	return false;
}

/* Opens this process's descriptor of the lock file; false when it cannot. */
static bool lock_file_open(void)
{
	pid_t self = getpid();
	if (ports_fd >= 0 && ports_owner == self)
		return true;
	if (ports_fd >= 0)
		close(ports_fd); /* the parent's: its locks are the parent's, not this process's */
	ports_taken_count = 0;
	char path[64];
	snprintf(path, sizeof path, "/tmp/dirauth-test-ports-%u.lock", (unsigned)getuid());
	/* Not through a link, and only a file of this user: another user's could hold locks for ever. */
	ports_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	struct stat st;
	if (ports_fd >= 0 && (fstat(ports_fd, &st) != 0 || st.st_uid != getuid())) {
		close(ports_fd);
		ports_fd = -1;
	}
	ports_owner = self;
	ports_seeded = false;
	return ports_fd >= 0;
}

static bool taken_here(unsigned port)
{
	for (size_t i = 0; i < ports_taken_count; i++)
		if (ports_taken[i] == port)
			return true;
	return false;
}

/* Locks port's byte of the lock file; false when another process holds it. */
static bool lock_port(unsigned port)
{
	struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = port, .l_len = 1};
	return fcntl(ports_fd, F_SETLK, &lock) == 0;
}

static void unlock_port(unsigned port)
{
	struct flock lock = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = port, .l_len = 1};
	(void)fcntl(ports_fd, F_SETLK, &lock);
}

/* Whether a listener could bind port now, as dirauthd binds (SO_REUSEADDR). */
static bool bindable(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	int one = 1;
	struct sockaddr_in addr;
	memset(&addr, 0, sizeof addr);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t)port);
	bool ok = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
	          bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
	close(fd);
	return ok;
}

/* The first port from offset start (within span, from lowest) that this process can take;
 * 0 when none. Called with ports_lock held and the lock file open. */
static unsigned search(unsigned lowest, unsigned span, unsigned start, unsigned *after)
{
	if (ports_taken_count == PORTS_TAKEN_MAX)
		return 0;
	for (unsigned tried = 0; tried < span; tried++) {
		unsigned port = lowest + (start + tried) % span;
		if (taken_here(port) || !lock_port(port))
			continue;
		if (!bindable(port)) {
			unlock_port(port);
			continue;
		}
		ports_taken[ports_taken_count++] = port;
		*after = (start + tried + 1) % span;
		return port;
	}
	return 0;
}

/* Reserves from first (a port; taken into the range), or from this process's own search when
 * own. */
static unsigned reserve(bool own, unsigned first)
{
	unsigned lowest, span, found = 0, after = 0;
	if (!port_range(&lowest, &span))
		return 0;
	pthread_mutex_lock(&ports_lock);
	if (lock_file_open()) {
		if (own && !ports_seeded) {
			/* Processes started together begin their searches apart. */
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			ports_next =
			    (unsigned)((unsigned long)getpid() * 7919u + (unsigned long)now.tv_nsec) % span;
			ports_seeded = true;
		}
		unsigned start = own ? ports_next : (first >= lowest ? (first - lowest) % span : 0);
		found = search(lowest, span, start, &after);
		if (found && own)
			ports_next = after;
	}
	pthread_mutex_unlock(&ports_lock);
	return found;
}

unsigned test_ports_reserve(void)
{
	return reserve(true, 0);
}

unsigned test_ports_reserve_at(unsigned first)
{
	return reserve(false, first);
}
