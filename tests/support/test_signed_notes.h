/*
 * test_signed_notes.h: signed notes that tests and benchmarks make with signer keys: the
 * certificate by which an authority's identity key vouches for its signing key, and a checkpoint
 * signed by a log key and cosigned by a witness, as a second log with the same keys would
 * publish it.
 *
 * They are built from the schema codecs directly (certificate_encode, checkpoint_encode, signed
 * with signer_key_sign and framed by note_format), not with dirauthctl's or the signer's own code,
 * so that the verifying side is tested against notes it did not make. The functions return an
 * error code instead of aborting, so that the benchmarks, which do not run under Check, use them
 * as the tests do.
 */
#ifndef DIRAUTH_TEST_SIGNED_NOTES_H
#define DIRAUTH_TEST_SIGNED_NOTES_H

#include "base/buffer.h"
#include "schema/note.h"
#include "crypto/merkle.h"
#include "signer/key.h"

#include <stdint.h>

/* Appends to out the certificate note by which identity certifies signing under the authority
 * name authority, valid from valid_after to valid_until. Returns 0, or the error of
 * certificate_encode (a name, key or window it refuses), signer_key_sign or note_format; on error
 * out is as it was. */
int test_certificate_note(const struct signer_key *identity, const char *authority,
                          const struct note_verifier *signing, uint64_t valid_after, uint64_t valid_until,
                          struct buffer *out);

/* The same note written to the file path (created or truncated, mode 0644). Returns 0, an error
 * of test_certificate_note, or DIRAUTH_ERR_IO. */
int test_certificate_write(const struct signer_key *identity, const char *authority,
                           const struct note_verifier *signing, uint64_t valid_after, uint64_t valid_until,
                           const char *path);

/* Appends to out the checkpoint note of origin for a tree of size leaves with root: signed by
 * log_signer, then cosigned at timestamp by cosigner, whose cosignature verifier (type 0x04) is
 * cosigner_verifier. Returns 0, or the error of checkpoint_encode, the signing or note_format; on
 * error out is as it was. */
int test_cosigned_checkpoint(const struct signer_key *log_signer, const struct signer_key *cosigner,
                             const struct note_verifier *cosigner_verifier, const char *origin, uint64_t size,
                             const merkle_hash root, uint64_t timestamp, struct buffer *out);

/* Replaces text with the text of the signed note note_bytes. Returns 0 or the error of note_parse
 * (text is then empty). */
int test_note_text(const struct buffer *note_bytes, struct buffer *text);

#endif
