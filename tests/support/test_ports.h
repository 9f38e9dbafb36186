/*
 * test_ports.h: loopback ports for the daemons the tests and benchmarks start, handed out so
 * that no other process takes one between its choice and the daemon's bind.
 *
 * A port asked of the kernel (bind to port 0, then close) is free a moment ago and nothing more:
 * until the daemon binds it, the kernel may give it to any other socket, an outgoing connection's
 * or another test's daemon, and a test that then polls "its" daemon talks to a stranger. These
 * ports come from below the kernel's ephemeral range (ip_local_port_range), which neither bind to
 * port 0 nor connect ever uses (from above it where it begins below 11264), and each is held for the life of
 * the process that took it by a record lock on one byte of a shared lock file
 * (/tmp/dirauth-test-ports-<uid>.lock), so that two test processes running at once never take the same one. A
 * port something is listening on is skipped. The lock goes with the process: nothing is left to clean up.
 *
 * Needs nothing from Check, so that bench/harness.c uses it too.
 */
#ifndef DIRAUTH_TEST_PORTS_H
#define DIRAUTH_TEST_PORTS_H

/* A TCP port on 127.0.0.1 that nothing listens on now and no other process of this user takes
 * through this function while the caller's process lives; 0 when none can be found. Safe to call
 * from several threads; a child forked while another thread was in it must exec before calling it
 * (the child inherits the lock the other thread held). */
unsigned test_ports_reserve(void);

/* The same, searching from first (taken into the range) instead of from where this process's
 * own search is: for the tests of this function, which make two processes look for the same
 * ports. */
unsigned test_ports_reserve_at(unsigned first);

#endif
