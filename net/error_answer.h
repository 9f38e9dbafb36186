/*
 * error_answer.h: the stable error code of a server's JSON error answer.
 *
 * Every refusal of the HTTP API is the JSON object {"error":"<code>","detail":"<sentence>"}
 * (docs/api.md), and the code is what a program branches on: a vote pushed to a peer that
 * answers 409 `conflicting_vote` is evidence, one answered 409 `too_late` is not; a revocation
 * replayed to a server that answers 409 `replayed` was already there. The answer comes from
 * another machine, to dirauthd from a peer and to dirauthctl from a server, so both read it here,
 * as untrusted input: a flat JSON object of string members only, bounded by the caller's answer
 * cap, every escape checked. The code is kept only
 * when it is spelled as codes are (lower-case ASCII letters, digits and '_'); the detail is
 * reduced to printable ASCII for a log line and never acted upon.
 */
#ifndef DIRAUTH_NET_ERROR_ANSWER_H
#define DIRAUTH_NET_ERROR_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#define NET_ERROR_CODE_MAX   64  /* longest code kept, without its NUL */
#define NET_ERROR_DETAIL_MAX 255 /* longest detail kept, without its NUL (longer is cut) */

struct net_error_answer {
	char code[NET_ERROR_CODE_MAX + 1];     /* e.g. "too_late" */
	char detail[NET_ERROR_DETAIL_MAX + 1]; /* printable ASCII; "" when the object has none */
};

/* Parses an error answer body of len bytes: optional white space, one JSON object whose members
 * are all strings (no numbers, literals, arrays or nested objects), optional white space, the
 * end. The object must hold an "error" member of 1..NET_ERROR_CODE_MAX bytes of [a-z0-9_]; a
 * "detail" member is optional; other members are ignored; a member named twice is refused. Strings
 * may hold only JSON's escapes (\" \\ \/ \b \f \n \r \t \uXXXX) and no control character; the
 * detail's escapes and bytes outside printable ASCII become '?' (quote, backslash and slash stay
 * themselves) and it is cut at NET_ERROR_DETAIL_MAX. *out is zeroed first and filled only on
 * success. Returns 0 or DIRAUTH_ERR_SYNTAX (anything else, including an empty input). */
int net_error_answer_parse(const uint8_t *buf, size_t len, struct net_error_answer *out);

/* One line for a person about an answer of that status: "HTTP <status>: <code>: <detail>"
 * (": <detail>" left out when the detail is empty) for a parsed answer, "HTTP <status>:
 * unexpected answer" when answer is NULL (the body was not an error object); truncated to fit out
 * (capacity cap). */
void net_error_answer_describe(long status, const struct net_error_answer *answer, char *out, size_t cap);

#endif
