/*
 * sorted_merge.h: the two linear merges under every document written as a difference between
 * lists sorted by a key (schema/vote_delta.h, schema/snapshot_diff.h).
 *
 * Building a difference walks a base list and a target list, both sorted strictly by the key,
 * side by side once, and names each key whose items differ: an item only in the base is removed
 * (a del), an item only in the target or different from the base's item of its key is put. So the
 * difference is the smallest one, one change per key, in key order. Applying it walks the base's
 * items and the changes side by side once: the base's items before a change's key are kept, a del
 * removes the base's item of its key, a put adds or replaces one; the changes must be strictly
 * ascending, a del must name a key the base holds, and a put must differ from the base's item of
 * its key, so that a difference has one spelling. Neither merge allocates; each item of the result
 * is handed to the caller as it is chosen.
 */
#ifndef DIRAUTH_SCHEMA_SORTED_MERGE_H
#define DIRAUTH_SCHEMA_SORTED_MERGE_H

#include <stddef.h>

/* A list of items of one kind, sorted strictly by the kind's key; borrowed. */
struct sorted_items {
	const void *items;
	size_t count;
};

/* What the merges know of a kind of item. */
struct sorted_kind {
	size_t item_size;
	int (*compare)(const void *a, const void *b); /* by key: <0, 0 or >0, as memcmp */
	int (*same)(const void *a, const void *b);    /* two items of one key are equal in full */
};

/* Calls change(context, removed, put) for each key whose items differ between base and target, in
 * key order: (base's item, NULL) for a key only base holds; (NULL, target's item) for a key only
 * target holds; (base's item, target's item) for a key whose items differ. Both lists must be
 * sorted strictly by kind->compare (the caller checks). Returns 0, or the first non-zero return of
 * change, which stops the walk. */
int sorted_merge_changes(const struct sorted_kind *kind, struct sorted_items base, struct sorted_items target,
                         int (*change)(void *context, const void *removed, const void *put), void *context);

/* The base's items merged with a stream of changes, one change at a time: each item of the result
 * goes to keep(context, item) as it is chosen, in key order (an item of the base, or a put). */
struct sorted_apply {
	const struct sorted_kind *kind;
	struct sorted_items base; /* sorted strictly by kind->compare */
	size_t next;              /* the base's next item; 0 to start */
	int (*keep)(void *context, const void *item);
	void *context;
};

/* Takes one change: a del (put 0) of change's key, or a put of the item change. previous is the
 * change taken before this one (NULL for the first), which the caller keeps. The base's items
 * before change's key are kept first. Returns 0; DIRAUTH_ERR_SYNTAX for a change not strictly after
 * previous, a del of a key the base does not hold, or a put equal to the base's item of its key;
 * or keep's first error. */
int sorted_apply_change(struct sorted_apply *apply, const void *previous, const void *change, int put);

/* Keeps the base's items after the last change. Returns 0 or keep's first error. */
int sorted_apply_finish(struct sorted_apply *apply);

#endif
