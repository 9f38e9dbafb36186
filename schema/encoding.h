/*
 * encoding.h: the value encodings used in document text: lower-case hex, standard base64
 * (RFC 4648, padded), and canonical unsigned decimals.
 *
 * Decoders are strict: one way to write each value. Hex is lower case only; base64 must be
 * padded, use the standard alphabet and have zero bits where padding leaves bits unused;
 * decimals have no sign, no leading zero (except "0") and fit in uint64_t.
 */
#ifndef DIRAUTH_SCHEMA_ENCODING_H
#define DIRAUTH_SCHEMA_ENCODING_H

#include <stddef.h>
#include <stdint.h>

/* Writes 2*len lower-case hex characters and a NUL to out (room for 2*len+1). */
void hex_encode(const uint8_t *data, size_t len, char *out);

/* Decodes exactly 2*out_len lower-case hex characters. Returns 0 or DIRAUTH_ERR_SYNTAX. */
int hex_decode(const char *text, size_t text_len, uint8_t *out, size_t out_len);

/* Length of the base64 text of len bytes, without the NUL. */
size_t base64_encoded_length(size_t len);

/* Writes the base64 text of data and a NUL to out (room for base64_encoded_length(len)+1). */
void base64_encode(const uint8_t *data, size_t len, char *out);

/* Decodes canonical padded base64 into out (capacity out_cap). *out_len gets the byte count.
 * Returns 0, DIRAUTH_ERR_SYNTAX, or DIRAUTH_ERR_BOUNDS when out_cap is too small. */
int base64_decode(const char *text, size_t text_len, uint8_t *out, size_t out_cap, size_t *out_len);

/* Parses a canonical unsigned decimal. Returns 0 or DIRAUTH_ERR_SYNTAX (also on overflow). */
int decimal_parse(const char *text, size_t text_len, uint64_t *out);

#endif
