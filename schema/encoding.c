/*
 * encoding.c: strict hex, base64 and decimal codecs.
 *
 * These sit under every document parser, so they refuse anything that has a second spelling:
 * a canonical document is one whose bytes are fixed by its values.
 */
#include "schema/encoding.h"

#include "base/error.h"

static const char hex_digits[] = "0123456789abcdef";
static const char base64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void hex_encode(const uint8_t *data, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hex_digits[data[i] >> 4];
		out[2 * i + 1] = hex_digits[data[i] & 15];
	}
	out[2 * len] = 0;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int hex_decode(const char *text, size_t text_len, uint8_t *out, size_t out_len)
{
	if (text_len != 2 * out_len)
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < out_len; i++) {
		int high = hex_value(text[2 * i]);
		int low = hex_value(text[2 * i + 1]);
		if (high < 0 || low < 0)
			return DIRAUTH_ERR_SYNTAX;
		out[i] = (uint8_t)(high << 4 | low);
	}
	return 0;
}

size_t base64_encoded_length(size_t len)
{
	return (len + 2) / 3 * 4;
}

void base64_encode(const uint8_t *data, size_t len, char *out)
{
	size_t o = 0;
	size_t i = 0;
	for (; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
		out[o++] = base64_alphabet[v >> 18 & 63];
		out[o++] = base64_alphabet[v >> 12 & 63];
		out[o++] = base64_alphabet[v >> 6 & 63];
		out[o++] = base64_alphabet[v & 63];
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)data[i] << 16;
		out[o++] = base64_alphabet[v >> 18 & 63];
		out[o++] = base64_alphabet[v >> 12 & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8;
		out[o++] = base64_alphabet[v >> 18 & 63];
		out[o++] = base64_alphabet[v >> 12 & 63];
		out[o++] = base64_alphabet[v >> 6 & 63];
		out[o++] = '=';
	}
	out[o] = 0;
}

static int base64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int base64_decode(const char *text, size_t text_len, uint8_t *out, size_t out_cap, size_t *out_len)
{
	if (text_len % 4 != 0)
		return DIRAUTH_ERR_SYNTAX;
	size_t padding = 0;
	if (text_len >= 1 && text[text_len - 1] == '=')
		padding++;
	if (text_len >= 2 && text[text_len - 2] == '=')
		padding++;
	size_t decoded = text_len / 4 * 3 - padding;
	if (decoded > out_cap)
		return DIRAUTH_ERR_BOUNDS;
	size_t o = 0;
	for (size_t i = 0; i < text_len; i += 4) {
		int v[4];
		size_t last_group = i + 4 == text_len;
		for (size_t j = 0; j < 4; j++) {
			char c = text[i + j];
			if (c == '=' && last_group && j >= 4 - padding) {
				v[j] = 0;
				continue;
			}
			v[j] = base64_value(c);
			if (v[j] < 0)
				return DIRAUTH_ERR_SYNTAX;
		}
		uint32_t bits =
		    (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		if (last_group && padding == 2 && (bits & 0xffff))
			return DIRAUTH_ERR_SYNTAX; /* non-zero unused bits: a second spelling */
		if (last_group && padding == 1 && (bits & 0xff))
			return DIRAUTH_ERR_SYNTAX;
		size_t group_bytes = last_group ? 3 - padding : 3;
		uint8_t bytes[3] = {(uint8_t)(bits >> 16), (uint8_t)(bits >> 8), (uint8_t)bits};
		for (size_t j = 0; j < group_bytes; j++)
			out[o++] = bytes[j];
	}
	*out_len = o;
	return 0;
}

int decimal_parse(const char *text, size_t text_len, uint64_t *out)
{
	if (text_len == 0 || text_len > 20)
		return DIRAUTH_ERR_SYNTAX;
	if (text[0] == '0' && text_len > 1)
		return DIRAUTH_ERR_SYNTAX;
	uint64_t value = 0;
	for (size_t i = 0; i < text_len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return DIRAUTH_ERR_SYNTAX;
		uint64_t digit = (uint64_t)(text[i] - '0');
		if (value > (UINT64_MAX - digit) / 10)
			return DIRAUTH_ERR_SYNTAX;
		value = value * 10 + digit;
	}
	*out = value;
	return 0;
}
