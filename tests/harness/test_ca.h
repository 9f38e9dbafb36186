/*
 * test_ca.h: a certificate authority of a test's own, for servers on loopback that speak TLS.
 *
 * The tests put the shipped nginx configuration in front of each authority (nginx_front.h); its
 * clients (the other authorities' dirauthd, curl in the test) verify the server's certificate as
 * in production, against this CA's certificate instead of the system's store. Keys are ECDSA
 * P-256, certificates X.509 v3 signed with SHA-256, valid from a day before the real time of
 * their making for 30 days (TLS checks the real clock, whatever clock the daemons read).
 *
 * Every function returns 0, or DIRAUTH_ERR_CRYPTO (OpenSSL failed), DIRAUTH_ERR_IO (a file
 * cannot be written), DIRAUTH_ERR_NOMEM.
 */
#ifndef DIRAUTH_TESTS_HARNESS_TEST_CA_H
#define DIRAUTH_TESTS_HARNESS_TEST_CA_H

struct test_ca;

/* A new CA: a fresh key and a self-signed certificate for "CN=<name>" (CA:TRUE, keyCertSign).
 * Free it with test_ca_free. */
int test_ca_new(const char *name, struct test_ca **out);

/* Writes the CA's certificate, PEM, to path (mode 0644): the file clients trust. */
int test_ca_write(const struct test_ca *ca, const char *path);

/* Issues a server certificate for dns_name: subject CN=dns_name, subjectAltName DNS:dns_name and
 * IP:127.0.0.1, serverAuth. Writes its fresh key to key_path (PEM, mode 0600) and the
 * certificate followed by the CA's (the full chain, PEM, mode 0644) to chain_path. */
int test_ca_issue(const struct test_ca *ca, const char *dns_name, const char *chain_path,
                  const char *key_path);

/* Frees the CA (its key wiped). Accepts NULL. */
void test_ca_free(struct test_ca *ca);

#endif
