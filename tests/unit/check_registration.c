/*
 * check_registration.c: the registration codec: enum names, endpoint addresses, round trips,
 * every refusal of the parser and the encoder, signed registrations, and the vectors under
 * tests/vectors/documents/registration/ (rebuilt here and compared byte for byte).
 */
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/registration.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VECTOR_DIR        "tests/vectors/documents/registration/"
#define EXAMPLE_NAMESPACE "example-net"

/* The example registration's canonical text (into text) and signed note (into note). */
static void example_documents(struct buffer *text, struct buffer *note)
{
	struct test_key provider;
	struct registration r;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_example_registration(1, EXAMPLE_NAMESPACE, &provider, &r);
	ck_assert_int_eq(registration_encode(&r, text), 0);
	if (note)
		test_key_sign_note(&provider, 1, text->data, text->len, note);
	registration_clear(&r);
	test_key_free(&provider);
}

/* Start offsets of the lines of text (at most cap); returns the count. */
static size_t line_starts(const struct buffer *text, size_t *starts, size_t cap)
{
	size_t count = 0;
	for (size_t i = 0; i < text->len && count < cap; i++) {
		if (i == 0 || text->data[i - 1] == '\n')
			starts[count++] = i;
	}
	return count;
}

/* text with lines first and second (0-based) exchanged, or line first repeated (second == first). */
static void swap_or_repeat_lines(const struct buffer *text, size_t first, size_t second, struct buffer *out)
{
	size_t starts[64];
	size_t count = line_starts(text, starts, 64);
	ck_assert(first < count && second < count);
	for (size_t i = 0; i < count; i++) {
		size_t pick = i == first ? second : i == second ? first : i;
		size_t end = pick + 1 < count ? starts[pick + 1] : text->len;
		ck_assert_int_eq(buffer_append(out, text->data + starts[pick], end - starts[pick]), 0);
		if (first == second && i == first)
			ck_assert_int_eq(buffer_append(out, text->data + starts[pick], end - starts[pick]),
			                 0);
	}
}

/* text without line index (0-based). */
static void drop_line(const struct buffer *text, size_t index, struct buffer *out)
{
	size_t starts[64];
	size_t count = line_starts(text, starts, 64);
	ck_assert(index < count);
	size_t end = index + 1 < count ? starts[index + 1] : text->len;
	ck_assert_int_eq(buffer_append(out, text->data, starts[index]), 0);
	ck_assert_int_eq(buffer_append(out, text->data + end, text->len - end), 0);
}

struct invalid_case {
	const char *name;
	int expected;
};

/* Text-level variants of the example, each refused by registration_parse with expected. */
static const struct invalid_case invalid_texts[] = {
    {"double-space", DIRAUTH_ERR_SYNTAX},
    {"trailing-space", DIRAUTH_ERR_SYNTAX},
    {"crlf", DIRAUTH_ERR_SYNTAX},
    {"wrong-version", DIRAUTH_ERR_SYNTAX},
    {"unsorted-endpoints", DIRAUTH_ERR_SYNTAX},
    {"duplicate-endpoint", DIRAUTH_ERR_SYNTAX},
    {"bad-class", DIRAUTH_ERR_SYNTAX},
    {"bad-transport", DIRAUTH_ERR_SYNTAX},
    {"bad-capacity", DIRAUTH_ERR_SYNTAX},
    {"bad-profile", DIRAUTH_ERR_SYNTAX},
    {"upper-case-hex", DIRAUTH_ERR_SYNTAX},
    {"short-hex", DIRAUTH_ERR_SYNTAX},
    {"bad-namespace", DIRAUTH_ERR_SYNTAX},
    {"bad-region", DIRAUTH_ERR_SYNTAX},
    {"port-zero", DIRAUTH_ERR_SYNTAX},
    {"port-too-big", DIRAUTH_ERR_SYNTAX},
    {"port-leading-zero", DIRAUTH_ERR_SYNTAX},
    {"upper-case-host", DIRAUTH_ERR_SYNTAX},
    {"bad-ipv4", DIRAUTH_ERR_SYNTAX},
    {"bad-onion", DIRAUTH_ERR_SYNTAX},
    {"bad-provider-key-id", DIRAUTH_ERR_SYNTAX},
    {"sequence-zero", DIRAUTH_ERR_SYNTAX},
    {"sequence-leading-zero", DIRAUTH_ERR_SYNTAX},
    {"expires-not-after-issued", DIRAUTH_ERR_SYNTAX},
    {"missing-sequence", DIRAUTH_ERR_SYNTAX},
    {"fields-out-of-order", DIRAUTH_ERR_SYNTAX},
    {"no-endpoints", DIRAUTH_ERR_SYNTAX},
    {"extra-field", DIRAUTH_ERR_SYNTAX},
    {"unknown-line", DIRAUTH_ERR_SYNTAX},
    {"trailing-bytes", DIRAUTH_ERR_SYNTAX},
    {"missing-final-newline", DIRAUTH_ERR_SYNTAX},
    {"overlong-line", DIRAUTH_ERR_BOUNDS},
    {"too-many-endpoints", DIRAUTH_ERR_BOUNDS},
    {"oversized", DIRAUTH_ERR_BOUNDS},
};

static void build_invalid_text(const char *name, const struct buffer *valid, struct buffer *out)
{
	const uint8_t *v = valid->data;
	size_t n = valid->len;
	if (strcmp(name, "double-space") == 0) {
		test_text_replace(v, n, "class mix-gateway", "class  mix-gateway", out);
	} else if (strcmp(name, "trailing-space") == 0) {
		test_text_replace(v, n, "sequence 1\n", "sequence 1 \n", out);
	} else if (strcmp(name, "crlf") == 0) {
		test_text_replace(v, n, "sequence 1\n", "sequence 1\r\n", out);
	} else if (strcmp(name, "wrong-version") == 0) {
		test_text_replace(v, n, "dirauth registration v1", "dirauth registration v2", out);
	} else if (strcmp(name, "unsorted-endpoints") == 0) {
		swap_or_repeat_lines(valid, 8, 9, out);
	} else if (strcmp(name, "duplicate-endpoint") == 0) {
		swap_or_repeat_lines(valid, 9, 9, out);
	} else if (strcmp(name, "bad-class") == 0) {
		test_text_replace(v, n, "class mix-gateway", "class mix_gateway", out);
	} else if (strcmp(name, "bad-transport") == 0) {
		test_text_replace(v, n, " quic ", " quick ", out);
	} else if (strcmp(name, "bad-capacity") == 0) {
		test_text_replace(v, n, " high ", " huge ", out);
	} else if (strcmp(name, "bad-profile") == 0) {
		test_text_replace(v, n, " modern\n", " Modern\n", out);
	} else if (strcmp(name, "upper-case-hex") == 0 || strcmp(name, "short-hex") == 0) {
		char line[80] = "service ";
		/* the hex follows "dirauth registration v1\nnamespace example-net\nservice " (54 bytes) */
		memcpy(line + 8, v + 54, 64);
		line[72] = 0;
		char changed[80];
		memcpy(changed, line, sizeof(changed));
		if (strcmp(name, "short-hex") == 0) {
			changed[71] = 0;
		} else {
			for (char *p = changed + 8; *p; p++)
				if (*p >= 'a' && *p <= 'f')
					*p = (char)(*p - 'a' + 'A');
		}
		test_text_replace(v, n, line, changed, out);
	} else if (strcmp(name, "bad-namespace") == 0) {
		test_text_replace(v, n, "namespace example-net", "namespace Example-Net", out);
	} else if (strcmp(name, "bad-region") == 0) {
		test_text_replace(v, n, " us-east ", " us_east ", out);
	} else if (strcmp(name, "port-zero") == 0) {
		test_text_replace(v, n, "gw1.example.net:443", "gw1.example.net:0", out);
	} else if (strcmp(name, "port-too-big") == 0) {
		test_text_replace(v, n, "gw1.example.net:443", "gw1.example.net:65536", out);
	} else if (strcmp(name, "port-leading-zero") == 0) {
		test_text_replace(v, n, "gw1.example.net:443", "gw1.example.net:0443", out);
	} else if (strcmp(name, "upper-case-host") == 0) {
		test_text_replace(v, n, "gw1.example.net:443", "GW1.example.net:443", out);
	} else if (strcmp(name, "bad-ipv4") == 0) {
		test_text_replace(v, n, "gw1.example.net:443", "192.0.2.256:443", out);
	} else if (strcmp(name, "bad-onion") == 0) {
		test_text_replace(v, n, "route_Example-1", "route.Example-1", out);
	} else if (strcmp(name, "bad-provider-key-id") == 0) {
		test_text_replace(v, n, "provider provider.example+", "provider provider.example+0", out);
	} else if (strcmp(name, "sequence-zero") == 0) {
		test_text_replace(v, n, "sequence 1\n", "sequence 0\n", out);
	} else if (strcmp(name, "sequence-leading-zero") == 0) {
		test_text_replace(v, n, "sequence 1\n", "sequence 01\n", out);
	} else if (strcmp(name, "expires-not-after-issued") == 0) {
		test_text_replace(v, n, "expires 1769817600", "expires 1767225600", out);
	} else if (strcmp(name, "missing-sequence") == 0) {
		drop_line(valid, 5, out);
	} else if (strcmp(name, "fields-out-of-order") == 0) {
		swap_or_repeat_lines(valid, 6, 7, out);
	} else if (strcmp(name, "no-endpoints") == 0) {
		struct buffer tmp, tmp2;
		buffer_init(&tmp);
		buffer_init(&tmp2);
		drop_line(valid, 10, &tmp);
		drop_line(&tmp, 9, &tmp2);
		drop_line(&tmp2, 8, out);
		buffer_free(&tmp);
		buffer_free(&tmp2);
	} else if (strcmp(name, "extra-field") == 0) {
		test_text_replace(v, n, " modern\n", " modern extra\n", out);
	} else if (strcmp(name, "unknown-line") == 0) {
		ck_assert_int_eq(buffer_append(out, v, n), 0);
		ck_assert_int_eq(buffer_append_string(out, "contact ops@example.net\n"), 0);
	} else if (strcmp(name, "trailing-bytes") == 0) {
		ck_assert_int_eq(buffer_append(out, v, n), 0);
		ck_assert_int_eq(buffer_append_string(out, "\n"), 0);
	} else if (strcmp(name, "missing-final-newline") == 0) {
		ck_assert_int_eq(buffer_append(out, v, n - 1), 0);
	} else if (strcmp(name, "overlong-line") == 0) {
		char address[600];
		memset(address, 'a', sizeof(address) - 1);
		address[sizeof(address) - 1] = 0;
		test_text_replace(v, n, "route_Example-1", address, out);
	} else if (strcmp(name, "too-many-endpoints") == 0 || strcmp(name, "oversized") == 0) {
		/* The example's first 8 lines, then sorted endpoint lines: 257 short ones, or 200 with
		 * 255-byte addresses (about 75 KiB). */
		size_t starts[64];
		line_starts(valid, starts, 64);
		ck_assert_int_eq(buffer_append(out, v, starts[8]), 0);
		int oversized = strcmp(name, "oversized") == 0;
		char address[ENDPOINT_ADDRESS_MAX + 1];
		memset(address, 'b', ENDPOINT_ADDRESS_MAX);
		address[oversized ? ENDPOINT_ADDRESS_MAX : 1] = 0;
		for (unsigned i = 0; i < (oversized ? 200u : 257u); i++)
			ck_assert_int_eq(
			    buffer_appendf(out, "endpoint %064x onion %s eu-west low baseline\n", i, address),
			    0);
	} else {
		ck_abort_msg("no variant %s", name);
	}
}

START_TEST(test_enum_names)
{
	for (int i = 0; i < SERVICE_CLASS_COUNT; i++) {
		const char *name = service_class_name((enum service_class)i);
		enum service_class value;
		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(service_class_parse(name, strlen(name), &value), 0);
		ck_assert_int_eq(value, i);
	}
	for (int i = 0; i < TRANSPORT_COUNT; i++) {
		const char *name = transport_name((enum transport)i);
		enum transport value;
		ck_assert_int_eq(transport_parse(name, strlen(name), &value), 0);
		ck_assert_int_eq(value, i);
	}
	for (int i = 0; i < CAPACITY_COUNT; i++) {
		const char *name = capacity_class_name((enum capacity_class)i);
		enum capacity_class value;
		ck_assert_int_eq(capacity_class_parse(name, strlen(name), &value), 0);
		ck_assert_int_eq(value, i);
	}
	for (int i = 0; i < PROFILE_COUNT; i++) {
		const char *name = capability_profile_name((enum capability_profile)i);
		enum capability_profile value;
		ck_assert_int_eq(capability_profile_parse(name, strlen(name), &value), 0);
		ck_assert_int_eq(value, i);
	}
	ck_assert_str_eq(service_class_name(SERVICE_CLASS_FEDERATION_GATEWAY), "federation-gateway");
	ck_assert_str_eq(transport_name(TRANSPORT_BRIDGE), "bridge");
	ck_assert_str_eq(capacity_class_name(CAPACITY_MEDIUM), "medium");
	ck_assert_str_eq(capability_profile_name(PROFILE_HYBRID_CRYPTO), "hybrid-crypto");
	ck_assert_ptr_null(service_class_name(SERVICE_CLASS_COUNT));
	ck_assert_ptr_null(transport_name(TRANSPORT_COUNT));
	ck_assert_ptr_null(capacity_class_name(CAPACITY_COUNT));
	ck_assert_ptr_null(capability_profile_name(PROFILE_COUNT));
	enum service_class service_class;
	enum transport transport;
	enum capacity_class capacity;
	enum capability_profile profile;
	ck_assert_int_eq(service_class_parse("mix-gatewa", 10, &service_class), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(service_class_parse("mix-gateway ", 12, &service_class), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(service_class_parse("", 0, &service_class), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(transport_parse("QUIC", 4, &transport), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(capacity_class_parse("lowest", 6, &capacity), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(capability_profile_parse("hybrid", 6, &profile), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_endpoint_addresses)
{
	static const char *const good_host_port[] = {
	    "example.net:443",
	    "a:1",
	    "gw-1.eu.example.net:65535",
	    "192.0.2.1:443",
	    "0.0.0.0:80",
	    "[2001:db8::1]:8443",
	    "[::1]:443",
	    "[::ffff:192.0.2.1]:443",
	    "xn--bcher-kva.example:443",
	    "1a.example:443",
	};
	static const char *const bad_host_port[] = {
	    "example.net",
	    "example.net:",
	    ":443",
	    "example.net:0",
	    "example.net:65536",
	    "example.net:0443",
	    "example.net:+443",
	    "Example.net:443",
	    "-a.example:443",
	    "a-.example:443",
	    "a..example:443",
	    ".example:443",
	    "example.:443",
	    "exa_mple.net:443",
	    "192.0.2.256:443",
	    "192.0.2:443",
	    "192.0.2.01:443",
	    "1.2.3.4.5:443",
	    "[2001:db8::1]",
	    "[2001:DB8::1]:443",
	    "[]:443",
	    "[1234]:443",
	    "2001:db8::1:443",
	    "[2001:db8::1]443",
	    "[2001:db8::1:443",
	    "example.net:443 ",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example:443",
	    "",
	};
	for (size_t i = 0; i < sizeof(good_host_port) / sizeof(good_host_port[0]); i++) {
		ck_assert_msg(endpoint_address_check(TRANSPORT_QUIC, good_host_port[i]) == 0, "%s",
		              good_host_port[i]);
		ck_assert_msg(endpoint_address_check(TRANSPORT_TLS, good_host_port[i]) == 0, "%s",
		              good_host_port[i]);
		ck_assert_msg(endpoint_address_check(TRANSPORT_ONION, good_host_port[i]) ==
		                  DIRAUTH_ERR_SYNTAX,
		              "%s", good_host_port[i]);
	}
	for (size_t i = 0; i < sizeof(bad_host_port) / sizeof(bad_host_port[0]); i++)
		ck_assert_msg(endpoint_address_check(TRANSPORT_TLS, bad_host_port[i]) == DIRAUTH_ERR_SYNTAX,
		              "%s", bad_host_port[i]);
	ck_assert_int_eq(endpoint_address_check(TRANSPORT_ONION, "route_Example-1"), 0);
	ck_assert_int_eq(endpoint_address_check(TRANSPORT_BRIDGE, "A"), 0);
	ck_assert_int_eq(endpoint_address_check(TRANSPORT_BRIDGE, "a.b"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(endpoint_address_check(TRANSPORT_BRIDGE, "a b"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(endpoint_address_check(TRANSPORT_BRIDGE, ""), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(endpoint_address_check(TRANSPORT_BRIDGE, NULL), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(endpoint_address_check(TRANSPORT_COUNT, "a"), DIRAUTH_ERR_SYNTAX);
	char longest[ENDPOINT_ADDRESS_MAX + 2];
	memset(longest, 'x', sizeof(longest));
	longest[ENDPOINT_ADDRESS_MAX] = 0;
	ck_assert_int_eq(endpoint_address_check(TRANSPORT_ONION, longest), 0);
	longest[ENDPOINT_ADDRESS_MAX] = 'x';
	longest[ENDPOINT_ADDRESS_MAX + 1] = 0;
	ck_assert_int_eq(endpoint_address_check(TRANSPORT_ONION, longest), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_round_trip)
{
	struct test_key provider;
	struct registration r, parsed;
	struct buffer text, again;
	buffer_init(&text);
	buffer_init(&again);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_example_registration(1, EXAMPLE_NAMESPACE, &provider, &r);
	ck_assert_int_eq(registration_encode(&r, &text), 0);
	ck_assert_int_eq(registration_parse(text.data, text.len, &parsed), 0);
	ck_assert_str_eq(parsed.namespace_name, r.namespace_name);
	ck_assert_mem_eq(parsed.service_id, r.service_id, SERVICE_ID_SIZE);
	ck_assert_int_eq(parsed.service_class, r.service_class);
	ck_assert_str_eq(parsed.provider.name, "provider.example");
	ck_assert_uint_eq(parsed.provider.key_id, provider.verifier.key_id);
	ck_assert_mem_eq(parsed.provider.public_key, provider.verifier.public_key, 32);
	ck_assert_uint_eq(parsed.sequence, 1);
	ck_assert_uint_eq(parsed.issued_at, r.issued_at);
	ck_assert_uint_eq(parsed.expires, r.expires);
	ck_assert_uint_eq(parsed.endpoint_count, 3);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_mem_eq(parsed.endpoints[i].endpoint_id, r.endpoints[i].endpoint_id,
		                 ENDPOINT_ID_SIZE);
		ck_assert_int_eq(parsed.endpoints[i].transport, r.endpoints[i].transport);
		ck_assert_str_eq(parsed.endpoints[i].address, r.endpoints[i].address);
		ck_assert_str_eq(parsed.endpoints[i].region, r.endpoints[i].region);
		ck_assert_int_eq(parsed.endpoints[i].capacity, r.endpoints[i].capacity);
		ck_assert_int_eq(parsed.endpoints[i].profile, r.endpoints[i].profile);
	}
	ck_assert_int_eq(registration_encode(&parsed, &again), 0);
	ck_assert_uint_eq(again.len, text.len);
	ck_assert_mem_eq(again.data, text.data, text.len);

	/* Encoding appends: a second registration after the first keeps the first intact. */
	ck_assert_int_eq(registration_encode(&parsed, &again), 0);
	ck_assert_uint_eq(again.len, 2 * text.len);
	ck_assert_mem_eq(again.data + text.len, text.data, text.len);

	/* The largest grammar: 256 endpoints, one of each bridge transport. */
	struct registration big = r;
	big.endpoint_count = REGISTRATION_MAX_ENDPOINTS;
	big.endpoints = calloc(REGISTRATION_MAX_ENDPOINTS, sizeof(*big.endpoints));
	ck_assert_ptr_nonnull(big.endpoints);
	for (size_t i = 0; i < REGISTRATION_MAX_ENDPOINTS; i++) {
		big.endpoints[i].endpoint_id[31] = (uint8_t)i;
		big.endpoints[i].transport = TRANSPORT_BRIDGE;
		snprintf(big.endpoints[i].address, sizeof(big.endpoints[i].address), "bridge%zu", i);
		snprintf(big.endpoints[i].region, sizeof(big.endpoints[i].region), "r%zu", i % 7);
	}
	buffer_reset(&text);
	ck_assert_int_eq(registration_encode(&big, &text), 0);
	registration_clear(&parsed);
	ck_assert_int_eq(registration_parse(text.data, text.len, &parsed), 0);
	ck_assert_uint_eq(parsed.endpoint_count, REGISTRATION_MAX_ENDPOINTS);
	free(big.endpoints);

	registration_clear(&parsed);
	registration_clear(&r);
	registration_clear(NULL);
	buffer_free(&text);
	buffer_free(&again);
	test_key_free(&provider);
}
END_TEST

START_TEST(test_encode_refusals)
{
	struct test_key provider;
	struct registration valid, r;
	struct buffer out;
	buffer_init(&out);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_example_registration(1, EXAMPLE_NAMESPACE, &provider, &valid);
	struct endpoint_descriptor endpoints[3];

#define EXPECT_ENCODE(expected, change)                                                                      \
	do {                                                                                                 \
		r = valid;                                                                                   \
		memcpy(endpoints, valid.endpoints, sizeof(endpoints));                                       \
		r.endpoints = endpoints;                                                                     \
		change;                                                                                      \
		ck_assert_int_eq(registration_encode(&r, &out), expected);                                   \
		ck_assert_uint_eq(out.len, 0);                                                               \
	} while (0)

	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, r.namespace_name[0] = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(r.namespace_name, "Upper"));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(r.namespace_name, "-lead"));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, memset(r.namespace_name, 'a', sizeof(r.namespace_name)));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, r.service_class = SERVICE_CLASS_COUNT);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, r.provider.name[0] = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(r.provider.name, "has space"));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(r.provider.name, "caf\xc3\xa9"));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, r.provider.type = 2);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, r.provider.key_id ^= 1);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, r.sequence = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, r.expires = r.issued_at);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, r.expires = r.issued_at - 1);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, r.endpoint_count = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, r.endpoints = NULL);
	EXPECT_ENCODE(DIRAUTH_ERR_BOUNDS, r.endpoint_count = REGISTRATION_MAX_ENDPOINTS + 1);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, endpoints[1] = endpoints[0]);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, endpoints[2].endpoint_id[0] = 0;
	              endpoints[0].endpoint_id[0] = 0xff);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, endpoints[0].transport = TRANSPORT_COUNT);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, endpoints[0].capacity = CAPACITY_COUNT);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, endpoints[0].profile = PROFILE_COUNT);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(endpoints[0].address, "no port"));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, memset(endpoints[0].address, 'a', sizeof(endpoints[0].address)));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(endpoints[0].region, "EU"));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, endpoints[0].region[0] = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, memset(endpoints[0].region, 'a', sizeof(endpoints[0].region)));
#undef EXPECT_ENCODE

	/* Valid fields that together exceed REGISTRATION_MAX_BYTES. */
	r = valid;
	r.endpoint_count = 200;
	r.endpoints = calloc(200, sizeof(*r.endpoints));
	ck_assert_ptr_nonnull(r.endpoints);
	for (size_t i = 0; i < 200; i++) {
		r.endpoints[i].endpoint_id[0] = (uint8_t)i;
		r.endpoints[i].transport = TRANSPORT_ONION;
		memset(r.endpoints[i].address, 'c', ENDPOINT_ADDRESS_MAX);
		strcpy(r.endpoints[i].region, "eu-west");
	}
	ck_assert_int_eq(registration_encode(&r, &out), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(out.len, 0);
	free(r.endpoints);

	registration_clear(&valid);
	buffer_free(&out);
	test_key_free(&provider);
}
END_TEST

START_TEST(test_vectors_valid)
{
	struct buffer text, note;
	buffer_init(&text);
	buffer_init(&note);
	example_documents(&text, &note);
	test_vector_expect(VECTOR_DIR "valid.txt", text.data, text.len);
	test_vector_expect(VECTOR_DIR "valid.note", note.data, note.len);

	size_t len;
	uint8_t *file = test_read_file(test_source_path(VECTOR_DIR "valid.note"), &len);
	struct registration r;
	struct note *parsed_note = NULL;
	ck_assert_int_eq(registration_parse_signed(file, len, &r, &parsed_note), 0);
	ck_assert_ptr_nonnull(parsed_note);
	ck_assert_uint_eq(parsed_note->text_len, text.len);
	ck_assert_mem_eq(parsed_note->text, text.data, text.len);
	ck_assert_str_eq(r.namespace_name, EXAMPLE_NAMESPACE);
	ck_assert_uint_eq(r.endpoint_count, 3);
	note_free(parsed_note);
	registration_clear(&r);
	/* note_out may be NULL. */
	ck_assert_int_eq(registration_parse_signed(file, len, &r, NULL), 0);
	/* The sequence from the first lines alone; a text that is no registration is refused. */
	uint64_t sequence = 0;
	ck_assert_int_eq(registration_note_sequence(file, len, &sequence), 0);
	ck_assert_uint_eq(sequence, r.sequence);
	ck_assert_int_eq(registration_note_sequence(file, 40, &sequence), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(registration_note_sequence((const uint8_t *)"dirauth health v1\n", 18, &sequence),
	                 DIRAUTH_ERR_SYNTAX);
	registration_clear(&r);
	free(file);
	buffer_free(&text);
	buffer_free(&note);
}
END_TEST

START_TEST(test_vectors_invalid_text)
{
	struct buffer valid;
	buffer_init(&valid);
	example_documents(&valid, NULL);
	for (size_t i = 0; i < sizeof(invalid_texts) / sizeof(invalid_texts[0]); i++) {
		char relative[256];
		snprintf(relative, sizeof(relative), VECTOR_DIR "invalid/%s.txt", invalid_texts[i].name);
		struct buffer variant;
		buffer_init(&variant);
		build_invalid_text(invalid_texts[i].name, &valid, &variant);
		test_vector_expect(relative, variant.data, variant.len);
		size_t len;
		uint8_t *file = test_read_file(test_source_path(relative), &len);
		struct registration r;
		int rc = registration_parse(file, len, &r);
		ck_assert_msg(rc == invalid_texts[i].expected, "%s: got %d, expected %d",
		              invalid_texts[i].name, rc, invalid_texts[i].expected);
		ck_assert_ptr_null(r.endpoints);
		ck_assert_uint_eq(r.endpoint_count, 0);
		/* Signed by its own provider, the variant is refused just the same. */
		struct test_key provider;
		struct buffer note;
		buffer_init(&note);
		test_key_load(TEST_KEY_PROVIDER, &provider);
		if (len <= REGISTRATION_MAX_BYTES && note_text_check(file, len) == 0) {
			test_key_sign_note(&provider, 1, file, len, &note);
			rc = registration_parse_signed(note.data, note.len, &r, NULL);
			ck_assert_msg(rc == invalid_texts[i].expected, "signed %s: got %d",
			              invalid_texts[i].name, rc);
		}
		test_key_free(&provider);
		buffer_free(&note);
		free(file);
		buffer_free(&variant);
	}
	buffer_free(&valid);
}
END_TEST

static const struct invalid_case invalid_notes[] = {
    {"altered-signature", DIRAUTH_ERR_SIGNATURE},     {"altered-text", DIRAUTH_ERR_SIGNATURE},
    {"signed-by-other-key", DIRAUTH_ERR_UNKNOWN_KEY}, {"unsigned", DIRAUTH_ERR_SYNTAX},
    {"trailing-bytes", DIRAUTH_ERR_SYNTAX},           {"oversized", DIRAUTH_ERR_BOUNDS},
};

static void build_invalid_note(const char *name, const struct buffer *text, struct buffer *out)
{
	struct test_key provider, other;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_key_load(TEST_KEY_OTHER, &other);
	if (strcmp(name, "altered-signature") == 0) {
		struct note_signature signature;
		test_key_signature(&provider, text->data, text->len, &signature);
		signature.signature[10] ^= 0x01;
		ck_assert_int_eq(note_format(text->data, text->len, &signature, 1, out), 0);
	} else if (strcmp(name, "altered-text") == 0) {
		struct note_signature signature;
		struct buffer changed;
		buffer_init(&changed);
		test_key_signature(&provider, text->data, text->len, &signature);
		test_text_replace(text->data, text->len, "sequence 1\n", "sequence 2\n", &changed);
		ck_assert_int_eq(note_format(changed.data, changed.len, &signature, 1, out), 0);
		buffer_free(&changed);
	} else if (strcmp(name, "signed-by-other-key") == 0) {
		test_key_sign_note(&other, 1, text->data, text->len, out);
	} else if (strcmp(name, "unsigned") == 0) {
		ck_assert_int_eq(buffer_append(out, text->data, text->len), 0);
		ck_assert_int_eq(buffer_append_string(out, "\n"), 0);
	} else if (strcmp(name, "trailing-bytes") == 0) {
		test_key_sign_note(&provider, 1, text->data, text->len, out);
		ck_assert_int_eq(buffer_append_string(out, "x"), 0);
	} else if (strcmp(name, "oversized") == 0) {
		test_key_sign_note(&provider, 1, text->data, text->len, out);
		while (out->len <= REGISTRATION_MAX_BYTES)
			ck_assert_int_eq(buffer_append_string(out, "x"), 0);
	} else {
		ck_abort_msg("no variant %s", name);
	}
	test_key_free(&provider);
	test_key_free(&other);
}

START_TEST(test_vectors_invalid_signed)
{
	struct buffer text;
	buffer_init(&text);
	example_documents(&text, NULL);
	for (size_t i = 0; i < sizeof(invalid_notes) / sizeof(invalid_notes[0]); i++) {
		char relative[256];
		snprintf(relative, sizeof(relative), VECTOR_DIR "invalid/%s.note", invalid_notes[i].name);
		struct buffer variant;
		buffer_init(&variant);
		build_invalid_note(invalid_notes[i].name, &text, &variant);
		test_vector_expect(relative, variant.data, variant.len);
		size_t len;
		uint8_t *file = test_read_file(test_source_path(relative), &len);
		struct registration r;
		struct note placeholder;
		struct note *note = &placeholder; /* must be reset to NULL on failure */
		int rc = registration_parse_signed(file, len, &r, &note);
		ck_assert_msg(rc == invalid_notes[i].expected, "%s: got %d, expected %d",
		              invalid_notes[i].name, rc, invalid_notes[i].expected);
		ck_assert_ptr_null(note);
		ck_assert_ptr_null(r.endpoints);
		free(file);
		buffer_free(&variant);
	}
	buffer_free(&text);
}
END_TEST

START_TEST(test_signed_by_provider_and_others)
{
	/* A registration carries its provider's signature alone: an extra signature line, even
	 * beside a valid provider signature, is refused, so that no relay can change a record's
	 * bytes. A single signature by another key is not the provider's. */
	struct test_key keys[2];
	struct buffer text, note;
	buffer_init(&text);
	buffer_init(&note);
	example_documents(&text, NULL);
	test_key_load(TEST_KEY_OTHER, &keys[0]);
	test_key_load(TEST_KEY_PROVIDER, &keys[1]);
	test_key_sign_note(keys, 2, text.data, text.len, &note);
	struct registration r;
	ck_assert_int_eq(registration_parse_signed(note.data, note.len, &r, NULL), DIRAUTH_ERR_SYNTAX);
	buffer_reset(&note);
	test_key_sign_note(&keys[0], 1, text.data, text.len, &note);
	ck_assert_int_eq(registration_parse_signed(note.data, note.len, &r, NULL), DIRAUTH_ERR_UNKNOWN_KEY);
	buffer_reset(&note);
	test_key_sign_note(&keys[1], 1, text.data, text.len, &note);
	ck_assert_int_eq(registration_parse_signed(note.data, note.len, &r, NULL), 0);
	registration_clear(&r);

	/* A key with the provider's name and key id but another public key cannot stand in for it:
	 * its signature is checked against the provider's key and fails. */
	struct test_key impostor;
	uint8_t seed[32];
	test_key_example_seed(TEST_KEY_OTHER, seed);
	test_key_from_seed(seed, "provider.example", &impostor);
	struct note_signature signature;
	test_key_signature(&impostor, text.data, text.len, &signature);
	signature.key_id = keys[1].verifier.key_id;
	buffer_reset(&note);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, &note), 0);
	ck_assert_int_eq(registration_parse_signed(note.data, note.len, &r, NULL), DIRAUTH_ERR_SIGNATURE);

	test_key_free(&impostor);
	test_key_free(&keys[0]);
	test_key_free(&keys[1]);
	buffer_free(&text);
	buffer_free(&note);
}
END_TEST

static Suite *registration_suite(void)
{
	Suite *suite = suite_create("registration");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_enum_names);
	tcase_add_test(tc, test_endpoint_addresses);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_encode_refusals);
	tcase_add_test(tc, test_vectors_valid);
	tcase_add_test(tc, test_vectors_invalid_text);
	tcase_add_test(tc, test_vectors_invalid_signed);
	tcase_add_test(tc, test_signed_by_provider_and_others);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(registration_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
