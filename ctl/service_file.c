/*
 * service_file.c: the strict YAML reader of service descriptions (see service_file.h).
 *
 * Two passes, as every configuration file of the project is read. settings_read builds the
 * bounded tree under this file's own smaller bounds and refuses, once for every program, what
 * makes YAML dangerous or ambiguous (anchors, aliases, tags, several documents, deep nesting,
 * oversized text). This file then walks the tree against the grammar of service_file.h, in file
 * order, checking each value with the registration grammar's rules. Its messages are its own,
 * worded for a provider operator ("service: empty value"); a refusal of the reader is told in
 * those words too, and sorted into this module's error classes by settings_refusal_is_bound: a
 * bound is DIRAUTH_ERR_BOUNDS, anything else DIRAUTH_ERR_SYNTAX.
 */
#include "ctl/service_file.h"

#include "base/error.h"
#include "schema/lines.h"
#include "settings/settings.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum top_key { TOP_NAMESPACE, TOP_SERVICE, TOP_CLASS, TOP_SEQUENCE, TOP_VALIDITY, TOP_ENDPOINTS, TOP_COUNT };

static const char *const top_key_names[TOP_COUNT + 1] = {
    "namespace", "service", "class", "sequence", "validity_seconds", "endpoints", NULL,
};

static const int top_key_required[TOP_COUNT] = {1, 1, 1, 0, 0, 1};

enum endpoint_key {
	ENDPOINT_ID,
	ENDPOINT_TRANSPORT,
	ENDPOINT_ADDRESS,
	ENDPOINT_REGION,
	ENDPOINT_CAPACITY,
	ENDPOINT_PROFILE,
	ENDPOINT_OWN_KEY, /* optional: the endpoint's own verifier key (the endpoint-key line) */
	ENDPOINT_KEY_COUNT
};

/* The endpoint keys every endpoint must have: all but the last. */
#define ENDPOINT_KEYS_REQUIRED ENDPOINT_OWN_KEY

static const char *const endpoint_key_names[ENDPOINT_KEY_COUNT + 1] = {
    "id", "transport", "address", "region", "capacity", "profile", "key", NULL,
};

struct parse_state {
	struct settings_reader reader;
	struct settings_error settings_error;
	const char *file_name;
	char *error;
	size_t error_cap;
};

static int fail(struct parse_state *state, size_t line, int rc, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct parse_state *state, size_t line, int rc, const char *format, ...)
{
	va_list args;
	int used;

	if (state->error == NULL || state->error_cap == 0)
		return rc;
	used = snprintf(state->error, state->error_cap, "%s:%zu: ", state->file_name, line);
	if (used < 0 || (size_t)used >= state->error_cap)
		return rc;
	va_start(args, format);
	vsnprintf(state->error + used, state->error_cap - (size_t)used, format, args);
	va_end(args);
	return rc;
}

/* Reports what settings/ refused (rc from settings_read or an accessor) in this module's words
 * and error classes: a bound is DIRAUTH_ERR_BOUNDS, the rest DIRAUTH_ERR_SYNTAX. */
static int fail_settings(struct parse_state *state, int rc)
{
	const struct settings_error *refused = &state->settings_error;
	size_t line = refused->line ? refused->line : 1;
	int error_class =
	    settings_refusal_is_bound(refused->refusal) ? DIRAUTH_ERR_BOUNDS : DIRAUTH_ERR_SYNTAX;

	if (rc == DIRAUTH_ERR_NOMEM)
		return fail(state, 1, rc, "out of memory");
	if (rc != DIRAUTH_ERR_CONFIG)
		return fail(state, 1, rc, "%s", dirauth_strerror(rc));
	switch (refused->refusal) {
	case SETTINGS_REFUSED_SIZE:
		return fail(state, line, error_class, "larger than %d bytes", CTL_SERVICE_FILE_MAX_BYTES);
	case SETTINGS_REFUSED_DEPTH:
		return fail(state, line, error_class, "nested too deeply");
	case SETTINGS_REFUSED_ANCHOR:
		return fail(state, line, error_class, "anchors are not allowed");
	case SETTINGS_REFUSED_ALIAS:
		return fail(state, line, error_class, "aliases are not allowed");
	case SETTINGS_REFUSED_TAG:
		return fail(state, line, error_class, "tags are not allowed");
	case SETTINGS_REFUSED_DOCUMENTS:
		return fail(state, line, error_class, "only one document is allowed");
	case SETTINGS_REFUSED_EMPTY:
		return fail(state, line, error_class, "empty service description");
	default:
		return fail(state, line, error_class, "%s", refused->message);
	}
}

static const char *node_kind(const struct settings_node *node)
{
	switch (node->kind) {
	case SETTINGS_SCALAR:
		return "a single value";
	case SETTINGS_SEQUENCE:
		return "a list";
	default:
		return "a mapping";
	}
}

/* node must be a scalar (what the grammar expects there: "a single value", "a key") of
 * printable ASCII, not empty; *text borrows its text. */
static int expect_text(struct parse_state *state, const struct settings_node *node, const char *context,
                       const char *expected, struct text_span *text)
{
	if (node->kind != SETTINGS_SCALAR)
		return fail(state, node->line, DIRAUTH_ERR_SYNTAX, "%s: expected %s, found %s", context,
		            expected, node_kind(node));
	if (node->text_len == 0)
		return fail(state, node->line, DIRAUTH_ERR_SYNTAX, "%s: empty value", context);
	for (size_t i = 0; i < node->text_len; i++) {
		unsigned char c = (unsigned char)node->text[i];
		if (c < 0x20 || c > 0x7e)
			return fail(state, node->line, DIRAUTH_ERR_SYNTAX,
			            "%s: value has a character outside printable ASCII", context);
	}
	text->data = node->text;
	text->len = node->text_len;
	return 0;
}

static int expect_scalar(struct parse_state *state, const struct settings_node *node, const char *key,
                         struct text_span *value)
{
	return expect_text(state, node, key, "a single value", value);
}

/* mapping's keys: scalars of printable ASCII, each one of names (NULL-terminated), none twice. */
static int check_keys(struct parse_state *state, const struct settings_node *mapping, const char *context,
                      const char *const *names)
{
	for (size_t i = 0; i + 1 < mapping->count; i += 2) {
		struct text_span key;
		int rc = expect_text(state, mapping->children[i], context, "a key", &key);
		if (rc != 0)
			return rc;
	}
	if (settings_check_keys(&state->reader, mapping, names, context) != 0)
		return fail_settings(state, DIRAUTH_ERR_CONFIG);
	return 0;
}

/* Index of a checked key among names. */
static int key_index(const struct settings_node *key, const char *const *names)
{
	for (int i = 0; names[i] != NULL; i++) {
		if (strcmp(key->text, names[i]) == 0)
			return i;
	}
	return -1;
}

static int parse_hex_id(struct parse_state *state, const struct settings_node *node, const char *key,
                        struct text_span value, uint8_t *out)
{
	if (value.len != 2 * SERVICE_ID_SIZE || text_parse_hex(value, out, SERVICE_ID_SIZE) != 0)
		return fail(state, node->line, DIRAUTH_ERR_SYNTAX, "%s: expected 64 lower-case hex digits",
		            key);
	return 0;
}

static int parse_count(struct parse_state *state, const struct settings_node *node, const char *key,
                       struct text_span value, uint64_t max, uint64_t *out)
{
	if (text_parse_u64(value, out) != 0 || *out < 1 || *out > max)
		return fail(state, node->line, DIRAUTH_ERR_SYNTAX,
		            "%s: expected a decimal number from 1 to %llu", key, (unsigned long long)max);
	return 0;
}

static int parse_endpoint_value(struct parse_state *state, enum endpoint_key key,
                                const struct settings_node *node, struct endpoint_descriptor *endpoint)
{
	struct text_span value;
	int rc = expect_scalar(state, node, endpoint_key_names[key], &value);

	if (rc != 0)
		return rc;
	switch (key) {
	case ENDPOINT_ID:
		return parse_hex_id(state, node, "id", value, endpoint->endpoint_id);
	case ENDPOINT_TRANSPORT:
		if (transport_parse(value.data, value.len, &endpoint->transport) != 0)
			return fail(state, node->line, DIRAUTH_ERR_SYNTAX,
			            "transport: expected quic, tls, onion or bridge");
		return 0;
	case ENDPOINT_ADDRESS:
		if (text_copy(value, endpoint->address, sizeof(endpoint->address)) != 0)
			return fail(state, node->line, DIRAUTH_ERR_SYNTAX, "address: longer than %d bytes",
			            ENDPOINT_ADDRESS_MAX);
		return 0;
	case ENDPOINT_REGION:
		if (!text_is_name(value, REGION_MAX) ||
		    text_copy(value, endpoint->region, sizeof(endpoint->region)) != 0)
			return fail(state, node->line, DIRAUTH_ERR_SYNTAX,
			            "region: expected a name of [a-z0-9-], 1 to %d bytes", REGION_MAX);
		return 0;
	case ENDPOINT_CAPACITY:
		if (capacity_class_parse(value.data, value.len, &endpoint->capacity) != 0)
			return fail(state, node->line, DIRAUTH_ERR_SYNTAX,
			            "capacity: expected low, medium or high");
		return 0;
	case ENDPOINT_PROFILE:
		if (capability_profile_parse(value.data, value.len, &endpoint->profile) != 0)
			return fail(state, node->line, DIRAUTH_ERR_SYNTAX,
			            "profile: expected baseline, modern, hybrid-crypto or high-capacity");
		return 0;
	case ENDPOINT_OWN_KEY:
		if (note_verifier_parse(value.data, value.len, &endpoint->key) != 0)
			return fail(state, node->line, DIRAUTH_ERR_SYNTAX,
			            "key: expected the endpoint's Ed25519 verifier key, NAME+KEYID+BASE64 "
			            "(dirauthctl keygen prints it)");
		endpoint->has_key = 1;
		return 0;
	default:
		return DIRAUTH_ERR_INTERNAL;
	}
}

/* One item of the endpoint list; *id_line gets the line of its id. */
static int parse_endpoint(struct parse_state *state, const struct settings_node *mapping,
                          struct endpoint_descriptor *endpoint, size_t *id_line)
{
	const struct settings_node *address;
	int rc;

	memset(endpoint, 0, sizeof(*endpoint));
	if (mapping->kind != SETTINGS_MAPPING)
		return fail(state, mapping->line, DIRAUTH_ERR_SYNTAX,
		            "endpoint: expected a mapping, found %s", node_kind(mapping));
	rc = check_keys(state, mapping, "endpoint", endpoint_key_names);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i + 1 < mapping->count; i += 2) {
		int index = key_index(mapping->children[i], endpoint_key_names);
		if (index < 0)
			return DIRAUTH_ERR_INTERNAL;
		rc =
		    parse_endpoint_value(state, (enum endpoint_key)index, mapping->children[i + 1], endpoint);
		if (rc != 0)
			return rc;
	}
	for (int i = 0; i < ENDPOINT_KEYS_REQUIRED; i++) {
		if (settings_lookup(mapping, endpoint_key_names[i]) == NULL)
			return fail(state, mapping->line, DIRAUTH_ERR_SYNTAX, "endpoint: missing '%s'",
			            endpoint_key_names[i]);
	}
	*id_line = settings_lookup(mapping, "id")->line;
	/* The address's form depends on the transport, which may come after it in the file. */
	address = settings_lookup(mapping, "address");
	if (endpoint_address_check(endpoint->transport, endpoint->address) != 0)
		return fail(state, address->line, DIRAUTH_ERR_SYNTAX, "address: not a valid %s address",
		            transport_name(endpoint->transport));
	return 0;
}

static int parse_endpoints(struct parse_state *state, const struct settings_node *list,
                           struct ctl_service_file *out)
{
	size_t capacity;

	if (list->kind != SETTINGS_SEQUENCE)
		return fail(state, list->line, DIRAUTH_ERR_SYNTAX, "endpoints: expected a list, found %s",
		            node_kind(list));
	if (list->count == 0)
		return fail(state, list->line, DIRAUTH_ERR_SYNTAX,
		            "endpoints: at least one endpoint is required");
	capacity = list->count < REGISTRATION_MAX_ENDPOINTS ? list->count : REGISTRATION_MAX_ENDPOINTS;
	out->endpoints = calloc(capacity, sizeof(*out->endpoints));
	if (out->endpoints == NULL)
		return fail(state, list->line, DIRAUTH_ERR_NOMEM, "out of memory");
	for (size_t n = 0; n < list->count; n++) {
		struct endpoint_descriptor *endpoint;
		size_t id_line = 0;
		int rc;

		if (n == REGISTRATION_MAX_ENDPOINTS)
			return fail(state, list->children[n]->line, DIRAUTH_ERR_BOUNDS,
			            "endpoints: more than %d endpoints", REGISTRATION_MAX_ENDPOINTS);
		endpoint = &out->endpoints[out->endpoint_count];
		rc = parse_endpoint(state, list->children[n], endpoint, &id_line);
		if (rc != 0)
			return rc;
		for (size_t i = 0; i < out->endpoint_count; i++) {
			if (memcmp(out->endpoints[i].endpoint_id, endpoint->endpoint_id, ENDPOINT_ID_SIZE) ==
			    0)
				return fail(state, id_line, DIRAUTH_ERR_SYNTAX, "id: endpoint listed twice");
		}
		out->endpoint_count++;
	}
	return 0;
}

static int parse_top_value(struct parse_state *state, enum top_key key, const struct settings_node *node,
                           struct ctl_service_file *out)
{
	struct text_span value;
	int rc;

	if (key == TOP_ENDPOINTS)
		return parse_endpoints(state, node, out);
	rc = expect_scalar(state, node, top_key_names[key], &value);
	if (rc != 0)
		return rc;
	switch (key) {
	case TOP_NAMESPACE:
		if (!text_is_name(value, NAMESPACE_NAME_MAX) ||
		    text_copy(value, out->namespace_name, sizeof(out->namespace_name)) != 0)
			return fail(state, node->line, DIRAUTH_ERR_SYNTAX,
			            "namespace: expected a name of [a-z0-9-], 1 to %d bytes",
			            NAMESPACE_NAME_MAX);
		return 0;
	case TOP_SERVICE:
		return parse_hex_id(state, node, "service", value, out->service_id);
	case TOP_CLASS:
		if (service_class_parse(value.data, value.len, &out->service_class) != 0)
			return fail(state, node->line, DIRAUTH_ERR_SYNTAX,
			            "class: unknown service class '%.*s'",
			            (int)(value.len > 64 ? 64 : value.len), value.data);
		return 0;
	case TOP_SEQUENCE:
		out->has_sequence = 1;
		return parse_count(state, node, "sequence", value, UINT64_MAX, &out->sequence);
	case TOP_VALIDITY:
		return parse_count(state, node, "validity_seconds", value, CTL_SERVICE_FILE_MAX_VALIDITY,
		                   &out->validity_seconds);
	default:
		return DIRAUTH_ERR_INTERNAL;
	}
}

static int parse_document(struct parse_state *state, const struct settings_node *root,
                          struct ctl_service_file *out)
{
	int rc;

	if (root->kind != SETTINGS_MAPPING)
		return fail(state, root->line, DIRAUTH_ERR_SYNTAX, "expected a mapping of keys, found %s",
		            node_kind(root));
	rc = check_keys(state, root, "service description", top_key_names);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i + 1 < root->count; i += 2) {
		int index = key_index(root->children[i], top_key_names);
		if (index < 0)
			return DIRAUTH_ERR_INTERNAL;
		rc = parse_top_value(state, (enum top_key)index, root->children[i + 1], out);
		if (rc != 0)
			return rc;
	}
	for (int i = 0; i < TOP_COUNT; i++) {
		if (top_key_required[i] && settings_lookup(root, top_key_names[i]) == NULL)
			return fail(state, root->line, DIRAUTH_ERR_SYNTAX, "missing '%s'", top_key_names[i]);
	}
	return 0;
}

int ctl_service_file_parse(const uint8_t *buf, size_t len, const char *file_name,
                           struct ctl_service_file *out, char *error, size_t error_cap)
{
	struct parse_state state;
	struct settings_node *root = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&state, 0, sizeof(state));
	state.reader.error = &state.settings_error;
	state.reader.max_bytes = CTL_SERVICE_FILE_MAX_BYTES;
	state.reader.max_depth = CTL_SERVICE_FILE_MAX_DEPTH;
	state.reader.utf8_only = 1;
	state.file_name = file_name != NULL ? file_name : "service description";
	state.error = error;
	state.error_cap = error_cap;
	if (error != NULL && error_cap > 0)
		error[0] = '\0';
	rc = settings_read(&state.reader, buf, len, &root);
	if (rc != 0)
		return fail_settings(&state, rc);
	out->validity_seconds = CTL_SERVICE_FILE_DEFAULT_VALIDITY;
	rc = parse_document(&state, root, out);
	settings_free(root);
	if (rc != 0)
		ctl_service_file_clear(out);
	return rc;
}

void ctl_service_file_clear(struct ctl_service_file *file)
{
	if (file == NULL)
		return;
	free(file->endpoints);
	memset(file, 0, sizeof(*file));
}
