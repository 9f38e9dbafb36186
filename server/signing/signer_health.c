/*
 * signer_health.c: the cached answer to "can the signer sign for this authority now?".
 *
 * The query itself runs outside the tracker's lock (the client serialises calls and bounds them
 * with its own timeout), so a slow signer delays only the callers that asked, and two callers
 * that find the cache stale at the same moment may both query: harmless, GET_KEYS changes
 * nothing.
 */
#include "server/signing/signer_health.h"

#include "schema/certificate.h"
#include "base/error.h"
#include "schema/note.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct signer_health {
	struct signer_client *client;
	const struct clock *clock;
	char authority_name[NOTE_NAME_MAX + 1];
	pthread_mutex_t lock; /* guards the fields below */
	bool known;           /* a result is cached */
	int64_t checked_at;   /* monotonic ms of the cached result */
	int result;
	char detail[SIGNER_HEALTH_DETAIL_MAX];
	size_t certificate_count; /* of the last bundle parsed */
	struct signer_health_certificate certificates[CERTIFICATE_BUNDLE_MAX];
};

static int64_t monotonic_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

int signer_health_create(struct signer_client *client, const char *authority_name, const struct clock *clock,
                         struct signer_health **out)
{
	*out = NULL;
	struct signer_health *health = calloc(1, sizeof *health);
	if (!health)
		return DIRAUTH_ERR_NOMEM;
	health->client = client;
	health->clock = clock;
	snprintf(health->authority_name, sizeof health->authority_name, "%s", authority_name);
	if (pthread_mutex_init(&health->lock, NULL) != 0) {
		free(health);
		return DIRAUTH_ERR_NOMEM;
	}
	*out = health;
	return 0;
}

void signer_health_free(struct signer_health *health)
{
	if (!health)
		return;
	pthread_mutex_destroy(&health->lock);
	free(health);
}

static void remember(struct signer_health *health, int result, const char *detail)
{
	pthread_mutex_lock(&health->lock);
	health->known = true;
	health->checked_at = monotonic_ms();
	health->result = result;
	snprintf(health->detail, sizeof health->detail, "%s", detail ? detail : "");
	pthread_mutex_unlock(&health->lock);
}

/* Keeps the not-after of each certificate of a bundle the signer served, for the metrics. */
static void remember_certificates(struct signer_health *health,
                                  const struct certificate_bundle_entry *entries, size_t count)
{
	struct signer_health_certificate kept[CERTIFICATE_BUNDLE_MAX];
	size_t n = 0;
	for (size_t e = 0; e < count && e < CERTIFICATE_BUNDLE_MAX; e++) {
		struct certificate certificate;
		if (certificate_parse_signed(entries[e].note, entries[e].note_len, &certificate) != 0)
			continue;
		kept[n].signing_key_id = certificate.signing_key.key_id;
		kept[n].valid_until = certificate.valid_until;
		n++;
	}
	pthread_mutex_lock(&health->lock);
	memcpy(health->certificates, kept, n * sizeof kept[0]);
	health->certificate_count = n;
	pthread_mutex_unlock(&health->lock);
}

/* The name of the "signing-key <verifier key>" line of a GET_KEYS payload. */
static int signing_key_name(const struct buffer *payload, struct note_verifier *key)
{
	static const char prefix[] = "signing-key ";
	const char *p = (const char *)payload->data, *end = p + payload->len;
	while (p && p < end) {
		const char *line_end = memchr(p, '\n', (size_t)(end - p));
		size_t line_len = line_end ? (size_t)(line_end - p) : (size_t)(end - p);
		if (line_len > sizeof prefix - 1 && memcmp(p, prefix, sizeof prefix - 1) == 0)
			return note_verifier_parse(p + sizeof prefix - 1, line_len - (sizeof prefix - 1),
			                           key);
		p = line_end ? line_end + 1 : NULL;
	}
	return DIRAUTH_ERR_NOT_FOUND;
}

/* Asks the signer and judges its answers; sentence gets the reason of a failure. */
static int ask_signer(struct signer_health *health, char *sentence, size_t cap)
{
	struct buffer keys, bundle;
	struct note_verifier key;
	struct certificate certificate;
	struct certificate_bundle_entry *entries = NULL;
	char why[SIGNER_DETAIL_MAX + 1];
	size_t count = 0;
	uint64_t now = 0;
	buffer_init(&keys);
	buffer_init(&bundle);
	sentence[0] = 0;
	int rc = signer_client_query(health->client, SIGNER_OP_GET_KEYS, NULL, 0, &keys, why, sizeof why);
	if (rc == 0)
		rc = signer_client_query(health->client, SIGNER_OP_GET_CERTIFICATES, NULL, 0, &bundle, why,
		                         sizeof why);
	if (rc) {
		snprintf(sentence, cap, "signer unreachable: %s", why[0] ? why : dirauth_strerror(rc));
		rc = DIRAUTH_ERR_UNAVAILABLE;
		goto cleanup;
	}
	if (signing_key_name(&keys, &key) != 0) {
		snprintf(sentence, cap, "signer answered without a valid signing key");
		rc = DIRAUTH_ERR_UNAVAILABLE;
		goto cleanup;
	}
	if (strcmp(key.name, health->authority_name) != 0) {
		snprintf(sentence, cap, "signer's signing key is named '%s', not authority.name '%s'",
		         key.name, health->authority_name);
		rc = DIRAUTH_ERR_MISMATCH;
		goto cleanup;
	}
	entries = calloc(CERTIFICATE_BUNDLE_MAX, sizeof *entries);
	if (!entries) {
		snprintf(sentence, cap, "signer check: out of memory");
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	if (certificate_bundle_parse(bundle.data, bundle.len, entries, &count) == 0)
		remember_certificates(health, entries, count);
	if (count == 0 || certificate_parse_signed(entries[0].note, entries[0].note_len, &certificate) != 0) {
		snprintf(sentence, cap, "signer serves no valid certificate");
		rc = DIRAUTH_ERR_UNAVAILABLE;
		goto cleanup;
	}
	if (!note_verifier_equal(&certificate.signing_key, &key)) {
		snprintf(sentence, cap, "signer's first certificate is not for its signing key");
		rc = DIRAUTH_ERR_MISMATCH;
		goto cleanup;
	}
	if (clock_now(health->clock, &now) != 0) {
		snprintf(sentence, cap, "signer's certificate cannot be checked: the clock cannot be read");
		rc = DIRAUTH_ERR_STALE;
		goto cleanup;
	}
	if (now < certificate.valid_after || now >= certificate.valid_until) {
		snprintf(sentence, cap, "signer's certificate is valid from %llu until %llu, not now (%llu)",
		         (unsigned long long)certificate.valid_after,
		         (unsigned long long)certificate.valid_until, (unsigned long long)now);
		rc = DIRAUTH_ERR_STALE;
		goto cleanup;
	}
	rc = 0;
cleanup:
	free(entries);
	buffer_free(&keys);
	buffer_free(&bundle);
	return rc;
}

int signer_health_check(struct signer_health *health, char *detail, size_t detail_cap)
{
	char sentence[SIGNER_HEALTH_DETAIL_MAX];
	pthread_mutex_lock(&health->lock);
	if (health->known && monotonic_ms() - health->checked_at < SIGNER_HEALTH_CACHE_MS) {
		int result = health->result;
		if (detail && detail_cap)
			snprintf(detail, detail_cap, "%s", health->detail);
		pthread_mutex_unlock(&health->lock);
		return result;
	}
	pthread_mutex_unlock(&health->lock);
	int rc = ask_signer(health, sentence, sizeof sentence);
	remember(health, rc, sentence);
	if (detail && detail_cap)
		snprintf(detail, detail_cap, "%s", sentence);
	return rc;
}

void signer_health_note(struct signer_health *health, int rc, const char *detail)
{
	if (!health)
		return;
	if (rc == 0) {
		/* A signature came back, so the signer is up; whether its key is the authority's was
		 * established by the check that let this call through. */
		pthread_mutex_lock(&health->lock);
		bool was_up = health->known && health->result == 0;
		pthread_mutex_unlock(&health->lock);
		if (was_up)
			remember(health, 0, "");
		return;
	}
	if (rc != DIRAUTH_ERR_UNAVAILABLE)
		return;
	char sentence[SIGNER_HEALTH_DETAIL_MAX];
	snprintf(sentence, sizeof sentence, "signer unreachable: %s",
	         detail && detail[0] ? detail : "no answer");
	remember(health, DIRAUTH_ERR_UNAVAILABLE, sentence);
}

void signer_health_statistics(struct signer_health *health, struct signer_health_statistics *out)
{
	memset(out, 0, sizeof *out);
	int rc = signer_health_check(health, NULL, 0);
	out->ready = rc == 0;
	out->reachable = rc != DIRAUTH_ERR_UNAVAILABLE;
	pthread_mutex_lock(&health->lock);
	out->certificate_count = health->certificate_count;
	memcpy(out->certificates, health->certificates,
	       health->certificate_count * sizeof health->certificates[0]);
	pthread_mutex_unlock(&health->lock);
}
