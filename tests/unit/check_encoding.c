/*
 * check_encoding.c: tests of the shared text helpers: hex, base64 and decimal codecs
 * (schema/encoding.h), the bounded line reader and field helpers (schema/lines.h), and the
 * growable buffer (base/buffer.h).
 *
 * Every document parser leans on these for canonical form, so the tests dwell on the refusals:
 * each value must have exactly one accepted spelling.
 */
#include "base/buffer.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schema/names.h"
#include "schema/note.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* ---- hex ---- */

START_TEST(test_hex_round_trip)
{
	const uint8_t data[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
	char text[2 * sizeof(data) + 1];
	hex_encode(data, sizeof(data), text);
	ck_assert_str_eq(text, "00017f80abff");
	uint8_t back[sizeof(data)];
	ck_assert_int_eq(hex_decode(text, strlen(text), back, sizeof(back)), 0);
	ck_assert_mem_eq(back, data, sizeof(data));

	char empty[1] = {'x'};
	hex_encode(data, 0, empty);
	ck_assert_str_eq(empty, "");
	ck_assert_int_eq(hex_decode("", 0, back, 0), 0);
}
END_TEST

START_TEST(test_hex_refusals)
{
	uint8_t out[2];
	ck_assert_int_eq(hex_decode("ABCD", 4, out, 2), DIRAUTH_ERR_SYNTAX); /* upper case */
	ck_assert_int_eq(hex_decode("abC0", 4, out, 2), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(hex_decode("abc", 3, out, 2), DIRAUTH_ERR_SYNTAX);    /* odd length */
	ck_assert_int_eq(hex_decode("abcdef", 6, out, 2), DIRAUTH_ERR_SYNTAX); /* too long */
	ck_assert_int_eq(hex_decode("ab", 2, out, 2), DIRAUTH_ERR_SYNTAX);     /* too short */
	ck_assert_int_eq(hex_decode("0g00", 4, out, 2), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(hex_decode("0 00", 4, out, 2), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(hex_decode("+100", 4, out, 2), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(hex_decode("00\0"
	                            "0",
	                            4, out, 2),
	                 DIRAUTH_ERR_SYNTAX);
}
END_TEST

/* ---- base64 ---- */

/* RFC 4648 section 10 test vectors. */
static const struct {
	const char *plain;
	const char *encoded;
} rfc4648_vectors[] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

START_TEST(test_base64_rfc4648_vectors)
{
	for (size_t i = 0; i < sizeof(rfc4648_vectors) / sizeof(rfc4648_vectors[0]); i++) {
		const char *plain = rfc4648_vectors[i].plain;
		const char *encoded = rfc4648_vectors[i].encoded;
		size_t plain_len = strlen(plain);
		ck_assert_uint_eq(base64_encoded_length(plain_len), strlen(encoded));
		char text[16];
		base64_encode((const uint8_t *)plain, plain_len, text);
		ck_assert_str_eq(text, encoded);
		uint8_t out[16];
		size_t out_len = 99;
		ck_assert_int_eq(base64_decode(encoded, strlen(encoded), out, sizeof(out), &out_len), 0);
		ck_assert_uint_eq(out_len, plain_len);
		ck_assert_mem_eq(out, plain, plain_len);
	}
}
END_TEST

START_TEST(test_base64_all_bytes_round_trip)
{
	uint8_t data[256];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	for (size_t len = 0; len <= sizeof(data); len++) {
		char text[400];
		base64_encode(data, len, text);
		ck_assert_uint_eq(strlen(text), base64_encoded_length(len));
		uint8_t out[256];
		size_t out_len = 0;
		ck_assert_int_eq(base64_decode(text, strlen(text), out, sizeof(out), &out_len), 0);
		ck_assert_uint_eq(out_len, len);
		ck_assert_mem_eq(out, data, len);
	}
}
END_TEST

START_TEST(test_base64_refusals)
{
	uint8_t out[16];
	size_t out_len;
	static const char *const refused[] = {
	    "Zg",       /* missing padding */
	    "Zg=",      /* short padding */
	    "Zm9",      /* length not a multiple of 4 */
	    "Zh==",     /* non-zero bits under the padding */
	    "Zm9=",     /* non-zero bits under the padding */
	    "Zg==Zg==", /* padding in the middle */
	    "Z===",     /* too much padding */
	    "====",     /* only padding */
	    "Zm9v-_==", /* URL-safe alphabet */
	    "Zm9 v===", /* space */
	    "Zm9v\n",   /* newline */
	    "Zm=v",     /* padding before data */
	    "Z=9v",     /* padding before data */
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		ck_assert_msg(base64_decode(refused[i], strlen(refused[i]), out, sizeof(out), &out_len) ==
		                  DIRAUTH_ERR_SYNTAX,
		              "accepted %s", refused[i]);
	/* An embedded NUL is not base64. */
	ck_assert_int_eq(base64_decode("Zm\0v", 4, out, sizeof(out), &out_len), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_base64_bounds)
{
	uint8_t out[5];
	size_t out_len = 0;
	ck_assert_int_eq(base64_decode("Zm9vYmFy", 8, out, 5, &out_len), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(base64_decode("Zm9vYmE=", 8, out, 5, &out_len), 0);
	ck_assert_uint_eq(out_len, 5);
	ck_assert_int_eq(base64_decode("Zm9vYg==", 8, out, 3, &out_len), DIRAUTH_ERR_BOUNDS);
}
END_TEST

/* ---- decimal ---- */

START_TEST(test_decimal_accepts)
{
	uint64_t value = 1;
	ck_assert_int_eq(decimal_parse("0", 1, &value), 0);
	ck_assert_uint_eq(value, 0);
	ck_assert_int_eq(decimal_parse("42", 2, &value), 0);
	ck_assert_uint_eq(value, 42);
	ck_assert_int_eq(decimal_parse("18446744073709551615", 20, &value), 0);
	ck_assert(value == UINT64_MAX);
	ck_assert_int_eq(decimal_parse("10000000000000000000", 20, &value), 0);
	ck_assert(value == 10000000000000000000u);
}
END_TEST

START_TEST(test_decimal_refusals)
{
	uint64_t value = 7;
	static const char *const refused[] = {
	    "",
	    "00",
	    "01",
	    "-1",
	    "+1",
	    " 1",
	    "1 ",
	    "1a",
	    "0x10",
	    "1.0",
	    "18446744073709551616",  /* UINT64_MAX + 1 */
	    "99999999999999999999",  /* 20 digits, overflows */
	    "100000000000000000000", /* 21 digits */
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		ck_assert_msg(decimal_parse(refused[i], strlen(refused[i]), &value) == DIRAUTH_ERR_SYNTAX,
		              "accepted '%s'", refused[i]);
	ck_assert_uint_eq(value, 7); /* untouched on failure */
}
END_TEST

/* ---- line reader ---- */

static const uint8_t *bytes(const char *s)
{
	return (const uint8_t *)s;
}

START_TEST(test_lines_reads_lines)
{
	const char *doc = "kind test\nsize 12\nlast line here\n";
	struct line_reader reader;
	lines_init(&reader, bytes(doc), strlen(doc), 64);
	struct text_span line;
	ck_assert(!lines_at_end(&reader));
	ck_assert_int_eq(lines_next(&reader, &line), 0);
	ck_assert(text_equals(line, "kind test"));
	ck_assert_uint_eq(reader.line_number, 1);
	struct text_span value;
	ck_assert_int_eq(lines_expect(&reader, "size", &value), 0);
	ck_assert(text_equals(value, "12"));
	ck_assert_int_eq(lines_expect(&reader, "last", &value), 0);
	ck_assert(text_equals(value, "line here"));
	ck_assert_uint_eq(reader.line_number, 3);
	ck_assert(lines_at_end(&reader));
	ck_assert_int_eq(lines_next(&reader, &line), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_lines_refusals)
{
	static const char *const refused[] = {
	    "no newline",  "\n",     " leading\n", "trailing \n", "double  space\n",
	    "tab\there\n", "cr\r\n", "nul\0x\n",   "del\x7f\n",   "utf8 \xc3\xa9\n",
	};
	static const size_t lengths[] = {10, 1, 9, 10, 14, 9, 4, 6, 5, 8};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct line_reader reader;
		struct text_span line;
		lines_init(&reader, bytes(refused[i]), lengths[i], 64);
		ck_assert_msg(lines_next(&reader, &line) == DIRAUTH_ERR_SYNTAX, "accepted case %zu", i);
		ck_assert_uint_eq(reader.pos, 0);
	}
}
END_TEST

START_TEST(test_lines_length_bound)
{
	struct line_reader reader;
	struct text_span line;
	lines_init(&reader, bytes("abcde\n"), 6, 5);
	ck_assert_int_eq(lines_next(&reader, &line), 0); /* exactly the bound */
	ck_assert_uint_eq(line.len, 5);
	lines_init(&reader, bytes("abcdef\n"), 7, 5);
	ck_assert_int_eq(lines_next(&reader, &line), DIRAUTH_ERR_BOUNDS);
	/* Longer than the bound and unterminated: still a bound error, not a scan to the end. */
	lines_init(&reader, bytes("abcdefghij"), 10, 5);
	ck_assert_int_eq(lines_next(&reader, &line), DIRAUTH_ERR_BOUNDS);
	/* Within the bound but unterminated: a syntax error. */
	lines_init(&reader, bytes("abc"), 3, 5);
	ck_assert_int_eq(lines_next(&reader, &line), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_lines_expect_refusals)
{
	struct line_reader reader;
	struct text_span value;
	lines_init(&reader, bytes("size\n"), 5, 64);
	ck_assert_int_eq(lines_expect(&reader, "size", &value), DIRAUTH_ERR_SYNTAX); /* no value */
	lines_init(&reader, bytes("sizes 1\n"), 8, 64);
	ck_assert_int_eq(lines_expect(&reader, "size", &value), DIRAUTH_ERR_SYNTAX); /* longer keyword */
	lines_init(&reader, bytes("other 1\n"), 8, 64);
	ck_assert_int_eq(lines_expect(&reader, "size", &value), DIRAUTH_ERR_SYNTAX);
	lines_init(&reader, bytes("siz 1\n"), 6, 64);
	ck_assert_int_eq(lines_expect(&reader, "size", &value), DIRAUTH_ERR_SYNTAX);

	lines_init(&reader, bytes("end\nend \n"), 9, 64);
	ck_assert_int_eq(lines_expect_exact(&reader, "end"), 0);
	ck_assert_int_eq(lines_expect_exact(&reader, "end"), DIRAUTH_ERR_SYNTAX);
	lines_init(&reader, bytes("ends\n"), 5, 64);
	ck_assert_int_eq(lines_expect_exact(&reader, "end"), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_lines_expect_name)
{
	struct line_reader reader;
	char name[8];
	lines_init(&reader, bytes("namespace mix-1\n"), 16, 64);
	ck_assert_int_eq(lines_expect_name(&reader, "namespace", name, sizeof name), 0);
	ck_assert_str_eq(name, "mix-1");
	lines_init(&reader, bytes("namespace abcdefg\n"), 18, 64); /* exactly cap - 1 bytes */
	ck_assert_int_eq(lines_expect_name(&reader, "namespace", name, sizeof name), 0);
	ck_assert_str_eq(name, "abcdefg");
	const char *refused[] = {
	    "namespace abcdefgh\n", "namespace -mix\n",  "namespace mix-\n", "namespace Mix\n",
	    "namespace mi_x\n",     "namespace mix x\n", "name mix\n",       NULL};
	for (size_t i = 0; refused[i]; i++) {
		strcpy(name, "kept");
		lines_init(&reader, bytes(refused[i]), strlen(refused[i]), 64);
		ck_assert_msg(lines_expect_name(&reader, "namespace", name, sizeof name) ==
		                  DIRAUTH_ERR_SYNTAX,
		              "accepted case %zu", i);
		ck_assert_str_eq(name, "kept");
	}
	lines_init(&reader, bytes("namespace mix\n"), 14, 64);
	ck_assert_int_eq(lines_expect_name(&reader, "namespace", name, 0), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_lines_peek_keyword)
{
	struct line_reader reader;
	lines_init(&reader, bytes("size 1\nx\n"), 9, 64);
	ck_assert(lines_peek_keyword(&reader, "size"));
	ck_assert(!lines_peek_keyword(&reader, "siz"));
	ck_assert(!lines_peek_keyword(&reader, "size 1"));
	ck_assert_uint_eq(reader.pos, 0); /* peeking consumes nothing */
	struct text_span line;
	ck_assert_int_eq(lines_next(&reader, &line), 0);
	ck_assert(!lines_peek_keyword(&reader, "x"));
	ck_assert_int_eq(lines_next(&reader, &line), 0);
	ck_assert(!lines_peek_keyword(&reader, "x")); /* at the end */
	lines_init(&reader, bytes("size"), 4, 64);
	ck_assert(!lines_peek_keyword(&reader, "size")); /* no room for the space */
}
END_TEST

START_TEST(test_lines_expect_optional)
{
	struct line_reader reader;
	struct text_span value;
	lines_init(&reader, bytes("key a\nkey b\nother c\n"), 20, 64);
	ck_assert_int_eq(lines_expect_optional(&reader, "key", &value), 0);
	ck_assert(text_equals(value, "a"));
	ck_assert_int_eq(lines_expect_optional(&reader, "key", &value), 0);
	ck_assert(text_equals(value, "b"));
	size_t before = reader.pos;
	ck_assert_int_eq(lines_expect_optional(&reader, "key", &value), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_uint_eq(reader.pos, before); /* another keyword: nothing consumed */
	ck_assert_int_eq(lines_expect_optional(&reader, "other", &value), 0);
	ck_assert_int_eq(lines_expect_optional(&reader, "other", &value), DIRAUTH_ERR_NOT_FOUND); /* end */

	/* A line of the keyword is read whole, with the reader's refusals. */
	lines_init(&reader, bytes("key  a\n"), 7, 64);
	ck_assert_int_eq(lines_expect_optional(&reader, "key", &value), DIRAUTH_ERR_SYNTAX);
	lines_init(&reader, bytes("key a"), 5, 64);
	ck_assert_int_eq(lines_expect_optional(&reader, "key", &value), DIRAUTH_ERR_SYNTAX);
	lines_init(&reader, bytes("key abcdef\n"), 11, 8);
	ck_assert_int_eq(lines_expect_optional(&reader, "key", &value), DIRAUTH_ERR_BOUNDS);
	lines_init(&reader, bytes("\nkey a\n"), 7, 64);
	ck_assert_int_eq(lines_expect_optional(&reader, "key", &value), DIRAUTH_ERR_NOT_FOUND);
}
END_TEST

START_TEST(test_lines_take_framed)
{
	struct line_reader reader;
	struct text_span value;
	const uint8_t *part;
	size_t part_len;
	/* The part holds any byte, a '\n' included; the next line starts after it. */
	static const char doc[] = "part 3\na\n\x01next 1\n";
	lines_init(&reader, bytes(doc), sizeof doc - 1, 64);
	ck_assert_int_eq(lines_expect(&reader, "part", &value), 0);
	ck_assert_int_eq(lines_take_framed(&reader, value, 3, &part, &part_len), 0);
	ck_assert_uint_eq(part_len, 3);
	ck_assert_mem_eq(part, "a\n\x01", 3);
	ck_assert_int_eq(lines_expect(&reader, "next", &value), 0);
	ck_assert(lines_at_end(&reader));

	lines_init(&reader, bytes(doc), sizeof doc - 1, 64);
	ck_assert_int_eq(lines_expect(&reader, "part", &value), 0);
	size_t before = reader.pos;
	ck_assert_int_eq(lines_take_framed(&reader, value, 2, &part, &part_len), DIRAUTH_ERR_BOUNDS);
	struct text_span past_end = {"99", 2};
	ck_assert_int_eq(lines_take_framed(&reader, past_end, 1000, &part, &part_len), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(reader.pos, before); /* refused: nothing consumed */
	struct text_span zero = {"0", 1}, leading_zero = {"03", 2}, not_decimal = {"3x", 2};
	ck_assert_int_eq(lines_take_framed(&reader, zero, 10, &part, &part_len), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(lines_take_framed(&reader, leading_zero, 10, &part, &part_len), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(lines_take_framed(&reader, not_decimal, 10, &part, &part_len), DIRAUTH_ERR_SYNTAX);

	/* The variant for a part that may be empty takes 0, and refuses the rest alike. */
	ck_assert_int_eq(lines_take_framed_or_empty(&reader, zero, 10, &part, &part_len), 0);
	ck_assert_uint_eq(part_len, 0);
	ck_assert_uint_eq(reader.pos, before);
	ck_assert_int_eq(lines_take_framed_or_empty(&reader, leading_zero, 10, &part, &part_len),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(lines_take_framed_or_empty(&reader, past_end, 1000, &part, &part_len),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(lines_take_framed_or_empty(&reader, value, 2, &part, &part_len), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(lines_take_framed_or_empty(&reader, value, 3, &part, &part_len), 0);
	ck_assert_uint_eq(part_len, 3);
}
END_TEST

START_TEST(test_lines_blank_and_rest)
{
	struct line_reader reader;
	struct text_span line;
	const uint8_t *rest;
	size_t rest_len;
	static const char doc[] = "a\n\n\x01rest\n\n";
	lines_init(&reader, bytes(doc), sizeof doc - 1, 64);
	ck_assert(!lines_take_blank(&reader)); /* a line that is not empty: nothing consumed */
	ck_assert_uint_eq(reader.pos, 0);
	ck_assert_int_eq(lines_next(&reader, &line), 0);
	ck_assert(lines_take_blank(&reader));
	ck_assert_uint_eq(reader.line_number, 2);
	ck_assert(!lines_take_blank(&reader));
	lines_take_rest(&reader, &rest, &rest_len);
	ck_assert_uint_eq(rest_len, 7);
	ck_assert_mem_eq(rest, "\x01rest\n\n", 7); /* as it is, whatever it holds */
	ck_assert(lines_at_end(&reader));
	ck_assert(!lines_take_blank(&reader)); /* at the end */
	lines_take_rest(&reader, &rest, &rest_len);
	ck_assert_uint_eq(rest_len, 0);
}
END_TEST

START_TEST(test_text_fields)
{
	struct text_span rest = {"a bb ccc", 8};
	struct text_span field;
	ck_assert_int_eq(text_next_field(&rest, &field), 0);
	ck_assert(text_equals(field, "a"));
	ck_assert_int_eq(text_next_field(&rest, &field), 0);
	ck_assert(text_equals(field, "bb"));
	ck_assert_int_eq(text_next_field(&rest, &field), 0);
	ck_assert(text_equals(field, "ccc"));
	ck_assert_uint_eq(rest.len, 0);
	ck_assert_int_eq(text_next_field(&rest, &field), DIRAUTH_ERR_SYNTAX);

	struct text_span leading = {" a", 2};
	ck_assert_int_eq(text_next_field(&leading, &field), DIRAUTH_ERR_SYNTAX);
	struct text_span trailing = {"a ", 2};
	ck_assert_int_eq(text_next_field(&trailing, &field), DIRAUTH_ERR_SYNTAX);
	struct text_span doubled = {"a  b", 4};
	ck_assert_int_eq(text_next_field(&doubled, &field), 0);
	ck_assert_int_eq(text_next_field(&doubled, &field), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_text_helpers)
{
	struct text_span span = {"hello", 5};
	ck_assert(text_equals(span, "hello"));
	ck_assert(!text_equals(span, "hell"));
	ck_assert(!text_equals(span, "hello!"));

	char out[6];
	ck_assert_int_eq(text_copy(span, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "hello");
	ck_assert_int_eq(text_copy(span, out, 5), DIRAUTH_ERR_BOUNDS); /* no room for the NUL */

	uint64_t value = 0;
	struct text_span number = {"1234", 4};
	ck_assert_int_eq(text_parse_u64(number, &value), 0);
	ck_assert_uint_eq(value, 1234);
	struct text_span bad_number = {"01", 2};
	ck_assert_int_eq(text_parse_u64(bad_number, &value), DIRAUTH_ERR_SYNTAX);

	uint8_t hex[2];
	struct text_span hex_text = {"beef", 4};
	ck_assert_int_eq(text_parse_hex(hex_text, hex, 2), 0);
	ck_assert_uint_eq(hex[0], 0xbe);
	ck_assert_uint_eq(hex[1], 0xef);
	struct text_span upper_hex = {"BEEF", 4};
	ck_assert_int_eq(text_parse_hex(upper_hex, hex, 2), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_text_is_name)
{
	static const char *const accepted[] = {"a", "abc", "a-b", "a1-2b", "0", "x-y-z"};
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
		struct text_span span = {accepted[i], strlen(accepted[i])};
		ck_assert_msg(text_is_name(span, 16), "refused %s", accepted[i]);
	}
	static const char *const refused[] = {"", "-a", "a-", "A", "a_b", "a.b", "a b", "a/b", "\xc3\xa9"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct text_span span = {refused[i], strlen(refused[i])};
		ck_assert_msg(!text_is_name(span, 16), "accepted '%s'", refused[i]);
	}
	struct text_span long_name = {"abcde", 5};
	ck_assert(text_is_name(long_name, 5));
	ck_assert(!text_is_name(long_name, 4));
}
END_TEST

/* A struct's name fields: the rule of the text, and a NUL inside the array. */
START_TEST(test_field_names)
{
	char field[6] = "ab-c";
	ck_assert(text_field_is_name(field, sizeof field, 5));
	ck_assert(!text_field_is_name(field, sizeof field, 3)); /* longer than max */
	memcpy(field, "abcdef", 6);                             /* no NUL in the array */
	ck_assert(!text_field_is_name(field, sizeof field, 16));
	memcpy(field, "a_b\0\0", 6);
	ck_assert(!text_field_is_name(field, sizeof field, 5));

	char origin[8] = "log.ex";
	ck_assert(names_origin_field_is_valid(origin, sizeof origin));
	memcpy(origin, "log ex", 7); /* a space */
	ck_assert(!names_origin_field_is_valid(origin, sizeof origin));
	memcpy(origin, "a+b", 4);
	ck_assert(!names_origin_field_is_valid(origin, sizeof origin));
	memcpy(origin, "abcdefgh", 8);
	ck_assert(!names_origin_field_is_valid(origin, sizeof origin));
	ck_assert(!names_origin_field_is_valid("", 1));

	char key_name[8] = "auth-1";
	ck_assert(names_key_name_field_is_ascii(key_name, sizeof key_name));
	memcpy(key_name, "a\xc3\xa9", 4); /* a valid note key name, but not ASCII */
	ck_assert(note_name_is_valid(key_name, 3));
	ck_assert(!names_key_name_field_is_ascii(key_name, sizeof key_name));
	memcpy(key_name, "abcdefgh", 8);
	ck_assert(!names_key_name_field_is_ascii(key_name, sizeof key_name));
}
END_TEST

START_TEST(test_lines_expect_origin_and_count)
{
	struct line_reader reader;
	char origin[16];
	lines_init(&reader, bytes("origin log.example/a\n"), 21, 64);
	ck_assert_int_eq(lines_expect_origin(&reader, origin, sizeof origin), 0);
	ck_assert_str_eq(origin, "log.example/a");
	lines_init(&reader, bytes("origin a+b\n"), 11, 64);
	ck_assert_int_eq(lines_expect_origin(&reader, origin, sizeof origin), DIRAUTH_ERR_SYNTAX);
	lines_init(&reader, bytes("origin log.example/abcd\n"), 24, 64);
	ck_assert_int_eq(lines_expect_origin(&reader, origin, sizeof origin), DIRAUTH_ERR_BOUNDS);
	lines_init(&reader, bytes("source a\n"), 9, 64);
	ck_assert_int_eq(lines_expect_origin(&reader, origin, sizeof origin), DIRAUTH_ERR_SYNTAX);

	/* "items 2" and two item lines of at least 4 bytes each: 8 bytes left. */
	static const char doc[] = "items 2\nab1\nab2\n";
	size_t count = 99;
	lines_init(&reader, bytes(doc), sizeof doc - 1, 64);
	ck_assert_int_eq(lines_expect_count(&reader, "items", 2, 4, &count), 0);
	ck_assert_uint_eq(count, 2);
	lines_init(&reader, bytes(doc), sizeof doc - 1, 64);
	ck_assert_int_eq(lines_expect_count(&reader, "items", 1, 4, &count), DIRAUTH_ERR_BOUNDS);
	lines_init(&reader, bytes(doc), sizeof doc - 1, 64);
	ck_assert_int_eq(lines_expect_count(&reader, "items", 2, 5, &count), DIRAUTH_ERR_SYNTAX);
	lines_init(&reader, bytes("items 0\n"), 8, 64);
	ck_assert_int_eq(lines_expect_count(&reader, "items", 2, 4, &count), 0);
	ck_assert_uint_eq(count, 0);
	lines_init(&reader, bytes("items 01\n"), 9, 64);
	ck_assert_int_eq(lines_expect_count(&reader, "items", 2, 4, &count), DIRAUTH_ERR_SYNTAX);
}
END_TEST

/* A section of "item <n>" lines, ascending. */
static int read_number_item(struct line_reader *reader, void *item)
{
	return lines_expect_u64(reader, "item", item);
}

static int number_order(const void *a, const void *b)
{
	uint64_t first = *(const uint64_t *)a, second = *(const uint64_t *)b;
	return first < second ? -1 : first > second;
}

static const struct lines_section number_section = {"items", sizeof(uint64_t), 7, read_number_item,
                                                    number_order};

START_TEST(test_lines_read_section)
{
	struct line_reader reader;
	void *items;
	size_t done;
	static const char doc[] = "items 3\nitem 1\nitem 5\nitem 9\nend\n";
	lines_init(&reader, bytes(doc), sizeof doc - 1, 64);
	ck_assert_int_eq(lines_read_section(&reader, &number_section, 3, &items, &done), 0);
	ck_assert_uint_eq(done, 3);
	ck_assert_uint_eq(((uint64_t *)items)[2], 9);
	free(items);
	ck_assert_int_eq(lines_expect_exact(&reader, "end"), 0);

	lines_init(&reader, bytes(doc), sizeof doc - 1, 64);
	ck_assert_int_eq(lines_read_section(&reader, &number_section, 2, &items, &done), DIRAUTH_ERR_BOUNDS);
	ck_assert_ptr_null(items);

	/* Out of order: refused, the items read so far counted and the array left to free. */
	static const char unordered[] = "items 3\nitem 1\nitem 5\nitem 5\n";
	lines_init(&reader, bytes(unordered), sizeof unordered - 1, 64);
	ck_assert_int_eq(lines_read_section(&reader, &number_section, 3, &items, &done), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(done, 2);
	ck_assert_ptr_nonnull(items);
	free(items);

	/* More items announced than the bytes left could hold, and an item that does not read. */
	lines_init(&reader, bytes("items 2\nitem 1\n"), 15, 64);
	ck_assert_int_eq(lines_read_section(&reader, &number_section, 3, &items, &done), DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_null(items);
	lines_init(&reader, bytes("items 1\nitem x\n"), 15, 64);
	ck_assert_int_eq(lines_read_section(&reader, &number_section, 3, &items, &done), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(done, 0);
	free(items);

	/* A section of no items: nothing allocated. */
	lines_init(&reader, bytes("items 0\n"), 8, 64);
	ck_assert_int_eq(lines_read_section(&reader, &number_section, 3, &items, &done), 0);
	ck_assert_ptr_null(items);
	ck_assert_uint_eq(done, 0);

	/* An optional section: absent is nothing read, empty is a second spelling of absent. */
	lines_init(&reader, bytes("end\n"), 4, 64);
	ck_assert_int_eq(lines_read_optional_section(&reader, &number_section, 3, &items, &done), 0);
	ck_assert_ptr_null(items);
	ck_assert_uint_eq(reader.pos, 0);
	lines_init(&reader, bytes("items 0\n"), 8, 64);
	ck_assert_int_eq(lines_read_optional_section(&reader, &number_section, 3, &items, &done),
	                 DIRAUTH_ERR_SYNTAX);
	lines_init(&reader, bytes(doc), sizeof doc - 1, 64);
	ck_assert_int_eq(lines_read_optional_section(&reader, &number_section, 3, &items, &done), 0);
	ck_assert_uint_eq(done, 3);
	free(items);
}
END_TEST

/* ---- buffer ---- */

START_TEST(test_buffer_appends)
{
	struct buffer b;
	buffer_init(&b);
	ck_assert_ptr_null(b.data);
	ck_assert_int_eq(buffer_append(&b, "abc", 3), 0);
	ck_assert_uint_eq(b.len, 3);
	ck_assert_str_eq((const char *)b.data, "abc");
	ck_assert_int_eq(buffer_append_string(&b, "def"), 0);
	ck_assert_int_eq(buffer_appendf(&b, "-%d-%s", 42, "x"), 0);
	ck_assert_str_eq((const char *)b.data, "abcdef-42-x");
	ck_assert_uint_eq(b.len, 11);
	ck_assert_int_eq(buffer_append(&b, NULL, 0), 0);
	ck_assert_uint_eq(b.len, 11);

	/* Growth across many appends keeps every byte. */
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(buffer_appendf(&b, "%03d", i % 1000), 0);
	ck_assert_uint_eq(b.len, 11 + 3000);
	ck_assert(b.cap > b.len);
	ck_assert_uint_eq(b.data[b.len], 0);
	ck_assert_mem_eq(b.data + 11 + 3 * 999, "999", 3);

	buffer_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq((const char *)b.data, "");
	ck_assert_int_eq(buffer_appendf(&b, "%s", ""), 0);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq((const char *)b.data, "");
	buffer_free(&b);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	buffer_free(NULL);
}
END_TEST

/* Formatted text that exactly fills the room left, one byte more, and much more: each lands
 * whole, NUL-terminated, and what was there before is kept. */
START_TEST(test_buffer_appendf_room)
{
	struct buffer b;
	buffer_init(&b);
	ck_assert_int_eq(buffer_append(&b, "ab", 2), 0);
	size_t room = b.cap - b.len; /* counting the byte the NUL takes */
	char fill[256];
	ck_assert_uint_lt(room, sizeof fill);
	memset(fill, 'f', room - 1);
	fill[room - 1] = 0;
	size_t cap = b.cap;
	ck_assert_int_eq(buffer_appendf(&b, "%s", fill), 0); /* fits exactly: no growth */
	ck_assert_uint_eq(b.cap, cap);
	ck_assert_uint_eq(b.len, 2 + room - 1);
	ck_assert_uint_eq(b.data[b.len], 0);
	ck_assert_mem_eq(b.data, "abf", 3);

	ck_assert_int_eq(buffer_appendf(&b, "%c", 'x'), 0); /* one over: grows, formats again */
	ck_assert_uint_gt(b.cap, cap);
	ck_assert_uint_eq(b.len, 2 + room);
	ck_assert_uint_eq(b.data[b.len - 1], 'x');
	ck_assert_uint_eq(b.data[b.len], 0);

	room = b.cap - b.len;
	size_t before = b.len;
	char big[4096];
	memset(big, 'g', sizeof big - 1);
	big[sizeof big - 1] = 0;
	ck_assert_uint_lt(room, sizeof big);
	ck_assert_int_eq(buffer_appendf(&b, "<%s>", big), 0);
	ck_assert_uint_eq(b.len, before + sizeof big + 1);
	ck_assert_uint_eq(b.data[before], '<');
	ck_assert_uint_eq(b.data[before + 1], 'g');
	ck_assert_uint_eq(b.data[b.len - 1], '>');
	ck_assert_uint_eq(b.data[b.len], 0);
	ck_assert_mem_eq(b.data, "abf", 3);
	buffer_free(&b);
}
END_TEST

START_TEST(test_buffer_bounds)
{
	struct buffer b;
	buffer_init(&b);
	ck_assert_int_eq(buffer_reserve(&b, BUFFER_MAX), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(buffer_reserve(&b, SIZE_MAX), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(buffer_append(&b, "x", 1), 0);
	ck_assert_int_eq(buffer_reserve(&b, BUFFER_MAX - 1), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(buffer_append(&b, "x", SIZE_MAX), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(b.len, 1); /* a refused append changes nothing */
	ck_assert_str_eq((const char *)b.data, "x");
	buffer_free(&b);
}
END_TEST

START_TEST(test_buffer_steal)
{
	struct buffer b;
	buffer_init(&b);
	size_t len = 99;
	uint8_t *empty = buffer_steal(&b, &len);
	ck_assert_ptr_nonnull(empty);
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(empty[0], 0);
	free(empty);

	ck_assert_int_eq(buffer_append_string(&b, "payload"), 0);
	uint8_t *data = buffer_steal(&b, &len);
	ck_assert_uint_eq(len, 7);
	ck_assert_str_eq((const char *)data, "payload");
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_uint_eq(b.cap, 0);
	free(data);

	ck_assert_int_eq(buffer_append_string(&b, "again"), 0);
	data = buffer_steal(&b, NULL);
	ck_assert_str_eq((const char *)data, "again");
	free(data);
}
END_TEST

static Suite *encoding_suite(void)
{
	Suite *suite = suite_create("encoding");
	TCase *codecs = tcase_create("codecs");
	tcase_set_timeout(codecs, 30);
	tcase_add_test(codecs, test_hex_round_trip);
	tcase_add_test(codecs, test_hex_refusals);
	tcase_add_test(codecs, test_base64_rfc4648_vectors);
	tcase_add_test(codecs, test_base64_all_bytes_round_trip);
	tcase_add_test(codecs, test_base64_refusals);
	tcase_add_test(codecs, test_base64_bounds);
	tcase_add_test(codecs, test_decimal_accepts);
	tcase_add_test(codecs, test_decimal_refusals);
	suite_add_tcase(suite, codecs);

	TCase *lines = tcase_create("lines");
	tcase_set_timeout(lines, 30);
	tcase_add_test(lines, test_lines_reads_lines);
	tcase_add_test(lines, test_lines_refusals);
	tcase_add_test(lines, test_lines_length_bound);
	tcase_add_test(lines, test_lines_expect_refusals);
	tcase_add_test(lines, test_lines_expect_name);
	tcase_add_test(lines, test_lines_peek_keyword);
	tcase_add_test(lines, test_lines_expect_optional);
	tcase_add_test(lines, test_lines_take_framed);
	tcase_add_test(lines, test_lines_blank_and_rest);
	tcase_add_test(lines, test_text_fields);
	tcase_add_test(lines, test_text_helpers);
	tcase_add_test(lines, test_text_is_name);
	tcase_add_test(lines, test_field_names);
	tcase_add_test(lines, test_lines_expect_origin_and_count);
	tcase_add_test(lines, test_lines_read_section);
	suite_add_tcase(suite, lines);

	TCase *buffers = tcase_create("buffer");
	tcase_set_timeout(buffers, 30);
	tcase_add_test(buffers, test_buffer_appends);
	tcase_add_test(buffers, test_buffer_appendf_room);
	tcase_add_test(buffers, test_buffer_bounds);
	tcase_add_test(buffers, test_buffer_steal);
	suite_add_tcase(suite, buffers);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(encoding_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
