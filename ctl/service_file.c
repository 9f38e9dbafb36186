/*
 * service_file.c: the strict YAML reader of service descriptions (see service_file.h).
 *
 * libyaml's parser is driven one event at a time and the grammar is checked as the events come,
 * so nothing the grammar does not allow is ever built in memory: a wrong node type, an alias or
 * a deep nesting stops the parse at its first event, with that event's line. The event API is
 * used rather than the document loader because the loader expands aliases and builds the whole
 * tree before any check could run.
 */
#include "ctl/service_file.h"

#include "schema/error.h"
#include "schema/lines.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

enum top_key { TOP_NAMESPACE, TOP_SERVICE, TOP_CLASS, TOP_SEQUENCE, TOP_VALIDITY, TOP_ENDPOINTS, TOP_COUNT };

static const char *const top_key_names[TOP_COUNT] = {
    "namespace", "service", "class", "sequence", "validity_seconds", "endpoints",
};

enum endpoint_key {
	ENDPOINT_ID,
	ENDPOINT_TRANSPORT,
	ENDPOINT_ADDRESS,
	ENDPOINT_REGION,
	ENDPOINT_CAPACITY,
	ENDPOINT_PROFILE,
	ENDPOINT_KEY_COUNT
};

static const char *const endpoint_key_names[ENDPOINT_KEY_COUNT] = {
    "id", "transport", "address", "region", "capacity", "profile",
};

struct parse_state {
	yaml_parser_t parser;
	yaml_event_t event;
	int have_event;
	int depth;
	const char *file_name;
	char *error;
	size_t error_cap;
};

static size_t event_line(const struct parse_state *state)
{
	return state->event.start_mark.line + 1;
}

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

/* Advances to the next event, refusing what the grammar never uses (aliases, anchors, tags) and
 * collections nested deeper than the bound. */
static int next_event(struct parse_state *state)
{
	if (state->have_event) {
		yaml_event_delete(&state->event);
		state->have_event = 0;
	}
	if (!yaml_parser_parse(&state->parser, &state->event)) {
		const char *problem =
		    state->parser.problem != NULL ? state->parser.problem : "malformed YAML";
		if (state->parser.error == YAML_MEMORY_ERROR)
			return fail(state, state->parser.problem_mark.line + 1, DIRAUTH_ERR_NOMEM,
			            "out of memory");
		return fail(state, state->parser.problem_mark.line + 1, DIRAUTH_ERR_SYNTAX, "%s", problem);
	}
	state->have_event = 1;
	switch (state->event.type) {
	case YAML_ALIAS_EVENT:
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "aliases are not allowed");
	case YAML_SCALAR_EVENT:
		if (state->event.data.scalar.anchor != NULL)
			return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "anchors are not allowed");
		if (state->event.data.scalar.tag != NULL)
			return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "tags are not allowed");
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		const yaml_char_t *anchor = state->event.type == YAML_MAPPING_START_EVENT
		                                ? state->event.data.mapping_start.anchor
		                                : state->event.data.sequence_start.anchor;
		const yaml_char_t *tag = state->event.type == YAML_MAPPING_START_EVENT
		                             ? state->event.data.mapping_start.tag
		                             : state->event.data.sequence_start.tag;
		if (anchor != NULL)
			return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "anchors are not allowed");
		if (tag != NULL)
			return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "tags are not allowed");
		if (++state->depth > CTL_SERVICE_FILE_MAX_DEPTH)
			return fail(state, event_line(state), DIRAUTH_ERR_BOUNDS, "nested too deeply");
		break;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		state->depth--;
		break;
	default:
		break;
	}
	return 0;
}

static const char *event_kind(const yaml_event_t *event)
{
	switch (event->type) {
	case YAML_SCALAR_EVENT:
		return "a single value";
	case YAML_SEQUENCE_START_EVENT:
		return "a list";
	case YAML_MAPPING_START_EVENT:
		return "a mapping";
	default:
		return "the end of a block";
	}
}

/* The current event must be a scalar of printable ASCII; *value borrows its text. */
static int expect_scalar(struct parse_state *state, const char *key, struct text_span *value)
{
	const char *text;
	size_t length;

	if (state->event.type != YAML_SCALAR_EVENT)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
		            "%s: expected a single value, found %s", key, event_kind(&state->event));
	text = (const char *)state->event.data.scalar.value;
	length = state->event.data.scalar.length;
	if (length == 0)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "%s: empty value", key);
	for (size_t i = 0; i < length; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c < 0x20 || c > 0x7e)
			return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
			            "%s: value has a character outside printable ASCII", key);
	}
	value->data = text;
	value->len = length;
	return 0;
}

/* Index of the key among names, or -1. */
static int key_index(struct text_span key, const char *const *names, int count)
{
	for (int i = 0; i < count; i++) {
		if (text_equals(key, names[i]))
			return i;
	}
	return -1;
}

/* Reads a mapping key at the current event: a scalar naming one of names, not seen before. */
static int read_key(struct parse_state *state, const char *context, const char *const *names, int count,
                    unsigned *seen, int *index)
{
	struct text_span key;
	int rc;

	if (state->event.type != YAML_SCALAR_EVENT)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "%s: expected a key, found %s",
		            context, event_kind(&state->event));
	rc = expect_scalar(state, context, &key);
	if (rc != 0)
		return rc;
	*index = key_index(key, names, count);
	if (*index < 0)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "%s: unknown key '%.*s'", context,
		            (int)(key.len > 64 ? 64 : key.len), key.data);
	if (*seen & (1u << *index))
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "%s: duplicate key '%s'", context,
		            names[*index]);
	*seen |= 1u << *index;
	return 0;
}

static int parse_hex_id(struct parse_state *state, const char *key, struct text_span value, uint8_t *out)
{
	if (value.len != 2 * SERVICE_ID_SIZE || text_parse_hex(value, out, SERVICE_ID_SIZE) != 0)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
		            "%s: expected 64 lower-case hex digits", key);
	return 0;
}

static int parse_count(struct parse_state *state, const char *key, struct text_span value, uint64_t max,
                       uint64_t *out)
{
	if (text_parse_u64(value, out) != 0 || *out < 1 || *out > max)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
		            "%s: expected a decimal number from 1 to %llu", key, (unsigned long long)max);
	return 0;
}

static int parse_endpoint(struct parse_state *state, struct endpoint_descriptor *endpoint, size_t *id_line)
{
	size_t mapping_line = event_line(state);
	size_t address_line = 0;
	unsigned seen = 0;
	int rc;

	memset(endpoint, 0, sizeof(*endpoint));
	if (state->event.type != YAML_MAPPING_START_EVENT)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
		            "endpoint: expected a mapping, found %s", event_kind(&state->event));
	for (;;) {
		struct text_span value;
		int index;

		rc = next_event(state);
		if (rc != 0)
			return rc;
		if (state->event.type == YAML_MAPPING_END_EVENT)
			break;
		rc = read_key(state, "endpoint", endpoint_key_names, ENDPOINT_KEY_COUNT, &seen, &index);
		if (rc != 0)
			return rc;
		rc = next_event(state);
		if (rc != 0)
			return rc;
		rc = expect_scalar(state, endpoint_key_names[index], &value);
		if (rc != 0)
			return rc;
		switch ((enum endpoint_key)index) {
		case ENDPOINT_ID:
			*id_line = event_line(state);
			rc = parse_hex_id(state, "id", value, endpoint->endpoint_id);
			break;
		case ENDPOINT_TRANSPORT:
			if (transport_parse(value.data, value.len, &endpoint->transport) != 0)
				rc = fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
				          "transport: expected quic, tls, onion or bridge");
			break;
		case ENDPOINT_ADDRESS:
			address_line = event_line(state);
			if (text_copy(value, endpoint->address, sizeof(endpoint->address)) != 0)
				rc = fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
				          "address: longer than %d bytes", ENDPOINT_ADDRESS_MAX);
			break;
		case ENDPOINT_REGION:
			if (!text_is_name(value, REGION_MAX) ||
			    text_copy(value, endpoint->region, sizeof(endpoint->region)) != 0)
				rc = fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
				          "region: expected a name of [a-z0-9-], 1 to %d bytes", REGION_MAX);
			break;
		case ENDPOINT_CAPACITY:
			if (capacity_class_parse(value.data, value.len, &endpoint->capacity) != 0)
				rc = fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
				          "capacity: expected low, medium or high");
			break;
		case ENDPOINT_PROFILE:
			if (capability_profile_parse(value.data, value.len, &endpoint->profile) != 0)
				rc = fail(
				    state, event_line(state), DIRAUTH_ERR_SYNTAX,
				    "profile: expected baseline, modern, hybrid-crypto or high-capacity");
			break;
		default:
			rc = DIRAUTH_ERR_INTERNAL;
			break;
		}
		if (rc != 0)
			return rc;
	}
	for (int i = 0; i < ENDPOINT_KEY_COUNT; i++) {
		if (!(seen & (1u << i)))
			return fail(state, mapping_line, DIRAUTH_ERR_SYNTAX, "endpoint: missing '%s'",
			            endpoint_key_names[i]);
	}
	/* The address's form depends on the transport, which may come after it in the file. */
	if (endpoint_address_check(endpoint->transport, endpoint->address) != 0)
		return fail(state, address_line, DIRAUTH_ERR_SYNTAX, "address: not a valid %s address",
		            transport_name(endpoint->transport));
	return 0;
}

static int parse_endpoints(struct parse_state *state, struct ctl_service_file *out)
{
	size_t list_line = event_line(state);
	size_t capacity = 0;
	int rc;

	if (state->event.type != YAML_SEQUENCE_START_EVENT)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
		            "endpoints: expected a list, found %s", event_kind(&state->event));
	for (;;) {
		size_t id_line = 0;

		rc = next_event(state);
		if (rc != 0)
			return rc;
		if (state->event.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (out->endpoint_count == REGISTRATION_MAX_ENDPOINTS)
			return fail(state, event_line(state), DIRAUTH_ERR_BOUNDS,
			            "endpoints: more than %d endpoints", REGISTRATION_MAX_ENDPOINTS);
		if (out->endpoint_count == capacity) {
			size_t grown = capacity == 0 ? 4 : capacity * 2;
			struct endpoint_descriptor *larger;
			if (grown > REGISTRATION_MAX_ENDPOINTS)
				grown = REGISTRATION_MAX_ENDPOINTS;
			larger = realloc(out->endpoints, grown * sizeof(*larger));
			if (larger == NULL)
				return fail(state, event_line(state), DIRAUTH_ERR_NOMEM, "out of memory");
			out->endpoints = larger;
			capacity = grown;
		}
		rc = parse_endpoint(state, &out->endpoints[out->endpoint_count], &id_line);
		if (rc != 0)
			return rc;
		for (size_t i = 0; i < out->endpoint_count; i++) {
			if (memcmp(out->endpoints[i].endpoint_id,
			           out->endpoints[out->endpoint_count].endpoint_id, ENDPOINT_ID_SIZE) == 0)
				return fail(state, id_line, DIRAUTH_ERR_SYNTAX, "id: endpoint listed twice");
		}
		out->endpoint_count++;
	}
	if (out->endpoint_count == 0)
		return fail(state, list_line, DIRAUTH_ERR_SYNTAX,
		            "endpoints: at least one endpoint is required");
	return 0;
}

static int parse_top_value(struct parse_state *state, enum top_key key, struct ctl_service_file *out)
{
	struct text_span value;
	int rc;

	if (key == TOP_ENDPOINTS)
		return parse_endpoints(state, out);
	rc = expect_scalar(state, top_key_names[key], &value);
	if (rc != 0)
		return rc;
	switch (key) {
	case TOP_NAMESPACE:
		if (!text_is_name(value, NAMESPACE_NAME_MAX) ||
		    text_copy(value, out->namespace_name, sizeof(out->namespace_name)) != 0)
			return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
			            "namespace: expected a name of [a-z0-9-], 1 to %d bytes",
			            NAMESPACE_NAME_MAX);
		return 0;
	case TOP_SERVICE:
		return parse_hex_id(state, "service", value, out->service_id);
	case TOP_CLASS:
		if (service_class_parse(value.data, value.len, &out->service_class) != 0)
			return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
			            "class: unknown service class '%.*s'",
			            (int)(value.len > 64 ? 64 : value.len), value.data);
		return 0;
	case TOP_SEQUENCE:
		out->has_sequence = 1;
		return parse_count(state, "sequence", value, UINT64_MAX, &out->sequence);
	case TOP_VALIDITY:
		return parse_count(state, "validity_seconds", value, CTL_SERVICE_FILE_MAX_VALIDITY,
		                   &out->validity_seconds);
	default:
		return DIRAUTH_ERR_INTERNAL;
	}
}

static int parse_document(struct parse_state *state, struct ctl_service_file *out)
{
	static const unsigned required =
	    (1u << TOP_NAMESPACE) | (1u << TOP_SERVICE) | (1u << TOP_CLASS) | (1u << TOP_ENDPOINTS);
	size_t mapping_line;
	unsigned seen = 0;
	int rc;

	rc = next_event(state);
	if (rc != 0)
		return rc;
	if (state->event.type != YAML_STREAM_START_EVENT)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "malformed YAML");
	rc = next_event(state);
	if (rc != 0)
		return rc;
	if (state->event.type != YAML_DOCUMENT_START_EVENT)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "empty service description");
	rc = next_event(state);
	if (rc != 0)
		return rc;
	if (state->event.type != YAML_MAPPING_START_EVENT)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX,
		            "expected a mapping of keys, found %s", event_kind(&state->event));
	mapping_line = event_line(state);
	for (;;) {
		int index;

		rc = next_event(state);
		if (rc != 0)
			return rc;
		if (state->event.type == YAML_MAPPING_END_EVENT)
			break;
		rc = read_key(state, "service description", top_key_names, TOP_COUNT, &seen, &index);
		if (rc != 0)
			return rc;
		rc = next_event(state);
		if (rc != 0)
			return rc;
		rc = parse_top_value(state, (enum top_key)index, out);
		if (rc != 0)
			return rc;
	}
	for (int i = 0; i < TOP_COUNT; i++) {
		if ((required & (1u << i)) && !(seen & (1u << i)))
			return fail(state, mapping_line, DIRAUTH_ERR_SYNTAX, "missing '%s'",
			            top_key_names[i]);
	}
	rc = next_event(state);
	if (rc != 0)
		return rc;
	if (state->event.type != YAML_DOCUMENT_END_EVENT)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "malformed YAML");
	rc = next_event(state);
	if (rc != 0)
		return rc;
	if (state->event.type != YAML_STREAM_END_EVENT)
		return fail(state, event_line(state), DIRAUTH_ERR_SYNTAX, "only one document is allowed");
	return 0;
}

int ctl_service_file_parse(const uint8_t *buf, size_t len, const char *file_name,
                           struct ctl_service_file *out, char *error, size_t error_cap)
{
	struct parse_state state;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&state, 0, sizeof(state));
	state.file_name = file_name != NULL ? file_name : "service description";
	state.error = error;
	state.error_cap = error_cap;
	if (error != NULL && error_cap > 0)
		error[0] = '\0';
	if (len > CTL_SERVICE_FILE_MAX_BYTES)
		return fail(&state, 1, DIRAUTH_ERR_BOUNDS, "larger than %d bytes",
		            CTL_SERVICE_FILE_MAX_BYTES);
	if (!yaml_parser_initialize(&state.parser))
		return fail(&state, 1, DIRAUTH_ERR_NOMEM, "out of memory");
	yaml_parser_set_input_string(&state.parser, buf, len);
	yaml_parser_set_encoding(&state.parser, YAML_UTF8_ENCODING);
	out->validity_seconds = CTL_SERVICE_FILE_DEFAULT_VALIDITY;
	rc = parse_document(&state, out);
	if (state.have_event)
		yaml_event_delete(&state.event);
	yaml_parser_delete(&state.parser);
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
