/*
 * error_answer.c: a server's JSON error object, read strictly (see error_answer.h).
 *
 * A recursive JSON parser is more than the answer needs and more than an attacker should get to
 * drive: the object is flat and every value a string, so one pass with a position and the end is
 * the whole grammar. Each read checks the position against the end first.
 */
#include "net/error_answer.h"

#include "base/error.h"

#include <stdio.h>
#include <string.h>

struct cursor {
	const uint8_t *at;
	const uint8_t *end;
};

static void skip_space(struct cursor *c)
{
	while (c->at < c->end && (*c->at == ' ' || *c->at == '\t' || *c->at == '\n' || *c->at == '\r'))
		c->at++;
}

static int is_hex(uint8_t byte)
{
	return (byte >= '0' && byte <= '9') || (byte >= 'a' && byte <= 'f') || (byte >= 'A' && byte <= 'F');
}

/* Reads one JSON string at c (its opening quote included). When out is given (capacity cap ≥ 1),
 * copies it reduced as the header says, cut at cap - 1 bytes; *escaped gets whether it held an
 * escape. Returns 0 or DIRAUTH_ERR_SYNTAX. */
static int read_string(struct cursor *c, char *out, size_t cap, int *escaped)
{
	size_t used = 0;

	*escaped = 0;
	if (c->at >= c->end || *c->at != '"')
		return DIRAUTH_ERR_SYNTAX;
	c->at++;
	for (;;) {
		uint8_t byte;
		char kept;

		if (c->at >= c->end)
			return DIRAUTH_ERR_SYNTAX;
		byte = *c->at++;
		if (byte == '"')
			break;
		if (byte < 0x20)
			return DIRAUTH_ERR_SYNTAX;
		kept = (char)byte;
		if (byte == '\\') {
			*escaped = 1;
			if (c->at >= c->end)
				return DIRAUTH_ERR_SYNTAX;
			byte = *c->at++;
			if (byte == 'u') {
				if (c->end - c->at < 4)
					return DIRAUTH_ERR_SYNTAX;
				for (int i = 0; i < 4; i++) {
					if (!is_hex(c->at[i]))
						return DIRAUTH_ERR_SYNTAX;
				}
				c->at += 4;
				kept = '?';
			} else if (byte == '"' || byte == '\\' || byte == '/') {
				kept = (char)byte;
			} else if (byte == 'b' || byte == 'f' || byte == 'n' || byte == 'r' || byte == 't') {
				kept = '?';
			} else {
				return DIRAUTH_ERR_SYNTAX;
			}
		} else if (byte > 0x7e) {
			kept = '?';
		}
		if (out != NULL && used + 1 < cap)
			out[used++] = kept;
	}
	if (out != NULL)
		out[used] = '\0';
	return 0;
}

static int code_is_valid(const char *code)
{
	size_t len = strlen(code);

	if (len == 0 || len > NET_ERROR_CODE_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char ch = code[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
			return 0;
	}
	return 1;
}

int net_error_answer_parse(const uint8_t *buf, size_t len, struct net_error_answer *out)
{
	struct cursor c = {buf, buf + len};
	/* One byte more than a code may have, so that a longer one is seen and refused. */
	char code[NET_ERROR_CODE_MAX + 2];
	char detail[NET_ERROR_DETAIL_MAX + 1];
	char key[16];
	int have_code = 0;
	int have_detail = 0;
	int escaped;

	memset(out, 0, sizeof(*out));
	if (buf == NULL)
		return DIRAUTH_ERR_SYNTAX;
	code[0] = '\0';
	detail[0] = '\0';
	skip_space(&c);
	if (c.at >= c.end || *c.at != '{')
		return DIRAUTH_ERR_SYNTAX;
	c.at++;
	skip_space(&c);
	if (c.at < c.end && *c.at == '}') {
		c.at++;
	} else {
		for (;;) {
			int key_escaped;
			int is_code;
			int is_detail;

			if (read_string(&c, key, sizeof(key), &key_escaped) != 0)
				return DIRAUTH_ERR_SYNTAX;
			/* A key spelled with escapes is not one of the two read here. */
			is_code = !key_escaped && strcmp(key, "error") == 0;
			is_detail = !key_escaped && strcmp(key, "detail") == 0;
			skip_space(&c);
			if (c.at >= c.end || *c.at != ':')
				return DIRAUTH_ERR_SYNTAX;
			c.at++;
			skip_space(&c);
			if (is_code) {
				if (have_code || read_string(&c, code, sizeof(code), &escaped) != 0 ||
				    escaped)
					return DIRAUTH_ERR_SYNTAX;
				have_code = 1;
			} else if (is_detail) {
				if (have_detail || read_string(&c, detail, sizeof(detail), &escaped) != 0)
					return DIRAUTH_ERR_SYNTAX;
				have_detail = 1;
			} else if (read_string(&c, NULL, 0, &escaped) != 0) {
				return DIRAUTH_ERR_SYNTAX;
			}
			skip_space(&c);
			if (c.at >= c.end)
				return DIRAUTH_ERR_SYNTAX;
			if (*c.at == '}') {
				c.at++;
				break;
			}
			if (*c.at != ',')
				return DIRAUTH_ERR_SYNTAX;
			c.at++;
			skip_space(&c);
		}
	}
	skip_space(&c);
	if (c.at != c.end || !have_code || !code_is_valid(code))
		return DIRAUTH_ERR_SYNTAX;
	memcpy(out->code, code, strlen(code) + 1);
	memcpy(out->detail, detail, strlen(detail) + 1);
	return 0;
}

void net_error_answer_describe(long status, const struct net_error_answer *answer, char *out, size_t cap)
{
	if (!answer)
		snprintf(out, cap, "HTTP %ld: unexpected answer", status);
	else if (answer->detail[0] != '\0')
		snprintf(out, cap, "HTTP %ld: %s: %s", status, answer->code, answer->detail);
	else
		snprintf(out, cap, "HTTP %ld: %s", status, answer->code);
}
