/*
 * test_ca.c: a test's own certificate authority (test_ca.h), on OpenSSL's EVP and X509 calls.
 */
#include "tests/harness/test_ca.h"

#include "base/error.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VALID_BEFORE_SECONDS (24L * 3600)      /* for a machine whose clock is a little behind */
#define VALID_SECONDS        (30L * 24 * 3600) /* longer than any test or benchmark run */

struct test_ca {
	EVP_PKEY *key;
	X509 *certificate;
};

static EVP_PKEY *new_key(void)
{
	return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* Adds one X.509 v3 extension given in OpenSSL's configuration syntax. */
static int add_extension(X509 *certificate, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX context;
	X509V3_set_ctx_nodb(&context);
	X509V3_set_ctx(&context, issuer, certificate, NULL, NULL, 0);
	X509_EXTENSION *extension = X509V3_EXT_conf_nid(NULL, &context, nid, value);
	if (!extension)
		return DIRAUTH_ERR_CRYPTO;
	int ok = X509_add_ext(certificate, extension, -1);
	X509_EXTENSION_free(extension);
	return ok ? 0 : DIRAUTH_ERR_CRYPTO;
}

/* A certificate for key, subject CN=common_name, with a random serial and the validity of
 * test_ca.h, not yet signed. */
static X509 *new_certificate(EVP_PKEY *key, const char *common_name)
{
	X509 *certificate = X509_new();
	ASN1_INTEGER *serial = ASN1_INTEGER_new();
	BIGNUM *random = BN_new();
	int ok = certificate && serial && random && X509_set_version(certificate, X509_VERSION_3) &&
	         BN_rand(random, 64, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) &&
	         BN_to_ASN1_INTEGER(random, serial) && X509_set_serialNumber(certificate, serial) &&
	         X509_gmtime_adj(X509_getm_notBefore(certificate), -VALID_BEFORE_SECONDS) &&
	         X509_gmtime_adj(X509_getm_notAfter(certificate), VALID_SECONDS) &&
	         X509_set_pubkey(certificate, key) &&
	         X509_NAME_add_entry_by_txt(X509_get_subject_name(certificate), "CN", MBSTRING_UTF8,
	                                    (const unsigned char *)common_name, -1, -1, 0);
	BN_free(random);
	ASN1_INTEGER_free(serial);
	if (!ok) {
		X509_free(certificate);
		return NULL;
	}
	return certificate;
}

int test_ca_new(const char *name, struct test_ca **out)
{
	*out = NULL;
	struct test_ca *ca = calloc(1, sizeof *ca);
	if (!ca)
		return DIRAUTH_ERR_NOMEM;
	int rc = DIRAUTH_ERR_CRYPTO;
	ca->key = new_key();
	if (!ca->key || !(ca->certificate = new_certificate(ca->key, name)))
		goto fail;
	if (!X509_set_issuer_name(ca->certificate, X509_get_subject_name(ca->certificate)) ||
	    add_extension(ca->certificate, ca->certificate, NID_basic_constraints, "critical,CA:TRUE") ||
	    add_extension(ca->certificate, ca->certificate, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    add_extension(ca->certificate, ca->certificate, NID_subject_key_identifier, "hash") ||
	    !X509_sign(ca->certificate, ca->key, EVP_sha256()))
		goto fail;
	*out = ca;
	return 0;
fail:
	test_ca_free(ca);
	return rc;
}

/* Opens path for writing with mode (created or truncated, the mode set even if it existed). */
static FILE *open_for_writing(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return NULL;
	if (fchmod(fd, mode) != 0) {
		close(fd);
		return NULL;
	}
	FILE *file = fdopen(fd, "w");
	if (!file)
		close(fd);
	return file;
}

/* Writes the certificates (count of them, in order) to path as PEM. */
static int write_certificates(const char *path, X509 *const *certificates, size_t count)
{
	FILE *file = open_for_writing(path, 0644);
	if (!file)
		return DIRAUTH_ERR_IO;
	int ok = 1;
	for (size_t i = 0; i < count && ok; i++)
		ok = PEM_write_X509(file, certificates[i]);
	if (fclose(file) != 0)
		return DIRAUTH_ERR_IO;
	return ok ? 0 : DIRAUTH_ERR_CRYPTO;
}

int test_ca_write(const struct test_ca *ca, const char *path)
{
	X509 *const certificates[1] = {ca->certificate};
	return write_certificates(path, certificates, 1);
}

int test_ca_issue(const struct test_ca *ca, const char *dns_name, const char *chain_path,
                  const char *key_path)
{
	char names[512];
	int n = snprintf(names, sizeof names, "DNS:%s,IP:127.0.0.1", dns_name);
	if (n < 0 || (size_t)n >= sizeof names)
		return DIRAUTH_ERR_BOUNDS;
	int rc = DIRAUTH_ERR_CRYPTO;
	X509 *certificate = NULL;
	EVP_PKEY *key = new_key();
	if (!key || !(certificate = new_certificate(key, dns_name)))
		goto cleanup;
	if (!X509_set_issuer_name(certificate, X509_get_subject_name(ca->certificate)) ||
	    add_extension(certificate, ca->certificate, NID_basic_constraints, "critical,CA:FALSE") ||
	    add_extension(certificate, ca->certificate, NID_key_usage, "critical,digitalSignature") ||
	    add_extension(certificate, ca->certificate, NID_ext_key_usage, "serverAuth") ||
	    add_extension(certificate, ca->certificate, NID_subject_alt_name, names) ||
	    add_extension(certificate, ca->certificate, NID_authority_key_identifier, "keyid:always") ||
	    !X509_sign(certificate, ca->key, EVP_sha256()))
		goto cleanup;
	FILE *file = open_for_writing(key_path, 0600);
	if (!file) {
		rc = DIRAUTH_ERR_IO;
		goto cleanup;
	}
	int ok = PEM_write_PrivateKey(file, key, NULL, NULL, 0, NULL, NULL);
	if (fclose(file) != 0 || !ok) {
		rc = ok ? DIRAUTH_ERR_IO : DIRAUTH_ERR_CRYPTO;
		goto cleanup;
	}
	X509 *const chain[2] = {certificate, ca->certificate};
	rc = write_certificates(chain_path, chain, 2);
cleanup:
	X509_free(certificate);
	EVP_PKEY_free(key);
	return rc;
}

void test_ca_free(struct test_ca *ca)
{
	if (!ca)
		return;
	EVP_PKEY_free(ca->key); /* OpenSSL clears a private key's memory as it frees it */
	X509_free(ca->certificate);
	free(ca);
}
