/*
 * authority_set.c: the members' keyrings, their refreshes and the verdicts on their statements
 * (see authority_set.h).
 *
 * Two locks, never held together. The read-write lock guards only the ring pointers: a verdict
 * reads a ring under it, a refresh swaps in a ring it built outside it. The mutex guards the
 * bookkeeping of fetches (which member is being fetched, when each was fetched last, when on
 * demand), and its condition variable wakes the verifications waiting for a fetch to end. The
 * network is only ever touched with neither lock held.
 */
#include "server/peers/authority_set.h"

#include "base/error.h"
#include "verify/verify.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct member_state {
	char name[NOTE_NAME_MAX + 1];
	char pinned_by[NOTE_NAME_MAX + 40];
	struct note_verifier identity;
	int pinned;                       /* the configuration pins an identity */
	struct certificate_keyring *ring; /* owned; under set->rings */
	struct buffer bundle;             /* the bundle the ring was built from; under set->rings */
	/* Under set->mutex: */
	int fetching;
	int refreshed; /* refreshed_at holds the last periodic fetch */
	uint64_t refreshed_at;
	int demanded; /* demanded_at holds the last on-demand fetch */
	uint64_t demanded_at;
};

struct authority_set {
	size_t count;
	size_t self_index;
	size_t threshold;
	uint64_t refresh_seconds;
	const struct peer_client *client; /* borrowed; may be NULL */
	authority_set_own_source own_source;
	void *own_context;
	char cache_dir[PATH_MAX]; /* "": none */
	pthread_rwlock_t rings;
	pthread_mutex_t mutex;
	pthread_cond_t fetched;
	struct member_state members[CONFIG_MAX_MEMBERS];
};

static void set_detail(char *detail, size_t cap, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void set_detail(char *detail, size_t cap, const char *format, ...)
{
	va_list args;

	if (detail == NULL || cap == 0)
		return;
	va_start(args, format);
	vsnprintf(detail, cap, format, args);
	va_end(args);
}

/* Appends a "; "-separated phrase, truncating. */
static void append_detail(char *detail, size_t cap, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void append_detail(char *detail, size_t cap, const char *format, ...)
{
	size_t used;
	va_list args;

	if (detail == NULL || cap == 0)
		return;
	used = strnlen(detail, cap);
	if (used > 0 && used + 2 < cap) {
		memcpy(detail + used, "; ", 3);
		used += 2;
	}
	if (used + 1 >= cap)
		return;
	va_start(args, format);
	vsnprintf(detail + used, cap - used, format, args);
	va_end(args);
}

/* A new ring of member m's identity with the certificates of bundle (NULL: none). */
static int build_ring(const struct member_state *m, const uint8_t *bundle, size_t len,
                      struct certificate_keyring **out, char *detail, size_t cap)
{
	if (bundle == NULL)
		return verify_keyring_new(&m->identity, m->pinned ? 1 : 0, out, detail, cap);
	return verify_keyring_build(&m->identity, m->pinned ? 1 : 0, bundle, len, out, NULL, detail, cap);
}

static void swap_ring(struct authority_set *set, size_t index, struct certificate_keyring *ring,
                      struct buffer *bundle)
{
	struct certificate_keyring *old;
	struct buffer old_bundle;

	pthread_rwlock_wrlock(&set->rings);
	old = set->members[index].ring;
	set->members[index].ring = ring;
	old_bundle = set->members[index].bundle;
	set->members[index].bundle = *bundle;
	buffer_init(bundle);
	pthread_rwlock_unlock(&set->rings);
	verify_keyring_free(old);
	buffer_free(&old_bundle);
}

/* ---- the cache of peers' bundles ---- */

static int cache_path(const struct authority_set *set, size_t index, const char *suffix, char *path,
                      size_t cap)
{
	int n = snprintf(path, cap, "%s/%s.certificates%s", set->cache_dir, set->members[index].name, suffix);
	return n > 0 && (size_t)n < cap ? 0 : DIRAUTH_ERR_BOUNDS;
}

/* Member index's cached bundle into out, or an error (none, unreadable, too large). */
static int cache_read(const struct authority_set *set, size_t index, struct buffer *out)
{
	char path[PATH_MAX];
	uint8_t chunk[8192];
	int rc = cache_path(set, index, "", path, sizeof path);
	if (rc != 0)
		return rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? DIRAUTH_ERR_NOT_FOUND : DIRAUTH_ERR_IO;
	for (;;) {
		ssize_t got = read(fd, chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			rc = got < 0 ? DIRAUTH_ERR_IO : 0;
			break;
		}
		if (out->len + (size_t)got > AUTHORITY_SET_CACHE_MAX) {
			rc = DIRAUTH_ERR_BOUNDS;
			break;
		}
		if ((rc = buffer_append(out, chunk, (size_t)got)) != 0)
			break;
	}
	close(fd);
	return rc;
}

static int write_all(int fd, const uint8_t *data, size_t len)
{
	while (len > 0) {
		ssize_t wrote = write(fd, data, len);
		if (wrote < 0 && errno == EINTR)
			continue;
		if (wrote <= 0)
			return DIRAUTH_ERR_IO;
		data += wrote;
		len -= (size_t)wrote;
	}
	return 0;
}

/* Replaces member index's cached bundle by bundle, atomically and durably (a temporary file,
 * fsync, rename, fsync of the directory). A failure leaves the old file; the ring in memory is
 * what counts until the next start, so it is not reported. */
static void cache_write(const struct authority_set *set, size_t index, const uint8_t *bundle, size_t len)
{
	char path[PATH_MAX], temporary[PATH_MAX];
	if (cache_path(set, index, "", path, sizeof path) != 0 ||
	    cache_path(set, index, ".new", temporary, sizeof temporary) != 0)
		return;
	int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	int rc = write_all(fd, bundle, len);
	if (rc == 0 && fsync(fd) != 0)
		rc = DIRAUTH_ERR_IO;
	close(fd);
	if (rc != 0 || rename(temporary, path) != 0) {
		unlink(temporary);
		return;
	}
	int directory = open(set->cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (directory >= 0) {
		(void)fsync(directory);
		close(directory);
	}
}

/* Installs a bundle a peer served for member index, and keeps it in the cache when it differs
 * from the one installed before. */
static int install_fetched(struct authority_set *set, size_t index, const uint8_t *bundle, size_t len,
                           char *reason, size_t cap)
{
	pthread_rwlock_rdlock(&set->rings);
	const struct buffer *old = &set->members[index].bundle;
	int same = old->len == len && (len == 0 || memcmp(old->data, bundle, len) == 0);
	pthread_rwlock_unlock(&set->rings);
	int rc = authority_set_install(set, index, bundle, len, reason, cap);
	if (rc == 0 && !same && set->cache_dir[0] != '\0' && index != set->self_index)
		cache_write(set, index, bundle, len);
	return rc;
}

/* Installs each peer's cached bundle; those that cannot be read or built are left to a fetch. */
static void cache_load(struct authority_set *set)
{
	for (size_t i = 0; i < set->count; i++) {
		if (i == set->self_index || !set->members[i].pinned)
			continue;
		struct buffer bundle;
		char why[VERIFY_DETAIL_MAX];
		buffer_init(&bundle);
		if (cache_read(set, i, &bundle) == 0 && bundle.len > 0)
			(void)authority_set_install(set, i, bundle.data, bundle.len, why, sizeof why);
		buffer_free(&bundle);
	}
}

int authority_set_new(const struct config *config, const struct peer_client *client,
                      const uint8_t *own_certificates, size_t own_len,
                      const struct authority_set_options *options, struct authority_set **out, char *detail,
                      size_t cap)
{
	struct authority_set *set;
	int rc;

	*out = NULL;
	set_detail(detail, cap, "%s", "");
	if (config->member_count == 0 || config->member_count > CONFIG_MAX_MEMBERS ||
	    config->members == NULL || config->threshold == 0 || config->threshold > config->member_count ||
	    config->self_index >= config->member_count ||
	    (client != NULL && peer_client_member_count(client) != config->member_count)) {
		set_detail(detail, cap,
		           "the authority set is not a set of 1 to %d members with a threshold among them",
		           CONFIG_MAX_MEMBERS);
		return DIRAUTH_ERR_CONFIG;
	}
	set = calloc(1, sizeof(*set));
	if (set == NULL) {
		set_detail(detail, cap, "out of memory");
		return DIRAUTH_ERR_NOMEM;
	}
	set->count = config->member_count;
	set->self_index = config->self_index;
	set->threshold = config->threshold;
	set->client = client;
	set->refresh_seconds = AUTHORITY_SET_REFRESH_SECONDS;
	if (options != NULL) {
		if (options->refresh_seconds != 0)
			set->refresh_seconds = options->refresh_seconds;
		set->own_source = options->own_certificates;
		set->own_context = options->own_context;
		if (options->cache_dir != NULL &&
		    snprintf(set->cache_dir, sizeof set->cache_dir, "%s", options->cache_dir) >=
		        (int)sizeof set->cache_dir) {
			set_detail(detail, cap, "the certificate cache's directory: its path is too long");
			free(set);
			return DIRAUTH_ERR_CONFIG;
		}
	}
	pthread_rwlock_init(&set->rings, NULL);
	pthread_mutex_init(&set->mutex, NULL);
	pthread_cond_init(&set->fetched, NULL);
	for (size_t i = 0; i < set->count; i++) {
		struct member_state *m = &set->members[i];
		char why[VERIFY_DETAIL_MAX];

		snprintf(m->name, sizeof(m->name), "%s", config->members[i].name);
		snprintf(m->pinned_by, sizeof(m->pinned_by), "the authority set's pin for %s",
		         config->members[i].name);
		m->identity = config->members[i].identity;
		m->pinned = m->identity.type == NOTE_KEY_TYPE_ED25519;
		rc = build_ring(m, i == set->self_index ? own_certificates : NULL, own_len, &m->ring, why,
		                sizeof(why));
		if (rc != 0) {
			set_detail(detail, cap, "%s: %s", m->name, why);
			authority_set_free(set);
			return rc;
		}
	}
	if (set->cache_dir[0] != '\0')
		cache_load(set);
	*out = set;
	return 0;
}

void authority_set_free(struct authority_set *set)
{
	if (set == NULL)
		return;
	for (size_t i = 0; i < set->count; i++) {
		verify_keyring_free(set->members[i].ring);
		buffer_free(&set->members[i].bundle);
	}
	pthread_rwlock_destroy(&set->rings);
	pthread_mutex_destroy(&set->mutex);
	pthread_cond_destroy(&set->fetched);
	free(set);
}

size_t authority_set_member_count(const struct authority_set *set)
{
	return set->count;
}

size_t authority_set_threshold(const struct authority_set *set)
{
	return set->threshold;
}

size_t authority_set_self_index(const struct authority_set *set)
{
	return set->self_index;
}

const char *authority_set_member_name(const struct authority_set *set, size_t index)
{
	return index < set->count ? set->members[index].name : NULL;
}

int authority_set_member_by_name(const struct authority_set *set, const char *name, size_t *index)
{
	for (size_t i = 0; i < set->count; i++) {
		if (strcmp(set->members[i].name, name) == 0) {
			*index = i;
			return 0;
		}
	}
	return DIRAUTH_ERR_NOT_FOUND;
}

size_t authority_set_certificate_count(struct authority_set *set, size_t index)
{
	size_t count;

	if (index >= set->count)
		return 0;
	pthread_rwlock_rdlock(&set->rings);
	count = set->members[index].ring->certificate_count;
	pthread_rwlock_unlock(&set->rings);
	return count;
}

int authority_set_certificate_not_after(struct authority_set *set, size_t index, uint64_t *not_after)
{
	int rc = DIRAUTH_ERR_NOT_FOUND;

	*not_after = 0;
	if (index >= set->count)
		return rc;
	pthread_rwlock_rdlock(&set->rings);
	const struct certificate_keyring *ring = set->members[index].ring;
	for (size_t c = 0; ring != NULL && c < ring->certificate_count; c++)
		if (rc != 0 || ring->certificates[c].valid_until > *not_after) {
			*not_after = ring->certificates[c].valid_until;
			rc = 0;
		}
	pthread_rwlock_unlock(&set->rings);
	return rc;
}

int authority_set_install(struct authority_set *set, size_t index, const uint8_t *bundle, size_t len,
                          char *detail, size_t cap)
{
	struct certificate_keyring *ring = NULL;
	int rc;

	set_detail(detail, cap, "%s", "");
	if (index >= set->count) {
		set_detail(detail, cap, "no member %zu in the authority set", index);
		return DIRAUTH_ERR_NOT_FOUND;
	}
	rc = build_ring(&set->members[index], bundle != NULL ? bundle : (const uint8_t *)"", len, &ring,
	                detail, cap);
	if (rc != 0)
		return rc;
	struct buffer copy;
	buffer_init(&copy);
	if (len && (rc = buffer_append(&copy, bundle, len)) != 0) {
		verify_keyring_free(ring);
		set_detail(detail, cap, "out of memory");
		return rc;
	}
	swap_ring(set, index, ring, &copy);
	return 0;
}

/* Whether member index's bundle can be fetched at all. */
static int has_source(const struct authority_set *set, size_t index)
{
	return index == set->self_index ? set->own_source != NULL : set->client != NULL;
}

/* Fetches member index's bundle and installs it; reason (capacity cap) says why not. Called with
 * no lock held and the member marked fetching. */
static int fetch_and_install(struct authority_set *set, size_t index, char *reason, size_t cap)
{
	struct peer_answer answer;
	int rc;

	if (index == set->self_index) {
		struct buffer bundle;
		buffer_init(&bundle);
		rc = set->own_source(set->own_context, &bundle);
		if (rc != 0)
			set_detail(reason, cap, "its own certificates: %s", dirauth_strerror(rc));
		else
			rc = authority_set_install(set, index, bundle.data, bundle.len, reason, cap);
		buffer_free(&bundle);
		return rc;
	}
	peer_answer_init(&answer);
	rc = peer_fetch_certificates(set->client, index, &answer);
	if (rc == 0 && answer.status != 200) {
		set_detail(reason, cap, "%s", answer.reason);
		rc = DIRAUTH_ERR_UNAVAILABLE;
	} else if (rc != 0) {
		set_detail(reason, cap, "%s", answer.reason);
	} else {
		rc = install_fetched(set, index, answer.body.data, answer.body.len, reason, cap);
	}
	peer_answer_free(&answer);
	return rc;
}

/* Installs the bundle a broadcast brought for member index, or says why not. */
static int install_answer(struct authority_set *set, size_t index, const struct peer_answer *answer,
                          char *reason, size_t cap)
{
	if (answer->transport != PEER_TRANSPORT_ANSWERED) {
		set_detail(reason, cap, "%s: %s", peer_transport_name(answer->transport), answer->reason);
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	if (answer->status != 200) {
		set_detail(reason, cap, "%s", answer->reason[0] != '\0' ? answer->reason : "no certificates");
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	return install_fetched(set, index, answer->body.data, answer->body.len, reason, cap);
}

static int is_due(const struct authority_set *set, const struct member_state *m, uint64_t now)
{
	if (m->fetching)
		return 0;
	if (!m->refreshed || now < m->refreshed_at)
		return 1;
	return now - m->refreshed_at >= set->refresh_seconds;
}

int authority_set_refresh(struct authority_set *set, uint64_t now, char *detail, size_t cap)
{
	uint8_t due[CONFIG_MAX_MEMBERS] = {0};
	uint8_t targets[CONFIG_MAX_MEMBERS] = {0};
	struct peer_answer *answers = NULL;
	size_t peer_targets = 0;
	int failed = 0;
	int rc = 0;

	set_detail(detail, cap, "%s", "");
	pthread_mutex_lock(&set->mutex);
	for (size_t i = 0; i < set->count; i++) {
		struct member_state *m = &set->members[i];
		if (!has_source(set, i) || !is_due(set, m, now))
			continue;
		due[i] = 1;
		m->fetching = 1;
		m->refreshed = 1;
		m->refreshed_at = now;
		if (i != set->self_index) {
			targets[i] = 1;
			peer_targets++;
		}
	}
	pthread_mutex_unlock(&set->mutex);

	if (peer_targets > 0) {
		struct peers_broadcast_options options = {.targets = targets};
		struct peer_call call = {.operation = PEER_FETCH_CERTIFICATES};
		answers = calloc(set->count, sizeof(*answers));
		if (answers == NULL)
			rc = DIRAUTH_ERR_NOMEM;
		else
			rc = peers_broadcast(set->client, &call, &options, answers);
		if (rc != 0) {
			set_detail(detail, cap, "cannot fetch certificates: %s", dirauth_strerror(rc));
			rc = rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_UNAVAILABLE;
		}
	}
	for (size_t i = 0; i < set->count; i++) {
		char reason[PEER_REASON_MAX];
		int member_rc;

		if (!due[i])
			continue;
		if (i == set->self_index)
			member_rc = fetch_and_install(set, i, reason, sizeof(reason));
		else if (rc == 0)
			member_rc = install_answer(set, i, &answers[i], reason, sizeof(reason));
		else
			continue;
		if (member_rc != 0) {
			failed = 1;
			append_detail(detail, cap, "%s: %s", set->members[i].name, reason);
		}
	}
	if (answers != NULL)
		peer_answers_free(answers, set->count);
	free(answers);

	pthread_mutex_lock(&set->mutex);
	for (size_t i = 0; i < set->count; i++) {
		if (due[i])
			set->members[i].fetching = 0;
	}
	pthread_cond_broadcast(&set->fetched);
	pthread_mutex_unlock(&set->mutex);
	if (rc != 0)
		return rc;
	return failed ? DIRAUTH_ERR_UNAVAILABLE : 0;
}

/* Whether a certificate's window [valid-after, valid-until) holds every time from first to last. */
static int window_covers(const struct certificate *certificate, uint64_t first, uint64_t last)
{
	return certificate->valid_after <= first && last < certificate->valid_until;
}

/* verify_note with threshold 1 on member index's ring; and whether a signature names the member
 * with a key the ring certifies for no window holding at and now (*lacking). */
static int judge(struct authority_set *set, size_t index, const struct note *note, uint64_t at, uint64_t now,
                 struct verify_signers *signers, int *lacking, char *detail, size_t cap)
{
	const struct member_state *m = &set->members[index];
	uint64_t first = at < now ? at : now;
	uint64_t last = at < now ? now : at;
	struct verify_pins pins;
	int rc;

	*lacking = 0;
	pthread_rwlock_rdlock(&set->rings);
	pins.ring = m->ring;
	pins.threshold = 1;
	pins.pinned_by = m->pinned_by;
	rc = verify_note(&pins, note, at, now, signers, detail, cap);
	if (rc == DIRAUTH_ERR_UNKNOWN_KEY && m->pinned) {
		for (size_t s = 0; s < note->signature_count && !*lacking; s++) {
			const struct note_signature *signature = &note->signatures[s];
			int covered = 0;
			if (strcmp(signature->name, m->name) != 0 || signature->key_id == m->identity.key_id)
				continue;
			for (size_t c = 0; c < m->ring->certificate_count && !covered; c++) {
				const struct certificate *certificate = &m->ring->certificates[c];
				covered = certificate->signing_key.key_id == signature->key_id &&
				          window_covers(certificate, first, last);
			}
			*lacking = !covered;
		}
	}
	pthread_rwlock_unlock(&set->rings);
	return rc;
}

/* An on-demand fetch of member index at now, unless one was made less than
 * AUTHORITY_SET_ON_DEMAND_SECONDS ago; when a fetch of it is running, waits for that one instead.
 * Returns 1 when the ring may have changed (judge again), 0 when nothing was fetched. */
static int fetch_on_demand(struct authority_set *set, size_t index, uint64_t now)
{
	struct member_state *m = &set->members[index];
	char reason[PEER_REASON_MAX];

	if (!has_source(set, index))
		return 0;
	pthread_mutex_lock(&set->mutex);
	if (m->fetching) {
		while (m->fetching)
			pthread_cond_wait(&set->fetched, &set->mutex);
		pthread_mutex_unlock(&set->mutex);
		return 1;
	}
	if (m->demanded && now >= m->demanded_at && now - m->demanded_at < AUTHORITY_SET_ON_DEMAND_SECONDS) {
		pthread_mutex_unlock(&set->mutex);
		return 0;
	}
	m->demanded = 1;
	m->demanded_at = now;
	m->fetching = 1;
	pthread_mutex_unlock(&set->mutex);

	(void)fetch_and_install(set, index, reason, sizeof(reason));

	pthread_mutex_lock(&set->mutex);
	m->fetching = 0;
	pthread_cond_broadcast(&set->fetched);
	pthread_mutex_unlock(&set->mutex);
	return 1;
}

/* judge, and once more after an on-demand fetch when a signature names a key the ring lacks. */
static int judge_fresh(struct authority_set *set, size_t index, const struct note *note, uint64_t at,
                       uint64_t now, struct verify_signers *signers, char *detail, size_t cap)
{
	int lacking;
	int rc = judge(set, index, note, at, now, signers, &lacking, detail, cap);

	if (rc == DIRAUTH_ERR_UNKNOWN_KEY && lacking && fetch_on_demand(set, index, now))
		rc = judge(set, index, note, at, now, signers, &lacking, detail, cap);
	return rc;
}

int authority_set_verify(struct authority_set *set, size_t index, const struct note *note, uint64_t at,
                         uint64_t now, char *detail, size_t cap)
{
	struct verify_signers signers;

	if (index >= set->count) {
		set_detail(detail, cap, "no member %zu in the authority set", index);
		return DIRAUTH_ERR_NOT_FOUND;
	}
	return judge_fresh(set, index, note, at, now, &signers, detail, cap);
}

int authority_set_count_signers(struct authority_set *set, const struct note *note, uint64_t at, uint64_t now,
                                uint8_t *counted, size_t *count)
{
	struct verify_signers signers;
	int bad_signature = 0;

	*count = 0;
	for (size_t i = 0; i < set->count; i++) {
		int rc = judge_fresh(set, i, note, at, now, &signers, NULL, 0);
		counted[i] = rc == 0;
		if (rc == 0)
			(*count)++;
		else if (rc == DIRAUTH_ERR_SIGNATURE)
			bad_signature = 1;
		else if (rc != DIRAUTH_ERR_UNKNOWN_KEY)
			return rc;
	}
	return bad_signature ? DIRAUTH_ERR_SIGNATURE : 0;
}

int authority_set_pins(struct authority_set *set, uint64_t now, struct certificate_keyring **ring,
                       struct verify_pins *pins)
{
	struct note_verifier identities[CONFIG_MAX_MEMBERS];
	size_t identity_count = 0;
	size_t per_member = CERTIFICATE_BUNDLE_MAX / set->count;
	struct certificate_keyring *combined = NULL;
	int rc;

	*ring = NULL;
	memset(pins, 0, sizeof(*pins));
	for (size_t i = 0; i < set->count; i++) {
		if (set->members[i].pinned)
			identities[identity_count++] = set->members[i].identity;
	}
	rc = verify_keyring_new(identities, identity_count, &combined, NULL, 0);
	if (rc != 0)
		return rc;
	/* The certificates were verified against their identity when each ring was built. */
	pthread_rwlock_rdlock(&set->rings);
	for (size_t i = 0; i < set->count; i++) {
		const struct certificate_keyring *own = set->members[i].ring;
		size_t taken = 0;
		for (size_t c = 0; c < own->certificate_count && taken < per_member; c++) {
			if (!window_covers(&own->certificates[c], now, now) ||
			    combined->certificate_count >= CERTIFICATE_BUNDLE_MAX)
				continue;
			combined->certificates[combined->certificate_count++] = own->certificates[c];
			taken++;
		}
	}
	pthread_rwlock_unlock(&set->rings);
	*ring = combined;
	pins->ring = combined;
	pins->threshold = set->threshold;
	pins->pinned_by = AUTHORITY_SET_PINNED_BY;
	return 0;
}

/* Appends to notes every certificate of bundle that identity signed, up to the bundle bound. */
static int collect_certificates(const struct note_verifier *identity, const uint8_t *bundle, size_t len,
                                const uint8_t **notes, size_t *lengths, size_t *count)
{
	struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	size_t found = 0;
	if (len == 0)
		return 0;
	int rc = certificate_bundle_parse(bundle, len, entries, &found);
	if (rc)
		return rc;
	for (size_t e = 0; e < found && *count < CERTIFICATE_BUNDLE_MAX; e++) {
		struct certificate_keyring *one = NULL;
		if (verify_keyring_new(identity, 1, &one, NULL, 0) != 0)
			return DIRAUTH_ERR_NOMEM;
		if (certificate_keyring_add(one, entries[e].note, entries[e].note_len) == 0) {
			notes[*count] = entries[e].note;
			lengths[*count] = entries[e].note_len;
			(*count)++;
		}
		verify_keyring_free(one);
	}
	return 0;
}

int authority_set_bundle(struct authority_set *set, const uint8_t *own, size_t own_len, struct buffer *out)
{
	const uint8_t *notes[CERTIFICATE_BUNDLE_MAX];
	size_t lengths[CERTIFICATE_BUNDLE_MAX], count = 0;
	int rc = 0;
	pthread_rwlock_rdlock(&set->rings);
	for (size_t i = 0; rc == 0 && i < set->count; i++) {
		const struct member_state *m = &set->members[i];
		if (!m->pinned)
			continue;
		if (i == set->self_index)
			rc = collect_certificates(&m->identity, own, own_len, notes, lengths, &count);
		else
			rc = collect_certificates(&m->identity, m->bundle.data, m->bundle.len, notes, lengths,
			                          &count);
	}
	if (rc == 0)
		rc = certificate_bundle_encode(notes, lengths, count, out);
	pthread_rwlock_unlock(&set->rings);
	return rc;
}
