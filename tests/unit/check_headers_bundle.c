/*
 * check_headers_bundle.c: the stored snapshot headers from an epoch on: the example of
 * schema/headers-bundle.md byte for byte, round trips, complete and stopped-early answers, the
 * bounds on count and bytes, the writer's refusals and every refusal of the parser.
 */
#include "base/error.h"
#include "schema/headers_bundle.h"
#include "lifecycle_fixture.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_bytes(const uint8_t *text, size_t len, uint64_t from, size_t max_note)
{
	struct headers_bundle bundle;
	memset(&bundle, 0xa5, sizeof(bundle));
	int rc = headers_bundle_parse(text, len, from, max_note, &bundle);
	if (rc)
		ck_assert(bundle.items == NULL && bundle.count == 0 && bundle.latest == 0 &&
		          bundle.through == 0);
	headers_bundle_clear(&bundle);
	return rc;
}

static int parse_text(const char *text, uint64_t from)
{
	return parse_bytes((const uint8_t *)text, strlen(text), from, 1024);
}

START_TEST(test_example)
{
	size_t first_len = 0, second_len = 0;
	uint8_t *first =
	    test_read_file(test_source_path("tests/vectors/chain/previous-header.note"), &first_len);
	uint8_t *second = test_read_file(test_source_path("tests/vectors/chain/header.note"), &second_len);
	struct headers_bundle_writer writer;
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(headers_bundle_begin(&writer, &out, 1, 2), 0);
	ck_assert_int_eq(headers_bundle_add(&writer, 1, first, first_len, HEADERS_BUNDLE_MAX_BYTES), 0);
	ck_assert_int_eq(headers_bundle_add(&writer, 2, second, second_len, HEADERS_BUNDLE_MAX_BYTES), 0);
	ck_assert_int_eq(headers_bundle_end(&writer, 2), 0);
	lifecycle_page_shows("schema/headers-bundle.md", out.data, out.len);

	struct headers_bundle bundle;
	ck_assert_int_eq(headers_bundle_parse(out.data, out.len, 1, 4096, &bundle), 0);
	ck_assert_uint_eq(bundle.latest, 2);
	ck_assert_uint_eq(bundle.through, 2);
	ck_assert_uint_eq(bundle.count, 2);
	ck_assert_uint_eq(bundle.items[0].epoch, 1);
	ck_assert_uint_eq(bundle.items[0].len, first_len);
	ck_assert_mem_eq(bundle.items[0].note, first, first_len);
	ck_assert_uint_eq(bundle.items[1].epoch, 2);
	ck_assert_mem_eq(bundle.items[1].note, second, second_len);
	ck_assert(bundle.items[1].note > out.data && bundle.items[1].note < out.data + out.len);
	headers_bundle_clear(&bundle);
	ck_assert_ptr_null(bundle.items);
	headers_bundle_clear(&bundle);
	/* From epoch 2 the first header is below from; over the caller's bound on one note. */
	ck_assert_int_eq(parse_bytes(out.data, out.len, 2, 4096), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_bytes(out.data, out.len, 0, 4096), 0);
	ck_assert_int_eq(parse_bytes(out.data, out.len, 1, second_len - 1), DIRAUTH_ERR_BOUNDS);

	/* Up to date: latest below from, no header. */
	buffer_reset(&out);
	ck_assert_int_eq(headers_bundle_begin(&writer, &out, 3, 2), 0);
	ck_assert_int_eq(headers_bundle_add(&writer, 2, second, second_len, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(headers_bundle_end(&writer, 2), 0);
	ck_assert_str_eq((const char *)out.data, "dirauth headers v1\nlatest 2\nthrough 2\n");
	ck_assert_int_eq(headers_bundle_parse(out.data, out.len, 3, 4096, &bundle), 0);
	ck_assert_uint_eq(bundle.count, 0);
	ck_assert_ptr_null(bundle.items);
	ck_assert_uint_eq(bundle.through, 2);
	headers_bundle_clear(&bundle);
	buffer_free(&out);
	free(first);
	free(second);
}
END_TEST

START_TEST(test_writer_refusals)
{
	struct headers_bundle_writer writer;
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(buffer_append_string(&out, "before\n"), 0);
	ck_assert_int_eq(headers_bundle_begin(&writer, &out, 10, 20), 0);
	const uint8_t *note = (const uint8_t *)"h\n";
	ck_assert_int_eq(headers_bundle_add(&writer, 12, note, 0, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(headers_bundle_add(&writer, 9, note, 2, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(headers_bundle_add(&writer, 21, note, 2, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(headers_bundle_add(&writer, 12, note, 2, SIZE_MAX), 0);
	ck_assert_int_eq(headers_bundle_add(&writer, 12, note, 2, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(headers_bundle_add(&writer, 11, note, 2, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(headers_bundle_add(&writer, 15, note, 2, SIZE_MAX), 0);
	/* 19 + 10 + 14 + 14 bytes of answer so far; a header of 2 bytes takes 14 and the through
	 * line's room 29. */
	ck_assert_uint_eq(out.len - 7, 57);
	size_t before = out.len;
	ck_assert_int_eq(headers_bundle_add(&writer, 16, note, 2, 57 + 14 + 29 - 1), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(out.len, before);
	/* through: latest, or the last epoch when it stopped early; nothing else. */
	ck_assert_int_eq(headers_bundle_end(&writer, 12), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(headers_bundle_end(&writer, 16), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(headers_bundle_end(&writer, 21), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(out.len, before);
	ck_assert_int_eq(headers_bundle_end(&writer, 15), 0);
	ck_assert_str_eq(
	    (const char *)out.data,
	    "before\ndirauth headers v1\nlatest 20\nheader 12 2\nh\nheader 15 2\nh\nthrough 15\n");
	ck_assert_int_eq(parse_text((const char *)out.data + 7, 10), 0);

	/* No header and stopped early cannot be: through is latest. */
	buffer_reset(&out);
	ck_assert_int_eq(headers_bundle_begin(&writer, &out, 0, 5), 0);
	ck_assert_int_eq(headers_bundle_end(&writer, 0), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(headers_bundle_end(&writer, 5), 0);
	/* The largest epochs. */
	buffer_reset(&out);
	ck_assert_int_eq(headers_bundle_begin(&writer, &out, UINT64_MAX, UINT64_MAX), 0);
	ck_assert_int_eq(headers_bundle_add(&writer, UINT64_MAX, note, 2, SIZE_MAX), 0);
	ck_assert_int_eq(headers_bundle_add(&writer, UINT64_MAX, note, 2, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(headers_bundle_end(&writer, UINT64_MAX), 0);
	ck_assert_int_eq(parse_text((const char *)out.data, UINT64_MAX), 0);
	buffer_free(&out);
}
END_TEST

#define BUNDLE "dirauth headers v1\nlatest 9\nheader 3 2\nh\nheader 5 1\nxthrough 5\n"

static int edit(const char *from_text, const char *to_text, uint64_t from)
{
	struct buffer edited;
	buffer_init(&edited);
	test_text_replace((const uint8_t *)BUNDLE, strlen(BUNDLE), from_text, to_text, &edited);
	int rc = parse_text((const char *)edited.data, from);
	buffer_free(&edited);
	return rc;
}

START_TEST(test_parse_refusals)
{
	ck_assert_int_eq(parse_text(BUNDLE, 3), 0);
	ck_assert_int_eq(parse_text(BUNDLE, 4), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text("", 0), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("headers v1", "headers v2", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("latest 9\n", "", 3), DIRAUTH_ERR_SYNTAX);
	/* Order: repeated or descending epochs, an epoch past latest or past through. */
	ck_assert_int_eq(edit("header 5", "header 3", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("header 3", "header 6", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("header 5", "header 10", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("through 5", "through 4", 3), DIRAUTH_ERR_SYNTAX);
	/* through: latest or the last header's epoch. */
	ck_assert_int_eq(edit("through 5", "through 9", 3), 0);
	ck_assert_int_eq(edit("through 5", "through 6", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("through 5", "through 10", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text("dirauth headers v1\nlatest 9\nthrough 8\n", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text("dirauth headers v1\nlatest 9\nthrough 9\n", 3), 0);
	ck_assert_int_eq(parse_text("dirauth headers v1\nlatest 2\nthrough 2\n", 3), 0);
	ck_assert_int_eq(parse_text("dirauth headers v1\nlatest 2\nheader 2 1\nxthrough 2\n", 3),
	                 DIRAUTH_ERR_SYNTAX);
	/* Spellings. */
	ck_assert_int_eq(edit("latest 9", "latest 09", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("header 3 2", "header 03 2", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("header 3 2", "header 3 02", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("header 3 2", "header 3  2", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("header 3 2", "header 3", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("header 3 2", "header 3 2 2", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("header 5 1\nx", "header 5 0\n", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("through 5\n", "through 5", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("through 5\n", "through 5\n\n", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("through 5\n", "", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("header 3 2", "note 3 2", 3), DIRAUTH_ERR_SYNTAX);
	/* Lengths past the input or framing more than the note. */
	ck_assert_int_eq(edit("header 5 1", "header 5 99", 3), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(edit("header 5 1", "header 5 2", 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(edit("header 3 2", "header 3 1", 3), DIRAUTH_ERR_SYNTAX);
	/* A line over its bound. */
	ck_assert_int_eq(
	    edit("latest 9", "latest 9999999999999999999999999999999999999999999999999999999999999", 3),
	    DIRAUTH_ERR_BOUNDS);
}
END_TEST

/* The count: 1024 headers, and a 1025th refused by the writer and the parser. */
START_TEST(test_count_bound)
{
	struct headers_bundle_writer writer;
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(headers_bundle_begin(&writer, &out, 0, 5000), 0);
	for (uint64_t e = 0; e < HEADERS_BUNDLE_MAX_COUNT; e++)
		ck_assert_int_eq(headers_bundle_add(&writer, e, (const uint8_t *)"n", 1, SIZE_MAX), 0);
	ck_assert_int_eq(headers_bundle_add(&writer, 4000, (const uint8_t *)"n", 1, SIZE_MAX),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(headers_bundle_end(&writer, 5000), 0);
	struct headers_bundle bundle;
	ck_assert_int_eq(headers_bundle_parse(out.data, out.len, 0, 1, &bundle), 0);
	ck_assert_uint_eq(bundle.count, HEADERS_BUNDLE_MAX_COUNT);
	ck_assert_uint_eq(bundle.items[HEADERS_BUNDLE_MAX_COUNT - 1].epoch, HEADERS_BUNDLE_MAX_COUNT - 1);
	headers_bundle_clear(&bundle);
	struct buffer more;
	buffer_init(&more);
	test_text_replace(out.data, out.len, "through 5000\n", "header 4000 1\nnthrough 5000\n", &more);
	ck_assert_int_eq(parse_bytes(more.data, more.len, 0, 1), DIRAUTH_ERR_BOUNDS);
	buffer_free(&more);
	buffer_free(&out);
}
END_TEST

/* The bytes: the text before the through line at most 4 MiB - 29, the whole at most 4 MiB. One
 * header fills an answer exactly: "dirauth headers v1\nlatest 7\n" (28 bytes), "header 7 4194230\n"
 * and the note. */
START_TEST(test_byte_bound)
{
	size_t note_len = HEADERS_BUNDLE_MAX_BYTES - HEADERS_BUNDLE_THROUGH_MAX_BYTES - 28 - 17;
	uint8_t *note = malloc(note_len + 1);
	ck_assert_ptr_nonnull(note);
	memset(note, 'h', note_len + 1);
	struct headers_bundle_writer writer;
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(headers_bundle_begin(&writer, &out, 6, 7), 0);
	ck_assert_int_eq(headers_bundle_add(&writer, 7, note, note_len + 1, SIZE_MAX), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(headers_bundle_add(&writer, 7, note, note_len, SIZE_MAX), 0);
	ck_assert_uint_eq(out.len, HEADERS_BUNDLE_MAX_BYTES - HEADERS_BUNDLE_THROUGH_MAX_BYTES);
	ck_assert_int_eq(headers_bundle_end(&writer, 7), 0);
	ck_assert_int_eq(parse_bytes(out.data, out.len, 6, note_len), 0);
	/* One byte more in the note: within 4 MiB in all, not before the through line. */
	struct buffer longer;
	buffer_init(&longer);
	test_text_replace(out.data, out.len, "header 7 4194230\n", "header 7 4194231\nh", &longer);
	ck_assert_uint_le(longer.len, HEADERS_BUNDLE_MAX_BYTES);
	ck_assert_int_eq(parse_bytes(longer.data, longer.len, 6, note_len + 1), DIRAUTH_ERR_BOUNDS);
	while (out.len <= HEADERS_BUNDLE_MAX_BYTES)
		ck_assert_int_eq(buffer_append_string(&out, "x"), 0);
	ck_assert_int_eq(parse_bytes(out.data, out.len, 6, note_len), DIRAUTH_ERR_BOUNDS);
	buffer_free(&longer);
	buffer_free(&out);
	free(note);
}
END_TEST

static Suite *headers_bundle_suite(void)
{
	Suite *suite = suite_create("headers_bundle");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_example);
	tcase_add_test(tc, test_writer_refusals);
	tcase_add_test(tc, test_parse_refusals);
	tcase_add_test(tc, test_count_bound);
	tcase_add_test(tc, test_byte_bound);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(headers_bundle_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
