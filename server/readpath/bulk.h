/*
 * bulk.h: the reads an authority or a mirror makes many of at once, answered in one: the notes a
 * vote lists (POST /v1/<ns>/notes) and the snapshot headers from an epoch on
 * (GET /v1/<ns>/snapshots/from/<epoch>). docs/protocol.md says who asks and why; the documents
 * are schema/notes-bundle.md and schema/headers-bundle.md.
 *
 * Both read the store in one pass and stop at their answer's bounds, saying how far they got, so
 * that the asker continues from there: an answer never grows past a few megabytes however much
 * is asked for.
 */
#ifndef DIRAUTH_SERVER_READPATH_BULK_H
#define DIRAUTH_SERVER_READPATH_BULK_H

#include "base/buffer.h"
#include "server/store/store.h"

#include <stddef.h>
#include <stdint.h>

/* The answer to a notes request (request, len bytes) about namespace_name: each registration
 * (service id, sequence) and each health statement or revocation (SHA-256) that the store keeps,
 * in the request's order, until NOTES_ANSWER_MAX_BYTES; each note at most max_note bytes is
 * answered (a longer one is answered absent). out is replaced. Returns 0; DIRAUTH_ERR_SYNTAX or
 * DIRAUTH_ERR_BOUNDS (the request does not parse: nothing answered); DIRAUTH_ERR_NOMEM;
 * DIRAUTH_ERR_STORE. */
int readpath_notes_answer(struct store *store, const char *namespace_name, const uint8_t *request, size_t len,
                          size_t max_note, struct buffer *out);

/* The answer to a request for the headers of namespace_name from epoch from on: every stored
 * header (those alone included) in epoch order, until HEADERS_BUNDLE_MAX_COUNT headers or
 * HEADERS_BUNDLE_MAX_BYTES. out is replaced. Returns 0; DIRAUTH_ERR_NOT_FOUND (nothing is
 * published in the namespace); DIRAUTH_ERR_NOMEM; DIRAUTH_ERR_STORE. */
int readpath_headers_from(struct store *store, const char *namespace_name, uint64_t from, struct buffer *out);

#endif
