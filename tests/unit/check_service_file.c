/*
 * check_service_file.c: the YAML service description parser of dirauthctl register.
 *
 * The file is written by people, so what matters is that every mistake is refused and named
 * with its line ("FILE:LINE: problem"), and that nothing outside the grammar (unknown or
 * duplicate keys, aliases, anchors, tags, extra documents, deep nesting, oversized input) gets
 * through. The valid cases check every field lands where register expects it.
 */
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/registration.h"
#include "ctl/service_file.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEX_SERVICE "5a00000000000000000000000000000000000000000000000000000000000001"
#define HEX_A       "0a00000000000000000000000000000000000000000000000000000000000001"
#define HEX_B       "0b00000000000000000000000000000000000000000000000000000000000002"

#define NS  "namespace: mix\n"
#define SVC "service: " HEX_SERVICE "\n"
#define CLS "class: mix-gateway\n"
#define EPS "endpoints:\n"
/* An endpoint item: six lines, the first holding its id. */
#define EP(id)                                                                                               \
	"  - id: " id "\n    transport: quic\n    address: 192.0.2.10:443\n    region: eu-west\n"            \
	"    capacity: medium\n    profile: modern\n"

static int parse_text(const char *text, struct ctl_service_file *out, char *error, size_t cap)
{
	return ctl_service_file_parse((const uint8_t *)text, strlen(text), "t.yaml", out, error, cap);
}

START_TEST(test_example_file_parses)
{
	struct ctl_service_file file;
	char error[CTL_SERVICE_FILE_ERROR_MAX];
	char hex[65];
	size_t len = 0;
	uint8_t *data = test_read_file(test_source_path("keys-example/service-a.yaml"), &len);

	ck_assert_int_eq(ctl_service_file_parse(data, len, "service-a.yaml", &file, error, sizeof(error)), 0);
	ck_assert_str_eq(file.namespace_name, "mix");
	hex_encode(file.service_id, SERVICE_ID_SIZE, hex);
	ck_assert_str_eq(hex, "5a00000000000000000000000000000000000000000000000000000000000001");
	ck_assert_int_eq(file.service_class, SERVICE_CLASS_MIX_GATEWAY);
	ck_assert_int_eq(file.has_sequence, 0);
	ck_assert_uint_eq(file.validity_seconds, 86400);
	ck_assert_uint_eq(file.endpoint_count, 2);
	ck_assert_int_eq(file.endpoints[0].transport, TRANSPORT_QUIC);
	ck_assert_str_eq(file.endpoints[0].address, "192.0.2.10:443");
	ck_assert_str_eq(file.endpoints[0].region, "eu-west");
	ck_assert_int_eq(file.endpoints[0].capacity, CAPACITY_MEDIUM);
	ck_assert_int_eq(file.endpoints[0].profile, PROFILE_MODERN);
	ck_assert_int_eq(file.endpoints[1].transport, TRANSPORT_TLS);
	ck_assert_int_eq(file.endpoints[1].capacity, CAPACITY_HIGH);
	ck_assert_int_eq(file.endpoints[1].profile, PROFILE_BASELINE);
	ctl_service_file_clear(&file);
	free(data);

	data = test_read_file(test_source_path("keys-example/service-b.yaml"), &len);
	ck_assert_int_eq(ctl_service_file_parse(data, len, "service-b.yaml", &file, error, sizeof(error)), 0);
	ck_assert_int_eq(file.service_class, SERVICE_CLASS_MAILBOX_PROVIDER);
	ck_assert_uint_eq(file.validity_seconds, 3600);
	ck_assert_uint_eq(file.endpoint_count, 1);
	ctl_service_file_clear(&file);
	free(data);
}
END_TEST

START_TEST(test_all_fields_and_flow_style)
{
	struct ctl_service_file file;
	char error[CTL_SERVICE_FILE_ERROR_MAX];
	const char *text = "# a comment\n"
	                   "namespace: \"mail\"\n"
	                   "service: '" HEX_SERVICE "'\n"
	                   "class: bridge\n"
	                   "sequence: 7\n"
	                   "validity_seconds: 600\n"
	                   "endpoints:\n"
	                   "  - {id: " HEX_B ", transport: bridge, address: obfs4_bridge-1, region: us-east,"
	                   " capacity: low, profile: hybrid-crypto}\n"
	                   "  - id: " HEX_A "\n"
	                   "    transport: onion\n"
	                   "    address: route_descriptor\n"
	                   "    region: ap-south\n"
	                   "    capacity: high\n"
	                   "    profile: high-capacity\n";

	ck_assert_int_eq(parse_text(text, &file, error, sizeof(error)), 0);
	ck_assert_str_eq(file.namespace_name, "mail");
	ck_assert_int_eq(file.service_class, SERVICE_CLASS_BRIDGE);
	ck_assert_int_eq(file.has_sequence, 1);
	ck_assert_uint_eq(file.sequence, 7);
	ck_assert_uint_eq(file.validity_seconds, 600);
	ck_assert_uint_eq(file.endpoint_count, 2);
	/* File order is kept; register sorts by id. */
	ck_assert_int_eq(file.endpoints[0].endpoint_id[0], 0x0b);
	ck_assert_int_eq(file.endpoints[0].transport, TRANSPORT_BRIDGE);
	ck_assert_str_eq(file.endpoints[0].address, "obfs4_bridge-1");
	ck_assert_int_eq(file.endpoints[0].profile, PROFILE_HYBRID_CRYPTO);
	ck_assert_int_eq(file.endpoints[1].transport, TRANSPORT_ONION);
	ck_assert_int_eq(file.endpoints[1].profile, PROFILE_HIGH_CAPACITY);
	ctl_service_file_clear(&file);
}
END_TEST

struct refusal {
	const char *name;
	const char *text;
	int rc;
	const char *where;   /* expected prefix "t.yaml:LINE: " */
	const char *problem; /* expected substring of the message */
};

static const struct refusal refusals[] = {
    {"unknown key", NS SVC CLS "colour: blue\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:4: ", "unknown key 'colour'"},
    {"duplicate key", NS NS SVC CLS EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:2: ", "duplicate key 'namespace'"},
    {"bad namespace", "namespace: Mix\n" SVC CLS EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:1: ", "namespace"},
    {"short service id", NS "service: 5a00\n" CLS EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:2: ", "service: expected 64 lower-case hex"},
    {"upper-case service id",
     NS "service: 5A00000000000000000000000000000000000000000000000000000000000001\n" CLS EPS EP(HEX_A),
     DIRAUTH_ERR_SYNTAX, "t.yaml:2: ", "service: expected 64 lower-case hex"},
    {"unknown class", NS SVC "class: web-server\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:3: ", "unknown service class 'web-server'"},
    {"sequence zero", NS SVC CLS "sequence: 0\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX, "t.yaml:4: ", "sequence"},
    {"sequence negative", NS SVC CLS "sequence: -3\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:4: ", "sequence"},
    {"sequence leading zero", NS SVC CLS "sequence: 07\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:4: ", "sequence"},
    {"sequence overflow", NS SVC CLS "sequence: 18446744073709551616\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:4: ", "sequence"},
    {"validity zero", NS SVC CLS "validity_seconds: 0\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:4: ", "validity_seconds"},
    {"validity too long", NS SVC CLS "validity_seconds: 999999999\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:4: ", "validity_seconds"},
    {"empty value", NS "service:\n" CLS EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:2: ", "service: empty value"},
    {"missing service", NS CLS EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX, "t.yaml:1: ", "missing 'service'"},
    {"missing endpoints", NS SVC CLS, DIRAUTH_ERR_SYNTAX, "t.yaml:1: ", "missing 'endpoints'"},
    {"no endpoints", NS SVC CLS "endpoints: []\n", DIRAUTH_ERR_SYNTAX, "t.yaml:4: ", "at least one endpoint"},
    {"endpoints not a list", NS SVC CLS "endpoints: many\n", DIRAUTH_ERR_SYNTAX,
     "t.yaml:4: ", "endpoints: expected a list"},
    {"value is a list", NS SVC "class: [mix-gateway]\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:3: ", "class: expected a single value"},
    {"endpoint unknown key", NS SVC CLS EPS EP(HEX_A) "    colour: red\n", DIRAUTH_ERR_SYNTAX,
     "t.yaml:11: ", "unknown key 'colour'"},
    {"endpoint duplicate key", NS SVC CLS EPS EP(HEX_A) "    region: eu-north\n", DIRAUTH_ERR_SYNTAX,
     "t.yaml:11: ", "duplicate key 'region'"},
    {"endpoint missing region",
     NS SVC CLS EPS "  - id: " HEX_A "\n    transport: quic\n    address: 192.0.2.10:443\n"
                    "    capacity: medium\n    profile: modern\n",
     DIRAUTH_ERR_SYNTAX, "t.yaml:5: ", "missing 'region'"},
    {"endpoint bad id", NS SVC CLS EPS "  - id: 12\n    transport: quic\n", DIRAUTH_ERR_SYNTAX,
     "t.yaml:5: ", "id: expected 64 lower-case hex"},
    {"endpoint bad transport", NS SVC CLS EPS "  - id: " HEX_A "\n    transport: carrier-pigeon\n",
     DIRAUTH_ERR_SYNTAX, "t.yaml:6: ", "transport"},
    {"endpoint address without port",
     NS SVC CLS EPS "  - id: " HEX_A "\n    transport: quic\n    address: 192.0.2.10\n    region: eu-west\n"
                    "    capacity: medium\n    profile: modern\n",
     DIRAUTH_ERR_SYNTAX, "t.yaml:7: ", "address: not a valid quic address"},
    {"endpoint bad region",
     NS SVC CLS EPS "  - id: " HEX_A "\n    transport: quic\n    address: 192.0.2.10:443\n    region: EU\n",
     DIRAUTH_ERR_SYNTAX, "t.yaml:8: ", "region"},
    {"endpoint bad capacity",
     NS SVC CLS EPS "  - id: " HEX_A "\n    transport: quic\n    address: 192.0.2.10:443\n    region: eu\n"
                    "    capacity: 73%\n",
     DIRAUTH_ERR_SYNTAX, "t.yaml:9: ", "capacity"},
    {"endpoint bad profile",
     NS SVC CLS EPS "  - id: " HEX_A "\n    transport: quic\n    address: 192.0.2.10:443\n    region: eu\n"
                    "    capacity: low\n    profile: legacy\n",
     DIRAUTH_ERR_SYNTAX, "t.yaml:10: ", "profile"},
    {"endpoint not a mapping", NS SVC CLS EPS "  - just-a-string\n", DIRAUTH_ERR_SYNTAX,
     "t.yaml:5: ", "endpoint: expected a mapping"},
    {"duplicate endpoint id", NS SVC CLS EPS EP(HEX_A) EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:11: ", "endpoint listed twice"},
    {"list as a key", NS SVC CLS "? [colour]\n: blue\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:4: ", "service description: expected a key, found a list"},
    {"anchor", "namespace: &n mix\n" SVC CLS EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:1: ", "anchors are not allowed"},
    {"alias", "namespace: mix\nservice: " HEX_SERVICE "\nclass: *n\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:3: ", NULL},
    {"tag", "namespace: !!str mix\n" SVC CLS EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:1: ", "tags are not allowed"},
    {"two documents", NS SVC CLS EPS EP(HEX_A) "---\n" NS, DIRAUTH_ERR_SYNTAX,
     "t.yaml:11: ", "only one document"},
    {"top level list", "- namespace: mix\n", DIRAUTH_ERR_SYNTAX, "t.yaml:1: ", "expected a mapping"},
    {"top level scalar", "mix\n", DIRAUTH_ERR_SYNTAX, "t.yaml:1: ", "expected a mapping"},
    {"empty file", "", DIRAUTH_ERR_SYNTAX, "t.yaml:1: ", "empty service description"},
    {"comments only", "# nothing here\n", DIRAUTH_ERR_SYNTAX, "t.yaml:", "empty service description"},
    {"non-ASCII value",
     NS SVC CLS EPS "  - id: " HEX_A "\n    transport: quic\n    address: 192.0.2.10:443\n"
                    "    region: \xc3\xa9u\n",
     DIRAUTH_ERR_SYNTAX, "t.yaml:8: ", "printable ASCII"},
    {"escaped control character", "namespace: \"mi\\0x\"\n" SVC CLS EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:1: ", "printable ASCII"},
    {"YAML syntax error", NS SVC "class: [mix-gateway\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX, "t.yaml:", NULL},
    {"tab indentation", NS SVC CLS EPS "\t- id: " HEX_A "\n", DIRAUTH_ERR_SYNTAX, "t.yaml:5: ", NULL},
    /* The tree is read before the grammar is checked, so nesting past the bound is refused as a
     * bound, wherever it is; within the bound, a list where a value goes is a grammar error. */
    {"deep nesting",
     NS SVC "class: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n" EPS EP(HEX_A),
     DIRAUTH_ERR_BOUNDS, "t.yaml:3: ", "nested too deeply"},
    {"nesting one past the bound", NS SVC "class: [[[[x]]]]\n" EPS EP(HEX_A), DIRAUTH_ERR_BOUNDS,
     "t.yaml:3: ", "nested too deeply"},
    {"nesting at the bound", NS SVC "class: [[[x]]]\n" EPS EP(HEX_A), DIRAUTH_ERR_SYNTAX,
     "t.yaml:3: ", "class: expected a single value"},
};

/* An endpoint's own key: optional, a verifier key read back as itself; anything else refused on
 * its line. */
START_TEST(test_endpoint_key)
{
	static const char key[] = "endpoint.example+c53d41c9+Ad3jvM7H86ZqERX0XXIPTcE1w658TiLco4/bHv1qSV/4";
	struct ctl_service_file file;
	struct note_verifier expected;
	char error[CTL_SERVICE_FILE_ERROR_MAX];
	char text[2048];

	snprintf(text, sizeof(text), NS SVC CLS EPS EP(HEX_A) "    key: %s\n" EP(HEX_B), key);
	ck_assert_int_eq(parse_text(text, &file, error, sizeof(error)), 0);
	ck_assert_int_eq(note_verifier_parse(key, strlen(key), &expected), 0);
	ck_assert_int_eq(file.endpoints[0].has_key, 1);
	ck_assert(note_verifier_equal(&file.endpoints[0].key, &expected));
	ck_assert_int_eq(file.endpoints[1].has_key, 0);
	ctl_service_file_clear(&file);

	/* A key id that does not match the key, a bare word. */
	const char *bad[] = {"endpoint.example+c53d41c8+Ad3jvM7H86ZqERX0XXIPTcE1w658TiLco4/bHv1qSV/4",
	                     "endpoint.example"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), NS SVC CLS EPS EP(HEX_A) "    key: %s\n", bad[i]);
		ck_assert_int_eq(parse_text(text, &file, error, sizeof(error)), DIRAUTH_ERR_SYNTAX);
		ck_assert_msg(
		    strncmp(error, "t.yaml:11: key: expected the endpoint's Ed25519 verifier key",
		            strlen("t.yaml:11: key: expected the endpoint's Ed25519 verifier key")) == 0,
		    "%s", error);
	}
}
END_TEST

START_TEST(test_refusals_name_their_line)
{
	const struct refusal *refusal = &refusals[_i];
	struct ctl_service_file file;
	char error[CTL_SERVICE_FILE_ERROR_MAX];
	int rc = parse_text(refusal->text, &file, error, sizeof(error));

	ck_assert_msg(rc == refusal->rc, "%s: rc %d (%s), expected %d", refusal->name, rc, error,
	              refusal->rc);
	ck_assert_msg(strncmp(error, refusal->where, strlen(refusal->where)) == 0,
	              "%s: message '%s', expected '%s'", refusal->name, error, refusal->where);
	if (refusal->problem != NULL)
		ck_assert_msg(strstr(error, refusal->problem) != NULL, "%s: message '%s' lacks '%s'",
		              refusal->name, error, refusal->problem);
	/* A refused parse leaves nothing to free and nothing half-filled. */
	ck_assert_ptr_null(file.endpoints);
	ck_assert_uint_eq(file.endpoint_count, 0);
	ctl_service_file_clear(&file);
}
END_TEST

START_TEST(test_oversized_file_refused)
{
	struct ctl_service_file file;
	char error[CTL_SERVICE_FILE_ERROR_MAX];
	size_t len = CTL_SERVICE_FILE_MAX_BYTES + 1;
	char *text = malloc(len + 1);

	ck_assert_ptr_nonnull(text);
	memset(text, '#', len);
	text[len] = '\0';
	ck_assert_int_eq(
	    ctl_service_file_parse((const uint8_t *)text, len, "big.yaml", &file, error, sizeof(error)),
	    DIRAUTH_ERR_BOUNDS);
	ck_assert_ptr_nonnull(strstr(error, "big.yaml:1: larger than"));
	free(text);
}
END_TEST

START_TEST(test_too_many_endpoints_refused)
{
	struct ctl_service_file file;
	char error[CTL_SERVICE_FILE_ERROR_MAX];
	char *text = malloc(CTL_SERVICE_FILE_MAX_BYTES);
	size_t used = 0;

	ck_assert_ptr_nonnull(text);
	used += (size_t)snprintf(text, CTL_SERVICE_FILE_MAX_BYTES, NS SVC CLS EPS);
	/* Flow items keep 257 endpoints under the file bound. */
	for (unsigned i = 0; i <= REGISTRATION_MAX_ENDPOINTS; i++)
		used +=
		    (size_t)snprintf(text + used, CTL_SERVICE_FILE_MAX_BYTES - used,
		                     "- {id: %064x, transport: tls, address: a:1, region: r, capacity: low, "
		                     "profile: modern}\n",
		                     i + 1);
	ck_assert_uint_lt(used, CTL_SERVICE_FILE_MAX_BYTES);
	ck_assert_int_eq(
	    ctl_service_file_parse((const uint8_t *)text, used, "t.yaml", &file, error, sizeof(error)),
	    DIRAUTH_ERR_BOUNDS);
	/* Item 257 is on line 4 + 257. */
	ck_assert_msg(strstr(error, "t.yaml:261: endpoints: more than 256") != NULL, "message '%s'", error);
	free(text);
}
END_TEST

START_TEST(test_utf16_refused)
{
	/* "namespace: mix" in UTF-16LE behind its byte-order mark: a service file is UTF-8. */
	static const char text[] = "\xff\xfe"
	                           "n\0a\0m\0e\0s\0p\0a\0c\0e\0:\0 \0m\0i\0x\0\n\0";
	struct ctl_service_file file;
	char error[CTL_SERVICE_FILE_ERROR_MAX];

	ck_assert_int_eq(ctl_service_file_parse((const uint8_t *)text, sizeof(text) - 1, "t.yaml", &file,
	                                        error, sizeof(error)),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_msg(strncmp(error, "t.yaml:1: ", 10) == 0, "message '%s'", error);
}
END_TEST

START_TEST(test_null_error_buffer_and_name)
{
	struct ctl_service_file file;

	ck_assert_int_eq(ctl_service_file_parse((const uint8_t *)"x: 1\n", 5, NULL, &file, NULL, 0),
	                 DIRAUTH_ERR_SYNTAX);
	ctl_service_file_clear(NULL);
}
END_TEST

static Suite *service_file_suite(void)
{
	Suite *suite = suite_create("service_file");
	TCase *tc = tcase_create("parse");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_example_file_parses);
	tcase_add_test(tc, test_all_fields_and_flow_style);
	tcase_add_test(tc, test_endpoint_key);
	tcase_add_loop_test(tc, test_refusals_name_their_line, 0,
	                    (int)(sizeof(refusals) / sizeof(refusals[0])));
	tcase_add_test(tc, test_oversized_file_refused);
	tcase_add_test(tc, test_too_many_endpoints_refused);
	tcase_add_test(tc, test_utf16_refused);
	tcase_add_test(tc, test_null_error_buffer_and_name);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(service_file_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
