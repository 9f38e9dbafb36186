/*
 * nginx_front.h: the shipped TLS proxy configuration (deploy/nginx/dirauthd-proxy.conf) in front
 * of one authority of a test, so that tests and benchmarks run the protocol through it.
 *
 * The configuration is derived from the shipped file by substituting only what a deployment
 * substitutes there: the listen ports (on 127.0.0.1: the TLS port for the "ssl" listen, a plain
 * port for the redirect; the IPv6 listens are left out, as a test listens on loopback only),
 * server_name, ssl_certificate and ssl_certificate_key, the upstream's port, and the error_log
 * path (its level kept). Every other line is the shipped one, so a change to it is what the test
 * runs. A line expected to be substituted that the shipped file no longer has makes the
 * derivation fail, instead of the test running a configuration that is not the shipped one.
 *
 * Around it, nginx.conf holds what the Debian package's main file would, and what a test needs
 * to run one of its own: daemon off, one worker (run as nobody when the test runs as root:
 * test_nginx_user), the pid file, the temporary paths and the start-up error log in
 * the front's directory, and the derived file included in the http context, with gzip on there
 * as Debian's nginx.conf has it (the shipped server turns it off).
 *
 * The directory layout (dir is the front's own; nginx makes the temp-* directories):
 *   dir/nginx.conf             the main file
 *   dir/dirauthd-proxy.conf    the derived server configuration
 *   dir/error.log              nginx's own log; dir/dirauthd-proxy.error.log the server's
 *   dir/nginx.pid, dir/temp-*
 * Run by root, the workers run as nobody and must reach dir and what is in it: dir is made
 * world-readable (0755), and so must be every directory above it.
 */
#ifndef DIRAUTH_TESTS_HARNESS_NGINX_FRONT_H
#define DIRAUTH_TESTS_HARNESS_NGINX_FRONT_H

#include <limits.h>

#define NGINX_FRONT_SHIPPED "deploy/nginx/dirauthd-proxy.conf" /* from the source tree's root */

struct nginx_front_options {
	const char *nginx;           /* the binary */
	const char *shipped;         /* the path of the shipped dirauthd-proxy.conf */
	const char *dir;             /* the front's directory: created (mode 0755) if missing */
	const char *server_name;     /* the authority's DNS name */
	const char *certificate;     /* PEM full chain */
	const char *certificate_key; /* PEM key */
	unsigned upstream_port;      /* dirauthd on 127.0.0.1 */
	unsigned tls_port;           /* on 127.0.0.1 */
	unsigned http_port;          /* on 127.0.0.1: the shipped redirect to https */
};

/* The command line that runs the front in the foreground: argv[0] the binary, then -p, -e, -c
 * with their paths; NULL-terminated. The strings live in the struct. */
struct nginx_front_command {
	char program[PATH_MAX];
	char prefix[PATH_MAX];
	char error_log[PATH_MAX];
	char config[PATH_MAX];
	char *argv[8];
};

/* Writes dir/nginx.conf and dir/dirauthd-proxy.conf and fills *command. Returns 0;
 * DIRAUTH_ERR_IO (the shipped file cannot be read, a file cannot be written, nginx -V cannot be
 * run); DIRAUTH_ERR_SYNTAX (the shipped file lacks a directive the derivation substitutes: its
 * message on standard error names it); DIRAUTH_ERR_NOMEM. */
int nginx_front_write(const struct nginx_front_options *options, struct nginx_front_command *command);

#endif
