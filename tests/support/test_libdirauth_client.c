/*
 * test_libdirauth_client.c: the callbacks of test_libdirauth_client.h.
 */
#define _DEFAULT_SOURCE
#include "test_libdirauth_client.h"

#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static uint64_t client_now(void *user)
{
	return ((struct test_client *)user)->now;
}

static int client_random(void *user, uint8_t *out, size_t len)
{
	struct test_client *c = user;
	if (c->fail_random)
		return -1;
	if (c->random == NULL)
		return getrandom(out, len, 0) == (ssize_t)len ? 0 : -1;
	for (size_t i = 0; i < len; i++)
		out[i] = c->random[c->random_at++ % c->random_len];
	return 0;
}

static int client_state_read(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len)
{
	struct test_client *c = user;
	c->state_reads++;
	*len = 0;
	if (c->fail_read)
		return -1;
	if (c->state.len == 0 || strcmp(c->state_namespace, namespace_name) != 0)
		return 0;
	if (c->state.len > cap)
		return -1;
	memcpy(out, c->state.data, c->state.len);
	*len = c->state.len;
	return 0;
}

static int client_state_write(void *user, const char *namespace_name, const uint8_t *bytes, size_t len)
{
	struct test_client *c = user;
	if (c->fail_write)
		return -1;
	c->state_writes++;
	if (c->watched != NULL) {
		struct dirauth_verified verified;
		c->watched_status = dirauth_update_verified(c->watched, &verified, NULL);
		c->watched_body_len = c->watched_status == DIRAUTH_SUCCESS ? verified.body_len : 0;
	}
	buffer_reset(&c->state);
	snprintf(c->state_namespace, sizeof(c->state_namespace), "%s", namespace_name);
	return buffer_append(&c->state, bytes, len) == 0 ? 0 : -1;
}

static int client_body_read(void *user, const char *namespace_name, uint64_t epoch, struct dirauth_sink *sink)
{
	struct test_client *c = user;
	(void)namespace_name;
	(void)epoch;
	c->body_reads++;
	if (c->kept_body.len == 0)
		return -1;
	return dirauth_sink_append(sink, c->kept_body.data, c->kept_body.len);
}

void test_client_init(struct test_client *c, uint64_t now)
{
	memset(c, 0, sizeof(*c));
	c->now = now;
	buffer_init(&c->state);
	buffer_init(&c->kept_body);
	c->callbacks.user = c;
	c->callbacks.now = client_now;
	c->callbacks.random = client_random;
	c->callbacks.state_read = client_state_read;
	c->callbacks.state_write = client_state_write;
	c->callbacks.body_read = client_body_read;
}

void test_client_free(struct test_client *c)
{
	buffer_free(&c->state);
	buffer_free(&c->kept_body);
}

struct dirauth_context *test_client_context(struct test_client *c, const char *bundle_path,
                                            const struct dirauth_options *options)
{
	struct dirauth_result result = {0};
	struct dirauth_context *context = NULL;
	size_t len = 0;
	uint8_t *bundle =
	    test_read_file(bundle_path[0] == '/' ? bundle_path : test_source_path(bundle_path), &len);
	enum dirauth_status status =
	    dirauth_context_new(&c->callbacks, bundle, len, options, &context, &result);
	ck_assert_msg(status == DIRAUTH_SUCCESS, "context: %s", result.detail);
	free(bundle);
	dirauth_result_clear(&result);
	return context;
}
