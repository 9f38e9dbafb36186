/*
 * fuzz_libdirauth_update.c: every byte string an update takes (the state it reads, and the answer
 * to each request) through dirauth_update_feed, with the example chain (tests/vectors/chain/)
 * for the rest. The first input byte picks what the remaining bytes replace: the state, the
 * certificate bundle, the latest header, or the body; bits 2-3 pick the Content-Encoding of the
 * body; bit 4 installs epoch 1 first, so that the body is asked for, and taken, as a diff; bit 5
 * pins a log key and hands the remaining bytes over as the checkpoint held (checkpoint_read)
 * instead.
 * Properties: the update ends in a known status; a success installs a snapshot and writes the
 * header note once; a refusal writes nothing and leaves what was installed as it was.
 */
#include <dirauth/dirauth.h>

#include "tests/fuzz/libdirauth_fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

struct file {
	uint8_t *bytes;
	size_t len;
};

static struct file bundle, certificates, header, body, previous_header, previous_body;

static struct file load(const char *name)
{
	struct file f;
	f.bytes = fuzz_chain_load(name, &f.len);
	return f;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	bundle = load("trust-bundle.txt");
	certificates = load("certificates.txt");
	header = load("header.note");
	body = load("body.txt");
	previous_header = load("previous-header.note");
	previous_body = load("previous-body.txt");
	return 0;
}

struct fuzz_state {
	uint64_t now;
	const uint8_t *state;
	size_t state_len;
	const uint8_t *checkpoint;
	size_t checkpoint_len;
	unsigned writes;
};

static uint64_t now(void *user)
{
	return ((struct fuzz_state *)user)->now;
}

/* Epoch 1 installed first (its header and body, at a time inside its validity), so that epoch 2's
 * body is asked for as a diff from it. */
static void install_epoch_1(struct dirauth_context *context, struct fuzz_state *s)
{
	const struct file *answers[] = {&certificates, &previous_header, &previous_body};
	struct dirauth_update *update = NULL;
	s->now = 1767225700;
	if (dirauth_update_begin(context, "mix", &update, NULL) != DIRAUTH_SUCCESS)
		abort();
	for (size_t i = 0; i < 3; i++)
		if (dirauth_update_next(update, NULL, NULL) != 1 ||
		    dirauth_update_feed(update, 200, "", answers[i]->bytes, answers[i]->len, NULL) !=
		        DIRAUTH_SUCCESS)
			abort();
	dirauth_update_free(update);
	s->writes = 0;
	s->now = 1767225750;
}

/* Hands bytes over as a read callback does: at most cap, else a failure. */
static int hand_over(const uint8_t *bytes, size_t len, uint8_t *out, size_t cap, size_t *out_len)
{
	*out_len = 0;
	if (len > cap)
		return -1;
	if (len > 0)
		memcpy(out, bytes, len);
	*out_len = len;
	return 0;
}

static int state_read(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len)
{
	const struct fuzz_state *s = user;
	(void)namespace_name;
	return hand_over(s->state, s->state_len, out, cap, len);
}

static int checkpoint_read(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len)
{
	const struct fuzz_state *s = user;
	(void)namespace_name;
	return hand_over(s->checkpoint, s->checkpoint_len, out, cap, len);
}

static int state_write(void *user, const char *namespace_name, const uint8_t *bytes, size_t len)
{
	struct fuzz_state *s = user;
	(void)namespace_name, (void)bytes, (void)len;
	s->writes++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const encodings[] = {"", "identity", "gzip", "zstd"};
	/* A log key of the namespace's origin: what it signs is never believed here, but with it
	 * pinned the checkpoint held is read back. */
	static char log_key[NOTE_VERIFIER_KEY_MAX + 1];
	const char *const log_keys[] = {log_key};
	if (log_key[0] == '\0')
		fuzz_unheld_key("dirauth.example/mix", 0, 7, log_key);
	struct fuzz_state s = {1767225750, NULL, 0, NULL, 0, 0};
	struct dirauth_callbacks callbacks = {.user = &s,
	                                      .now = now,
	                                      .state_read = state_read,
	                                      .state_write = state_write,
	                                      .checkpoint_read = checkpoint_read};
	struct dirauth_options options = {0};
	struct dirauth_result result = {0};
	struct dirauth_context *context = NULL;
	struct dirauth_update *update = NULL;
	struct dirauth_snapshot_info info;
	const char *path;
	size_t max_bytes;

	if (size < 1)
		return 0;
	unsigned which = data[0] & 3u;
	int diff = (data[0] & 16u) != 0 && which != 0; /* the body as a diff from epoch 1's */
	const char *encoding = encodings[(data[0] >> 2) & 3u];
	const uint8_t *fuzz = data + 1;
	size_t fuzz_len = size - 1;
	if ((data[0] & 32u) != 0) {
		s.checkpoint = fuzz;
		s.checkpoint_len = fuzz_len;
		options.log_keys = log_keys;
		options.log_key_count = 1;
		which = 4; /* nothing else is replaced */
		diff = 0;
	} else if (which == 0) {
		s.state = fuzz;
		s.state_len = fuzz_len;
	}
	if (dirauth_context_new(&callbacks, bundle.bytes, bundle.len, &options, &context, &result) !=
	    DIRAUTH_SUCCESS)
		abort();
	if (diff)
		install_epoch_1(context, &s);
	enum dirauth_status status = dirauth_update_begin(context, "mix", &update, &result);
	for (unsigned step = 0; status == DIRAUTH_SUCCESS && dirauth_update_next(update, &path, &max_bytes);
	     step++) {
		const struct file *answer = strstr(path, "certificates")                      ? &certificates
		                            : strstr(path, "/body") || strstr(path, "/diff/") ? &body
		                                                                              : &header;
		const uint8_t *bytes = answer->bytes;
		size_t len = answer->len;
		if ((which == 1 && answer == &certificates) || (which == 2 && answer == &header) ||
		    (which == 3 && answer == &body)) {
			bytes = fuzz;
			len = fuzz_len;
		}
		status =
		    dirauth_update_feed(update, 200, answer == &body ? encoding : "", bytes, len, &result);
		if (step > 2000)
			abort(); /* the chain is bounded by max-chain */
	}
	if (status > DIRAUTH_E_TOO_FAR)
		abort();
	if (status == DIRAUTH_SUCCESS) {
		if (dirauth_snapshot(context, "mix", &info, &result) != DIRAUTH_SUCCESS || s.writes != 1)
			abort();
	} else if (s.writes != 0 || result.detail[0] == '\0') {
		abort();
	} else if (diff ? dirauth_snapshot(context, "mix", &info, NULL) != DIRAUTH_SUCCESS || info.epoch != 1
	                : dirauth_snapshot(context, "mix", &info, NULL) == DIRAUTH_SUCCESS) {
		abort(); /* a refusal leaves what was installed as it was */
	}
	dirauth_update_free(update);
	dirauth_context_free(context);
	dirauth_result_clear(&result);
	return 0;
}
