/*
 * tlog_internal.h: what the two files of the log's table share (tlog_table.c: the hashes, leaves
 * and state; tlog_checkpoints.c: checkpoints, partial tiles, the witnessed and published heads).
 * Internal to server/store.
 */
#ifndef DIRAUTH_SERVER_STORE_TLOG_INTERNAL_H
#define DIRAUTH_SERVER_STORE_TLOG_INTERNAL_H

#include "server/store/internal.h"
#include "server/store/tlog_table.h"

#include "crypto/merkle.h"
#include "kv/kv.h"

#include <stdint.h>

#define LOG_STATE_LEN       (8 + 8 + 1 + 8)
#define LOG_PARTIAL_KEY_LEN (STORE_NS_LEN + 1 + 8 + 2)
#define LOG_TILE_LEVELS     8 /* tile levels that hold anything: hash levels 0, 8 .. 56 */

/* The key of a partial tile of a checkpointed tree in log_partials. */
void log_table_partial_key(uint8_t key[LOG_PARTIAL_KEY_LEN], uint16_t ns, uint8_t level, uint64_t index,
                           uint16_t width);

/* The log's state in t (zeros when it has none). A damaged record fails t. */
void log_table_state_get(struct kv_txn *t, struct store *store, uint16_t ns, struct store_log_state *out);

void log_table_state_put(struct kv_txn *t, struct store *store, uint16_t ns,
                         const struct store_log_state *state);

/* The namespace id of name in t. Returns 0, DIRAUTH_ERR_NOT_FOUND, or a check_name error. */
int log_table_namespace_of(struct kv_txn *t, struct store *store, const char *name, uint16_t *ns);

/* Ends the read transaction t of a read that came to rc: t's error first, else rc. */
int log_table_read_end(struct kv_txn *t, int rc);

/* The RFC 6962 root of the tree of size leaves, folded from its stored hashes right to left.
 * Returns 0, DIRAUTH_ERR_STORE (a hash missing), DIRAUTH_ERR_CRYPTO. */
int log_table_tree_root(struct kv_txn *t, struct store *store, uint16_t ns, uint64_t size, merkle_hash out);

#endif
