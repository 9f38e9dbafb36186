/*
 * vote.c: the codec of an authority's vote: its signed word on what it holds for one namespace
 * and epoch.
 *
 * Votes are what authorities compare before they co-sign a snapshot, and the signer refuses to
 * sign two different votes for one (origin, epoch). Both depend on a vote having exactly one
 * spelling: the signer compares the digest of the text it was asked to sign, and a second
 * spelling of the same vote would look like a second vote. So, like every document codec here,
 * the parser reads the fields in their one order, re-encodes what it read and refuses the input
 * unless the bytes are identical.
 */
#include "schema/vote.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/names.h"
#include "schema/lines.h"

#include <string.h>

/* The longest vote line is "origin " and a SNAPSHOT_ORIGIN_MAX-byte origin (262 bytes). */
#define VOTE_LINE_MAX 320

static int vote_check(const struct vote *v)
{
	if (!text_field_is_name(v->namespace_name, sizeof(v->namespace_name), NAMESPACE_NAME_MAX) ||
	    !names_origin_field_is_valid(v->origin, sizeof(v->origin)) ||
	    !names_key_name_field_is_ascii(v->authority, sizeof(v->authority)))
		return DIRAUTH_ERR_SYNTAX;
	/* No previous is the zero digest with epoch 0; a real previous is of an earlier epoch. */
	static const uint8_t zeros[32];
	if (memcmp(v->previous, zeros, 32) == 0 ? v->previous_epoch != 0 : v->previous_epoch >= v->epoch)
		return DIRAUTH_ERR_SYNTAX;
	if (v->method_count == 0 || v->method_count > VOTE_METHODS_MAX)
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < v->method_count; i++)
		if (v->methods[i] == 0 || (i > 0 && v->methods[i] <= v->methods[i - 1]))
			return DIRAUTH_ERR_SYNTAX;
	return 0;
}

int vote_encode(const struct vote *v, struct buffer *out)
{
	int rc = vote_check(v);
	if (rc)
		return rc;
	char root_hex[65], body_hex[65], previous_hex[65];
	hex_encode(v->records_root, sizeof(v->records_root), root_hex);
	hex_encode(v->body_sha256, sizeof(v->body_sha256), body_hex);
	hex_encode(v->previous, sizeof(v->previous), previous_hex);
	size_t start = out->len;
	rc = buffer_appendf(
	    out,
	    "dirauth vote v1\nnamespace %s\norigin %s\nepoch %llu\nauthority %s\nrecords %llu\n"
	    "records-root %s\nbody-sha256 %s\nprevious-epoch %llu\nprevious %s\nconsensus-methods",
	    v->namespace_name, v->origin, (unsigned long long)v->epoch, v->authority,
	    (unsigned long long)v->record_count, root_hex, body_hex, (unsigned long long)v->previous_epoch,
	    previous_hex);
	for (size_t i = 0; rc == 0 && i < v->method_count; i++)
		rc = buffer_appendf(out, " %llu", (unsigned long long)v->methods[i]);
	if (rc == 0)
		rc = buffer_append(out, "\n", 1);
	if (rc == 0 && out->len - start > VOTE_MAX_BYTES)
		rc = DIRAUTH_ERR_BOUNDS;
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct vote *out = parsed;
	struct line_reader reader;
	struct text_span value;
	int rc;
	lines_init(&reader, text, len, VOTE_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth vote v1")) != 0)
		return rc;
	if ((rc = lines_expect_name(&reader, "namespace", out->namespace_name,
	                            sizeof(out->namespace_name))) != 0)
		return rc;
	if ((rc = lines_expect_origin(&reader, out->origin, sizeof(out->origin))) != 0)
		return rc;
	if ((rc = lines_expect_u64(&reader, "epoch", &out->epoch)) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "authority", &value)) != 0)
		return rc;
	if (value.len > NOTE_NAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (!names_key_name_is_ascii(value.data, value.len))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_copy(value, out->authority, sizeof(out->authority))) != 0)
		return rc;
	if ((rc = lines_expect_u64(&reader, "records", &out->record_count)) != 0 ||
	    (rc = lines_expect_hex(&reader, "records-root", out->records_root, 32)) != 0 ||
	    (rc = lines_expect_hex(&reader, "body-sha256", out->body_sha256, 32)) != 0 ||
	    (rc = lines_expect_u64(&reader, "previous-epoch", &out->previous_epoch)) != 0 ||
	    (rc = lines_expect_hex(&reader, "previous", out->previous, 32)) != 0 ||
	    (rc = lines_expect(&reader, "consensus-methods", &value)) != 0)
		return rc;
	struct text_span rest = value;
	while (rest.len > 0) {
		if (out->method_count == VOTE_METHODS_MAX)
			return DIRAUTH_ERR_BOUNDS;
		if ((rc = text_next_u64(&rest, &out->methods[out->method_count++])) != 0)
			return rc;
	}
	if (vote_check(out) != 0)
		return DIRAUTH_ERR_SYNTAX;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

static int encode_vote(const void *value, struct buffer *out)
{
	return vote_encode(value, out);
}

static const struct lines_codec vote_codec = {
    .max_bytes = VOTE_MAX_BYTES,
    .value_size = sizeof(struct vote),
    .parse_fields = parse_fields,
    .encode = encode_vote,
};

int vote_parse(const uint8_t *text, size_t len, struct vote *out)
{
	return lines_parse_document(&vote_codec, text, len, out);
}
