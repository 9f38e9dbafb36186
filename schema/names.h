/*
 * names.h: the spelling rules of the names that stand on document lines, written once.
 *
 * Every document (snapshot header, vote, checkpoint, trust bundle, receipt, certificate), the
 * signer and dirauthd's configuration judge log origins and key names by these functions, so
 * a name one of them accepts is never refused by another.
 */
#ifndef DIRAUTH_SCHEMA_NAMES_H
#define DIRAUTH_SCHEMA_NAMES_H

#include <stddef.h>

/* The longest log origin (snapshot, vote, checkpoint, trust bundle). */
#define NAMES_ORIGIN_MAX 255

/* 1 when origin (len bytes) is a log origin: 1..NAMES_ORIGIN_MAX bytes of printable ASCII
 * without space or '+' (the signed-note key name rule, which c2sp.org/tlog-checkpoint uses for
 * origins, narrowed to ASCII). Else 0. */
int names_origin_is_valid(const char *origin, size_t len);

/* 1 when name (len bytes) is a signed-note key name (note_name_is_valid) made of ASCII only, so
 * that it can stand on a line of a dirauth document. Else 0. */
int names_key_name_is_ascii(const char *name, size_t len);

/* The same two rules for a NUL-terminated name kept in a char array of capacity cap, as a
 * document's struct holds it: 0 as well when the array holds no NUL. */
int names_origin_field_is_valid(const char *field, size_t cap);
int names_key_name_field_is_ascii(const char *field, size_t cap);

#endif
