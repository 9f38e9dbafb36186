/*
 * registration.c: the codec of a provider's registration, the record every snapshot carries.
 *
 * A registration is what a provider says about its own service; authorities only decide whether
 * to publish it. So the text must have exactly one spelling: two authorities that hold the same
 * registration must hold the same bytes, or their votes and the snapshot's Merkle root would
 * disagree. The parser therefore reads the fields strictly, then asks the encoder for the
 * canonical text of what it read and refuses the input unless the two are byte-identical. The
 * encoder is the single place that states what a valid registration is.
 */
#include "schema/registration.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"

#include <stdlib.h>
#include <string.h>

static const char *const service_class_names[SERVICE_CLASS_COUNT] = {
    "mix-gateway", "mailbox-provider", "realtime-relay",     "bulk-transfer",
    "bridge",      "directory-mirror", "federation-gateway", "control-plane",
};
static const char *const transport_names[TRANSPORT_COUNT] = {"quic", "tls", "onion", "bridge"};
static const char *const capacity_names[CAPACITY_COUNT] = {"low", "medium", "high"};
static const char *const profile_names[PROFILE_COUNT] = {"baseline", "modern", "hybrid-crypto",
                                                         "high-capacity"};

const char *service_class_name(enum service_class value)
{
	return (unsigned)value < SERVICE_CLASS_COUNT ? service_class_names[value] : NULL;
}

int service_class_parse(const char *text, size_t len, enum service_class *out)
{
	int index = text_index_of(service_class_names, SERVICE_CLASS_COUNT, text, len);
	if (index < 0)
		return DIRAUTH_ERR_SYNTAX;
	*out = (enum service_class)index;
	return 0;
}

const char *transport_name(enum transport value)
{
	return (unsigned)value < TRANSPORT_COUNT ? transport_names[value] : NULL;
}

int transport_parse(const char *text, size_t len, enum transport *out)
{
	int index = text_index_of(transport_names, TRANSPORT_COUNT, text, len);
	if (index < 0)
		return DIRAUTH_ERR_SYNTAX;
	*out = (enum transport)index;
	return 0;
}

const char *capacity_class_name(enum capacity_class value)
{
	return (unsigned)value < CAPACITY_COUNT ? capacity_names[value] : NULL;
}

int capacity_class_parse(const char *text, size_t len, enum capacity_class *out)
{
	int index = text_index_of(capacity_names, CAPACITY_COUNT, text, len);
	if (index < 0)
		return DIRAUTH_ERR_SYNTAX;
	*out = (enum capacity_class)index;
	return 0;
}

const char *capability_profile_name(enum capability_profile value)
{
	return (unsigned)value < PROFILE_COUNT ? profile_names[value] : NULL;
}

int capability_profile_parse(const char *text, size_t len, enum capability_profile *out)
{
	int index = text_index_of(profile_names, PROFILE_COUNT, text, len);
	if (index < 0)
		return DIRAUTH_ERR_SYNTAX;
	*out = (enum capability_profile)index;
	return 0;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A canonical IPv4 dotted quad: four decimal octets 0..255 without leading zeros. */
static int ipv4_is_valid(const char *host, size_t len)
{
	size_t octets = 0;
	size_t i = 0;
	while (i <= len) {
		size_t start = i;
		while (i < len && is_digit(host[i]))
			i++;
		size_t digits = i - start;
		if (digits == 0 || digits > 3 || (digits > 1 && host[start] == '0'))
			return 0;
		unsigned value = 0;
		for (size_t j = start; j < i; j++)
			value = value * 10 + (unsigned)(host[j] - '0');
		if (value > 255)
			return 0;
		octets++;
		if (i == len)
			break;
		if (host[i] != '.')
			return 0;
		i++;
	}
	return octets == 4;
}

/* A lower-case DNS name: labels of 1..63 bytes of [a-z0-9-], not starting or ending with '-',
 * separated by single dots, no trailing dot. A name of digits and dots only must be an IPv4
 * address, so that "010.1.1.1" cannot pass as a DNS name and give an address a second spelling. */
static int dns_name_is_valid(const char *host, size_t len)
{
	if (len == 0 || len > 253)
		return 0;
	int only_digits_and_dots = 1;
	size_t label_len = 0;
	for (size_t i = 0; i < len; i++) {
		char c = host[i];
		if (c == '.') {
			if (label_len == 0 || host[i - 1] == '-')
				return 0;
			label_len = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || is_digit(c) || c == '-'))
			return 0;
		if (!is_digit(c))
			only_digits_and_dots = 0;
		if (c == '-' && label_len == 0)
			return 0;
		if (++label_len > 63)
			return 0;
	}
	if (label_len == 0 || host[len - 1] == '-')
		return 0;
	return !only_digits_and_dots;
}

/* An IPv6 literal between brackets: lower-case hex digits, ':' and '.' (for an embedded IPv4
 * tail), at least one ':'. The exact RFC 5952 form is the provider's business; the character set
 * keeps the field harmless to every consumer. */
static int ipv6_is_valid(const char *text, size_t len)
{
	if (len < 2 || len > 45)
		return 0;
	int colons = 0;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c == ':')
			colons++;
		else if (!(is_digit(c) || (c >= 'a' && c <= 'f') || c == '.'))
			return 0;
	}
	return colons > 0;
}

static int host_port_is_valid(const char *address, size_t len)
{
	const char *colon = NULL;
	size_t host_len;
	if (len > 0 && address[0] == '[') {
		const char *close = memchr(address, ']', len);
		if (!close)
			return 0;
		size_t inner = (size_t)(close - address) - 1;
		if (!ipv6_is_valid(address + 1, inner))
			return 0;
		colon = close + 1;
		if ((size_t)(colon - address) >= len || *colon != ':')
			return 0;
	} else {
		colon = memchr(address, ':', len);
		if (!colon)
			return 0;
		host_len = (size_t)(colon - address);
		if (!ipv4_is_valid(address, host_len) && !dns_name_is_valid(address, host_len))
			return 0;
	}
	const char *port = colon + 1;
	size_t port_len = len - (size_t)(port - address);
	uint64_t port_value;
	if (decimal_parse(port, port_len, &port_value) != 0 || port_value < 1 || port_value > 65535)
		return 0;
	return 1;
}

static int opaque_is_valid(const char *address, size_t len)
{
	if (len == 0 || len > ENDPOINT_ADDRESS_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = address[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

int endpoint_address_check(enum transport transport, const char *address)
{
	if (!address)
		return DIRAUTH_ERR_SYNTAX;
	size_t len = strnlen(address, ENDPOINT_ADDRESS_MAX + 1);
	if (len == 0 || len > ENDPOINT_ADDRESS_MAX)
		return DIRAUTH_ERR_SYNTAX;
	switch (transport) {
	case TRANSPORT_QUIC:
	case TRANSPORT_TLS:
		return host_port_is_valid(address, len) ? 0 : DIRAUTH_ERR_SYNTAX;
	case TRANSPORT_ONION:
	case TRANSPORT_BRIDGE:
		return opaque_is_valid(address, len) ? 0 : DIRAUTH_ERR_SYNTAX;
	default:
		return DIRAUTH_ERR_SYNTAX;
	}
}

static int endpoint_check(const struct endpoint_descriptor *endpoint)
{
	if (!transport_name(endpoint->transport) || !capacity_class_name(endpoint->capacity) ||
	    !capability_profile_name(endpoint->profile))
		return DIRAUTH_ERR_SYNTAX;
	if (endpoint_address_check(endpoint->transport, endpoint->address) != 0)
		return DIRAUTH_ERR_SYNTAX;
	if (!text_field_is_name(endpoint->region, sizeof(endpoint->region), REGION_MAX))
		return DIRAUTH_ERR_SYNTAX;
	if (endpoint->has_key && !note_verifier_is_canonical(&endpoint->key))
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

/* Every rule of the grammar that is not about spelling. */
static int registration_check(const struct registration *r)
{
	if (!text_field_is_name(r->namespace_name, sizeof(r->namespace_name), NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	if (!service_class_name(r->service_class))
		return DIRAUTH_ERR_SYNTAX;
	if (!note_verifier_is_canonical(&r->provider))
		return DIRAUTH_ERR_SYNTAX;
	if (r->sequence < 1 || r->expires <= r->issued_at)
		return DIRAUTH_ERR_SYNTAX;
	if (r->endpoint_count == 0 || !r->endpoints)
		return DIRAUTH_ERR_SYNTAX;
	if (r->endpoint_count > REGISTRATION_MAX_ENDPOINTS)
		return DIRAUTH_ERR_BOUNDS;
	for (size_t i = 0; i < r->endpoint_count; i++) {
		int rc = endpoint_check(&r->endpoints[i]);
		if (rc)
			return rc;
		if (i > 0 && memcmp(r->endpoints[i - 1].endpoint_id, r->endpoints[i].endpoint_id,
		                    ENDPOINT_ID_SIZE) >= 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	return 0;
}

int registration_encode(const struct registration *r, struct buffer *out)
{
	int rc = registration_check(r);
	if (rc)
		return rc;
	char provider[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(&r->provider, provider);

	size_t start = out->len;
	char service_hex[2 * SERVICE_ID_SIZE + 1];
	hex_encode(r->service_id, SERVICE_ID_SIZE, service_hex);
	rc = buffer_appendf(out,
	                    "dirauth registration v1\nnamespace %s\nservice %s\nclass %s\nprovider %s\n"
	                    "sequence %llu\nissued-at %llu\nexpires %llu\n",
	                    r->namespace_name, service_hex, service_class_name(r->service_class), provider,
	                    (unsigned long long)r->sequence, (unsigned long long)r->issued_at,
	                    (unsigned long long)r->expires);
	for (size_t i = 0; rc == 0 && i < r->endpoint_count; i++) {
		const struct endpoint_descriptor *e = &r->endpoints[i];
		char endpoint_hex[2 * ENDPOINT_ID_SIZE + 1];
		const char *transport = transport_name(e->transport),
		           *capacity = capacity_class_name(e->capacity),
		           *profile = capability_profile_name(e->profile);
		if (!transport || !capacity || !profile) {
			rc = DIRAUTH_ERR_SYNTAX;
			break;
		}
		hex_encode(e->endpoint_id, ENDPOINT_ID_SIZE, endpoint_hex);
		rc = buffer_appendf(out, "endpoint %s %s %s %s %s %s\n", endpoint_hex, transport, e->address,
		                    e->region, capacity, profile);
	}
	for (size_t i = 0; rc == 0 && i < r->endpoint_count; i++) {
		const struct endpoint_descriptor *e = &r->endpoints[i];
		if (!e->has_key)
			continue;
		char endpoint_hex[2 * ENDPOINT_ID_SIZE + 1], key[NOTE_VERIFIER_KEY_MAX + 1];
		hex_encode(e->endpoint_id, ENDPOINT_ID_SIZE, endpoint_hex);
		note_verifier_format(&e->key, key);
		rc = buffer_appendf(out, "endpoint-key %s %s\n", endpoint_hex, key);
	}
	if (rc == 0 && out->len - start > REGISTRATION_MAX_BYTES)
		rc = DIRAUTH_ERR_BOUNDS;
	if (rc) {
		out->len = start;
		if (out->data)
			out->data[start] = 0;
	}
	return rc;
}

static int endpoint_compare(const void *a, const void *b)
{
	const struct endpoint_descriptor *left = a, *right = b;
	return memcmp(left->endpoint_id, right->endpoint_id, ENDPOINT_ID_SIZE);
}

const struct endpoint_descriptor *registration_find_endpoint(const struct registration *r,
                                                             const uint8_t endpoint_id[ENDPOINT_ID_SIZE])
{
	size_t low = 0, high = r->endpoints ? r->endpoint_count : 0;
	while (low < high) { /* the endpoints are sorted by id */
		size_t middle = low + (high - low) / 2;
		int order = memcmp(r->endpoints[middle].endpoint_id, endpoint_id, ENDPOINT_ID_SIZE);
		if (order == 0)
			return &r->endpoints[middle];
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return NULL;
}

void registration_sort_endpoints(struct registration *r)
{
	if (r->endpoint_count > 1)
		qsort(r->endpoints, r->endpoint_count, sizeof *r->endpoints, endpoint_compare);
}

void registration_clear(struct registration *r)
{
	if (!r)
		return;
	free(r->endpoints);
	memset(r, 0, sizeof(*r));
}

/* "endpoint <id> <transport> <address> <region> <capacity> <profile>" without the keyword. */
static int endpoint_parse(struct text_span rest, struct endpoint_descriptor *out)
{
	struct text_span field;
	int rc = text_next_field(&rest, &field);
	if (rc)
		return rc;
	if (text_parse_hex(field, out->endpoint_id, ENDPOINT_ID_SIZE))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_next_field(&rest, &field)) != 0 ||
	    (rc = transport_parse(field.data, field.len, &out->transport)))
		return rc;
	if ((rc = text_next_field(&rest, &field)) != 0)
		return rc;
	if (field.len > ENDPOINT_ADDRESS_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = text_copy(field, out->address, sizeof(out->address))) != 0)
		return rc;
	if ((rc = text_next_field(&rest, &field)) != 0)
		return rc;
	if (!text_is_name(field, REGION_MAX))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_copy(field, out->region, sizeof(out->region))) != 0)
		return rc;
	if ((rc = text_next_field(&rest, &field)) != 0 ||
	    (rc = capacity_class_parse(field.data, field.len, &out->capacity)) != 0)
		return rc;
	if ((rc = text_next_field(&rest, &field)) != 0 ||
	    (rc = capability_profile_parse(field.data, field.len, &out->profile)) != 0)
		return rc;
	return rest.len == 0 ? 0 : DIRAUTH_ERR_SYNTAX;
}

/* "endpoint-key <endpoint id> <verifier key>": the endpoint must be listed above. */
static int endpoint_key_parse(struct line_reader *reader, struct registration *r)
{
	struct text_span value;
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	int rc = lines_expect(reader, "endpoint-key", &value);
	if (rc)
		return rc;
	if ((rc = text_next_hex(&value, endpoint_id, ENDPOINT_ID_SIZE)) != 0)
		return rc;
	struct endpoint_descriptor *endpoint = NULL;
	for (size_t i = 0; !endpoint && i < r->endpoint_count; i++)
		if (memcmp(r->endpoints[i].endpoint_id, endpoint_id, ENDPOINT_ID_SIZE) == 0)
			endpoint = &r->endpoints[i];
	if (!endpoint || endpoint->has_key)
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = note_verifier_parse(value.data, value.len, &endpoint->key)) != 0)
		return rc;
	endpoint->has_key = 1;
	return 0;
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct registration *out = parsed;
	struct line_reader reader;
	struct text_span value;
	int rc;
	lines_init(&reader, text, len, REGISTRATION_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth registration v1")) != 0)
		return rc;
	if ((rc = lines_expect_name(&reader, "namespace", out->namespace_name,
	                            sizeof(out->namespace_name))) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "service", &value)) != 0)
		return rc;
	if (text_parse_hex(value, out->service_id, SERVICE_ID_SIZE))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = lines_expect(&reader, "class", &value)) != 0 ||
	    (rc = service_class_parse(value.data, value.len, &out->service_class)) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "provider", &value)) != 0 ||
	    (rc = note_verifier_parse(value.data, value.len, &out->provider)) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "sequence", &value)) != 0 ||
	    (rc = text_parse_u64(value, &out->sequence)) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "issued-at", &value)) != 0 ||
	    (rc = text_parse_u64(value, &out->issued_at)) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "expires", &value)) != 0 ||
	    (rc = text_parse_u64(value, &out->expires)) != 0)
		return rc;

	size_t capacity = 0;
	while (!lines_at_end(&reader) && !lines_peek_keyword(&reader, "endpoint-key")) {
		if (out->endpoint_count == REGISTRATION_MAX_ENDPOINTS)
			return DIRAUTH_ERR_BOUNDS;
		if ((rc = lines_expect(&reader, "endpoint", &value)) != 0)
			return rc;
		if (out->endpoint_count == capacity) {
			size_t grown = capacity ? capacity * 2 : 4;
			if (grown > REGISTRATION_MAX_ENDPOINTS)
				grown = REGISTRATION_MAX_ENDPOINTS;
			struct endpoint_descriptor *endpoints =
			    realloc(out->endpoints, grown * sizeof(*endpoints));
			if (!endpoints)
				return DIRAUTH_ERR_NOMEM;
			out->endpoints = endpoints;
			capacity = grown;
		}
		struct endpoint_descriptor *endpoint = &out->endpoints[out->endpoint_count];
		memset(endpoint, 0, sizeof(*endpoint));
		if ((rc = endpoint_parse(value, endpoint)) != 0)
			return rc;
		out->endpoint_count++;
	}
	if (out->endpoint_count == 0)
		return DIRAUTH_ERR_SYNTAX;
	/* The endpoints' own keys. Order and uniqueness are left to the canonical check: a line out
	 * of order or naming an endpoint twice does not re-encode to the same bytes. */
	while (!lines_at_end(&reader)) {
		if ((rc = endpoint_key_parse(&reader, out)) != 0)
			return rc;
	}
	return 0;
}

static int encode_registration(const void *value, struct buffer *out)
{
	return registration_encode(value, out);
}

static void clear_registration(void *value)
{
	registration_clear(value);
}

static const struct lines_codec registration_codec = {
    .max_bytes = REGISTRATION_MAX_BYTES,
    .value_size = sizeof(struct registration),
    .parse_fields = parse_fields,
    .encode = encode_registration,
    .clear = clear_registration,
};

int registration_parse(const uint8_t *text, size_t len, struct registration *out)
{
	return lines_parse_document(&registration_codec, text, len, out);
}

int registration_parse_note(const uint8_t *buf, size_t len, struct registration *out, struct note **note_out)
{
	memset(out, 0, sizeof(*out));
	return note_parse_statement(buf, len, REGISTRATION_MAX_BYTES, &registration_codec, out, note_out);
}

int registration_verify_note(const struct note *note, const struct registration *r)
{
	return note_verify_threshold(note, &r->provider, 1, 1);
}

int registration_parse_signed(const uint8_t *buf, size_t len, struct registration *out,
                              struct note **note_out)
{
	struct note *note = NULL;
	int rc = registration_parse_note(buf, len, out, &note);
	if (rc == 0)
		rc = registration_verify_note(note, out);
	if (rc)
		registration_clear(out);
	return note_statement_keep(rc, note, note_out);
}

int registration_note_sequence(const uint8_t *note, size_t len, uint64_t *sequence)
{
	static const char *const keywords[] = {"namespace", "service", "class", "provider"};
	struct line_reader reader;
	struct text_span value;
	lines_init(&reader, note, len, REGISTRATION_LINE_MAX);
	int rc = lines_expect_exact(&reader, "dirauth registration v1");
	for (size_t k = 0; rc == 0 && k < sizeof keywords / sizeof keywords[0]; k++)
		rc = lines_expect(&reader, keywords[k], &value);
	if (rc == 0)
		rc = lines_expect_u64(&reader, "sequence", sequence);
	if (rc == 0 && *sequence == 0)
		rc = DIRAUTH_ERR_SYNTAX;
	return rc;
}
