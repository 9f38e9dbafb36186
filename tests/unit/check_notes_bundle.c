/*
 * check_notes_bundle.c: the request for many notes and its answer: the example of
 * schema/notes-bundle.md byte for byte, round trips, the bounds that refuse before reading or
 * allocating, the writer's refusals (what does not fit, indexes out of order, an end that lies),
 * and every refusal of both parsers.
 */
#include "base/error.h"
#include "schema/notes_bundle.h"
#include "lifecycle_fixture.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVICE     "769cece0f989e9d7ed58fa517c8ffa7db41124c02e36d1b499f182ed0076c4f7"
#define STATEMENT_A "febf8f6da21ca865e294b3ed2979d47b64a19e6c4f0b4f279835c49b3864b476"
#define STATEMENT_B "97a30c35c9c4b46790a888ad3cf88cc52d74ae0ce9c165197f0ed58765d5ec1f"
#define NOTES       "tests/vectors/consensus/method-2/notes/"

#define EXAMPLE_REQUEST                                                                                      \
	"dirauth notes-request v1\n"                                                                         \
	"statement " STATEMENT_A "\n"                                                                        \
	"registration " SERVICE " 2\n"                                                                       \
	"statement " STATEMENT_B "\n"

static void hex_to(const char *hex, uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned byte;
		ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &byte), 1);
		out[i] = (uint8_t)byte;
	}
}

static void example_items(struct notes_item items[3])
{
	memset(items, 0, 3 * sizeof(*items));
	items[0].kind = NOTES_ITEM_STATEMENT;
	hex_to(STATEMENT_A, items[0].digest, 32);
	items[1].kind = NOTES_ITEM_REGISTRATION;
	hex_to(SERVICE, items[1].service_id, SERVICE_ID_SIZE);
	items[1].sequence = 2;
	items[2].kind = NOTES_ITEM_STATEMENT;
	hex_to(STATEMENT_B, items[2].digest, 32);
}

static int request_parse_text(const char *text)
{
	struct notes_item *items = (struct notes_item *)1;
	size_t count = 99;
	int rc = notes_request_parse((const uint8_t *)text, strlen(text), &items, &count);
	ck_assert(rc == 0 ? items != NULL && count > 0 : items == NULL && count == 0);
	free(items);
	return rc;
}

static int request_edit(const char *from, const char *to)
{
	struct buffer edited;
	buffer_init(&edited);
	test_text_replace((const uint8_t *)EXAMPLE_REQUEST, strlen(EXAMPLE_REQUEST), from, to, &edited);
	int rc = request_parse_text((const char *)edited.data);
	buffer_free(&edited);
	return rc;
}

START_TEST(test_request_example)
{
	struct notes_item items[3], *parsed = NULL;
	size_t count = 0;
	struct buffer out;
	buffer_init(&out);
	example_items(items);
	ck_assert_int_eq(notes_request_encode(items, 3, &out), 0);
	ck_assert_str_eq((const char *)out.data, EXAMPLE_REQUEST);
	lifecycle_page_shows("schema/notes-bundle.md", out.data, out.len);
	ck_assert_int_eq(notes_request_parse(out.data, out.len, &parsed, &count), 0);
	ck_assert_uint_eq(count, 3);
	ck_assert_mem_eq(parsed, items, sizeof(items));
	free(parsed);
	/* Repeats are allowed: the answer names items by index. */
	items[2] = items[0];
	buffer_reset(&out);
	ck_assert_int_eq(notes_request_encode(items, 3, &out), 0);
	ck_assert_int_eq(notes_request_parse(out.data, out.len, &parsed, &count), 0);
	ck_assert_uint_eq(count, 3);
	ck_assert_mem_eq(&parsed[2], &items[0], sizeof(items[0]));
	free(parsed);
	buffer_free(&out);
}
END_TEST

START_TEST(test_request_refusals)
{
	ck_assert_int_eq(request_parse_text(EXAMPLE_REQUEST), 0);
	ck_assert_int_eq(request_edit("notes-request v1", "notes-request v2"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_parse_text("dirauth notes-request v1\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_parse_text(""), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(" 2\n", " 0\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(" 2\n", " 02\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(" 2\n", "\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(" 2\n", " 2 3\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(" 2\n", " 18446744073709551616\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit("statement febf", "statement FEBF"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit("statement febf", "statement  febf"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(STATEMENT_B "\n", STATEMENT_B "00\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(STATEMENT_B "\n", STATEMENT_B " 1\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit("statement " STATEMENT_A, "revocation " STATEMENT_A),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(STATEMENT_B "\n", STATEMENT_B), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(STATEMENT_B "\n", STATEMENT_B "\n\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(STATEMENT_B "\n", STATEMENT_B "\r\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(request_edit(STATEMENT_B "\n", STATEMENT_B "\nx"), DIRAUTH_ERR_SYNTAX);

	/* The encoder refuses what the parser would, and leaves out as it was. */
	struct notes_item items[3];
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(buffer_append_string(&out, "kept"), 0);
	example_items(items);
	ck_assert_int_eq(notes_request_encode(items, 0, &out), DIRAUTH_ERR_SYNTAX);
	items[1].sequence = 0;
	ck_assert_int_eq(notes_request_encode(items, 3, &out), DIRAUTH_ERR_SYNTAX);
	example_items(items);
	items[2].kind = (enum notes_item_kind)7;
	ck_assert_int_eq(notes_request_encode(items, 3, &out), DIRAUTH_ERR_SYNTAX);
	ck_assert_str_eq((const char *)out.data, "kept");
	buffer_free(&out);
}
END_TEST

START_TEST(test_request_bounds)
{
	ck_assert_uint_eq(notes_request_max_bytes(), 25 + 4096 * 99);
	struct notes_item *items = calloc(NOTES_REQUEST_MAX_ITEMS + 1, sizeof(*items));
	ck_assert_ptr_nonnull(items);
	for (size_t i = 0; i <= NOTES_REQUEST_MAX_ITEMS; i++) {
		items[i].kind = NOTES_ITEM_REGISTRATION;
		memset(items[i].service_id, 0xab, SERVICE_ID_SIZE);
		items[i].sequence = UINT64_MAX;
	}
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(notes_request_encode(items, NOTES_REQUEST_MAX_ITEMS + 1, &out), DIRAUTH_ERR_BOUNDS);
	/* The longest request is exactly the bound, and parses. */
	ck_assert_int_eq(notes_request_encode(items, NOTES_REQUEST_MAX_ITEMS, &out), 0);
	ck_assert_uint_eq(out.len, notes_request_max_bytes());
	struct notes_item *parsed = NULL;
	size_t count = 0;
	ck_assert_int_eq(notes_request_parse(out.data, out.len, &parsed, &count), 0);
	ck_assert_uint_eq(count, NOTES_REQUEST_MAX_ITEMS);
	free(parsed);
	/* One byte more is refused before it is read. */
	ck_assert_int_eq(buffer_append_string(&out, "x"), 0);
	ck_assert_int_eq(notes_request_parse(out.data, out.len, &parsed, &count), DIRAUTH_ERR_BOUNDS);
	ck_assert_ptr_null(parsed);
	/* A 4097th item, short enough to stay under the byte bound. */
	for (size_t i = 0; i <= NOTES_REQUEST_MAX_ITEMS; i++)
		items[i].kind = NOTES_ITEM_STATEMENT;
	buffer_reset(&out);
	ck_assert_int_eq(notes_request_encode(items, NOTES_REQUEST_MAX_ITEMS, &out), 0);
	ck_assert_int_eq(buffer_append_string(&out, "statement " STATEMENT_A "\n"), 0);
	ck_assert_uint_lt(out.len, notes_request_max_bytes());
	ck_assert_int_eq(notes_request_parse(out.data, out.len, &parsed, &count), DIRAUTH_ERR_BOUNDS);
	/* A line longer than any item line. */
	char line[200];
	memset(line, '1', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	memcpy(line, "registration ", 13);
	ck_assert_int_eq(request_edit("registration " SERVICE " 2", line), DIRAUTH_ERR_BOUNDS);
	buffer_free(&out);
	free(items);
}
END_TEST

/* The note files of the example. */
static uint8_t *note_file(const char *digest, size_t *len)
{
	char relative[256];
	snprintf(relative, sizeof(relative), NOTES "%s.note", digest);
	return test_read_file(test_source_path(relative), len);
}

static int answer_parse_text(const uint8_t *text, size_t len, size_t request_count, size_t max_note)
{
	struct notes_answer_note *notes = (struct notes_answer_note *)1;
	size_t count = 99, covered = 99;
	int rc = notes_answer_parse(text, len, request_count, max_note, &notes, &count, &covered);
	if (rc)
		ck_assert(notes == NULL && count == 0 && covered == 0);
	free(notes);
	return rc;
}

static int answer_text(const char *text, size_t request_count)
{
	return answer_parse_text((const uint8_t *)text, strlen(text), request_count, 1024);
}

START_TEST(test_answer_example)
{
	size_t a_len = 0, b_len = 0;
	uint8_t *a = note_file(STATEMENT_A, &a_len), *b = note_file(STATEMENT_B, &b_len);
	struct notes_answer_writer writer;
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(notes_answer_begin(&writer, &out, 3), 0);
	ck_assert_int_eq(notes_answer_add(&writer, 0, a, a_len, 512), 0);
	/* The second statement does not fit under 512 bytes: nothing is appended. */
	size_t before = out.len;
	ck_assert_int_eq(notes_answer_add(&writer, 2, b, b_len, 512), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(out.len, before);
	ck_assert_int_eq(notes_answer_end(&writer, 2), 0);
	lifecycle_page_shows("schema/notes-bundle.md", out.data, out.len);

	struct notes_answer_note *notes = NULL;
	size_t count = 0, covered = 0;
	ck_assert_int_eq(notes_answer_parse(out.data, out.len, 3, 1024, &notes, &count, &covered), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(covered, 2);
	ck_assert_uint_eq(notes[0].index, 0);
	ck_assert_uint_eq(notes[0].len, a_len);
	ck_assert_mem_eq(notes[0].note, a, a_len);
	ck_assert(notes[0].note > out.data && notes[0].note < out.data + out.len);
	free(notes);
	/* The note over the caller's bound on one note. */
	ck_assert_int_eq(answer_parse_text(out.data, out.len, 3, a_len - 1), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(answer_parse_text(out.data, out.len, 3, a_len), 0);
	/* covered is at most the request's item count. */
	ck_assert_int_eq(answer_parse_text(out.data, out.len, 1, 1024), DIRAUTH_ERR_SYNTAX);

	/* Both notes under the full bound; the answer need not start its buffer. */
	buffer_reset(&out);
	ck_assert_int_eq(buffer_append_string(&out, "before"), 0);
	ck_assert_int_eq(notes_answer_begin(&writer, &out, 3), 0);
	ck_assert_int_eq(notes_answer_add(&writer, 0, a, a_len, NOTES_ANSWER_MAX_BYTES), 0);
	ck_assert_int_eq(notes_answer_add(&writer, 2, b, b_len, SIZE_MAX), 0);
	ck_assert_int_eq(notes_answer_end(&writer, 3), 0);
	ck_assert_int_eq(notes_answer_parse(out.data + 6, out.len - 6, 3, 1024, &notes, &count, &covered), 0);
	ck_assert_uint_eq(count, 2);
	ck_assert_uint_eq(covered, 3);
	ck_assert_uint_eq(notes[1].index, 2);
	ck_assert_mem_eq(notes[1].note, b, b_len);
	free(notes);

	/* An answer without notes. */
	buffer_reset(&out);
	ck_assert_int_eq(notes_answer_begin(&writer, &out, 4), 0);
	ck_assert_int_eq(notes_answer_end(&writer, 4), 0);
	ck_assert_str_eq((const char *)out.data, "dirauth notes v1\nend 4\n");
	ck_assert_int_eq(notes_answer_parse(out.data, out.len, 4, 1024, &notes, &count, &covered), 0);
	ck_assert_ptr_null(notes);
	ck_assert_uint_eq(count, 0);
	ck_assert_uint_eq(covered, 4);
	buffer_free(&out);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_answer_writer_refusals)
{
	struct notes_answer_writer writer;
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(notes_answer_begin(&writer, &out, 0), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(notes_answer_begin(&writer, &out, NOTES_REQUEST_MAX_ITEMS + 1), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(out.len, 0);
	ck_assert_int_eq(notes_answer_begin(&writer, &out, 5), 0);
	ck_assert_int_eq(notes_answer_add(&writer, 1, (const uint8_t *)"a", 0, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(notes_answer_add(&writer, 5, (const uint8_t *)"a", 1, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(notes_answer_add(&writer, 1, (const uint8_t *)"a", 1, SIZE_MAX), 0);
	ck_assert_int_eq(notes_answer_add(&writer, 1, (const uint8_t *)"b", 1, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(notes_answer_add(&writer, 0, (const uint8_t *)"b", 1, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(notes_answer_add(&writer, 3, (const uint8_t *)"c", 1, SIZE_MAX), 0);
	/* The bound counts the end line's room: 17 + 10 + 10 bytes so far, a note of 1 byte takes
	 * 10 more and the end line's room 9. */
	ck_assert_uint_eq(out.len, 37);
	ck_assert_int_eq(notes_answer_add(&writer, 4, (const uint8_t *)"d", 1, 55), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(out.len, 37);
	ck_assert_int_eq(notes_answer_end(&writer, 3), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(notes_answer_end(&writer, 6), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(out.len, 37);
	ck_assert_int_eq(notes_answer_add(&writer, 4, (const uint8_t *)"d", 1, 56), 0);
	ck_assert_int_eq(notes_answer_end(&writer, 5), 0);
	ck_assert_str_eq((const char *)out.data,
	                 "dirauth notes v1\nnote 1 1\nanote 3 1\ncnote 4 1\ndend 5\n");
	ck_assert_int_eq(answer_text((const char *)out.data, 5), 0);
	buffer_free(&out);
}
END_TEST

#define ANSWER "dirauth notes v1\nnote 1 1\nanote 3 2\nbcend 5\n"

static int answer_edit(const char *from, const char *to)
{
	struct buffer edited;
	buffer_init(&edited);
	test_text_replace((const uint8_t *)ANSWER, strlen(ANSWER), from, to, &edited);
	int rc = answer_text((const char *)edited.data, 5);
	buffer_free(&edited);
	return rc;
}

START_TEST(test_answer_refusals)
{
	ck_assert_int_eq(answer_text(ANSWER, 5), 0);
	ck_assert_int_eq(answer_text(ANSWER, 4), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_text("", 5), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("notes v1", "notes v2"), DIRAUTH_ERR_SYNTAX);
	/* Indexes: repeated, descending, not below covered, not below the request's count. */
	ck_assert_int_eq(answer_edit("note 3", "note 1"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("note 3", "note 0"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("end 5", "end 3"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("end 5", "end 4"), 0);
	ck_assert_int_eq(answer_edit("end 5", "end 6"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("note 3 2\nbc", "note 5 2\nbc"), DIRAUTH_ERR_SYNTAX);
	/* Spellings: leading zeros, signs, double spaces, a missing or extra field, a length 0. */
	ck_assert_int_eq(answer_edit("note 3", "note 03"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("note 3 2", "note 3 02"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("note 3 2", "note 3 +2"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("note 3 2", "note 3  2"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("note 3 2", "note 3"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("note 3 2", "note 3 2 2"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("note 1 1\na", "note 1 0\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("end 5", "end 05"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("end 5\n", "end 5"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("end 5\n", "end 5\n\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("end 5\n", ""), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("end 5\n", "end 5\nend 5\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("note 1 1\n", "item 1 1\n"), DIRAUTH_ERR_SYNTAX);
	/* A length past the input, or one framing more than the note (the next line misread). */
	ck_assert_int_eq(answer_edit("note 3 2", "note 3 99"), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(answer_edit("note 3 2", "note 3 3"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answer_edit("note 3 2", "note 3 1"), DIRAUTH_ERR_SYNTAX);
	/* The caller's request count out of range. */
	ck_assert_int_eq(answer_text(ANSWER, 0), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(answer_text(ANSWER, NOTES_REQUEST_MAX_ITEMS + 1), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(answer_text("dirauth notes v1\nend 4096\n", NOTES_REQUEST_MAX_ITEMS), 0);
	/* A line over its bound. */
	ck_assert_int_eq(
	    answer_edit("note 3 2", "note 3 00000000000000000000000000000000000000000000000000000000002"),
	    DIRAUTH_ERR_BOUNDS);
}
END_TEST

/* The answer's bytes: the text before the end line at most 4 MiB - 9, the whole at most 4 MiB.
 * One note fills an answer exactly: 17 bytes of first line, "note 0 4194263\n" and the note. */
START_TEST(test_answer_bounds)
{
	size_t note_len = NOTES_ANSWER_MAX_BYTES - NOTES_ANSWER_END_MAX_BYTES - 17 - 15;
	uint8_t *note = malloc(note_len + 1);
	ck_assert_ptr_nonnull(note);
	memset(note, 'n', note_len + 1);
	struct notes_answer_writer writer;
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(notes_answer_begin(&writer, &out, 2), 0);
	ck_assert_int_eq(notes_answer_add(&writer, 0, note, note_len + 1, SIZE_MAX), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(notes_answer_add(&writer, 0, note, note_len, SIZE_MAX), 0);
	ck_assert_uint_eq(out.len, NOTES_ANSWER_MAX_BYTES - NOTES_ANSWER_END_MAX_BYTES);
	ck_assert_int_eq(notes_answer_add(&writer, 1, note, 1, SIZE_MAX), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(notes_answer_end(&writer, 1), 0);
	ck_assert_int_eq(answer_parse_text(out.data, out.len, 2, note_len), 0);
	/* One byte more in the note: within 4 MiB in all (the end line is shorter than its room),
	 * but not before the end line. */
	struct buffer longer;
	buffer_init(&longer);
	test_text_replace(out.data, out.len, "note 0 4194263\n", "note 0 4194264\nn", &longer);
	ck_assert_uint_le(longer.len, NOTES_ANSWER_MAX_BYTES);
	ck_assert_int_eq(answer_parse_text(longer.data, longer.len, 2, note_len + 1), DIRAUTH_ERR_BOUNDS);
	/* Past 4 MiB: refused before it is read. */
	while (out.len <= NOTES_ANSWER_MAX_BYTES)
		ck_assert_int_eq(buffer_append_string(&out, "x"), 0);
	ck_assert_int_eq(answer_parse_text(out.data, out.len, 2, note_len), DIRAUTH_ERR_BOUNDS);
	buffer_free(&longer);
	buffer_free(&out);
	free(note);
}
END_TEST

static Suite *notes_bundle_suite(void)
{
	Suite *suite = suite_create("notes_bundle");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_request_example);
	tcase_add_test(tc, test_request_refusals);
	tcase_add_test(tc, test_request_bounds);
	tcase_add_test(tc, test_answer_example);
	tcase_add_test(tc, test_answer_writer_refusals);
	tcase_add_test(tc, test_answer_refusals);
	tcase_add_test(tc, test_answer_bounds);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(notes_bundle_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
