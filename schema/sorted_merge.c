/*
 * sorted_merge.c: the merges of sorted lists under the vote delta and the snapshot diff
 * (sorted_merge.h). Each is one pass over two sorted sequences, so a difference between bodies of
 * a hundred thousand items costs a few hundred thousand comparisons, never a search; and the rules
 * that give a difference one spelling (changes strictly ascending, no del of a key the base lacks,
 * no put equal to the base's item) are said here once for every document that uses them.
 */
#include "schema/sorted_merge.h"

#include "base/error.h"

static const void *item_at(const struct sorted_kind *kind, struct sorted_items items, size_t i)
{
	return (const char *)items.items + i * kind->item_size;
}

int sorted_merge_changes(const struct sorted_kind *kind, struct sorted_items base, struct sorted_items target,
                         int (*change)(void *context, const void *removed, const void *put), void *context)
{
	size_t i = 0, j = 0;
	while (i < base.count || j < target.count) {
		const void *from = i < base.count ? item_at(kind, base, i) : NULL;
		const void *to = j < target.count ? item_at(kind, target, j) : NULL;
		int order = !from ? 1 : !to ? -1 : kind->compare(from, to);
		if (order <= 0)
			i++;
		if (order >= 0)
			j++;
		if (order == 0 && kind->same(from, to))
			continue;
		int rc = change(context, order <= 0 ? from : NULL, order >= 0 ? to : NULL);
		if (rc)
			return rc;
	}
	return 0;
}

int sorted_apply_change(struct sorted_apply *apply, const void *previous, const void *change, int put)
{
	const struct sorted_kind *kind = apply->kind;
	int rc = 0;
	if (previous && kind->compare(previous, change) >= 0)
		return DIRAUTH_ERR_SYNTAX;
	/* The base's items before the change's key are kept. */
	while (rc == 0 && apply->next < apply->base.count &&
	       kind->compare(item_at(kind, apply->base, apply->next), change) < 0)
		rc = apply->keep(apply->context, item_at(kind, apply->base, apply->next++));
	if (rc)
		return rc;
	int held = apply->next < apply->base.count &&
	           kind->compare(item_at(kind, apply->base, apply->next), change) == 0;
	if (put ? held && kind->same(item_at(kind, apply->base, apply->next), change) : !held)
		return DIRAUTH_ERR_SYNTAX; /* an equal put, or a del of a key the base does not hold */
	if (held)
		apply->next++;
	return put ? apply->keep(apply->context, change) : 0;
}

int sorted_apply_finish(struct sorted_apply *apply)
{
	int rc = 0;
	while (rc == 0 && apply->next < apply->base.count)
		rc = apply->keep(apply->context, item_at(apply->kind, apply->base, apply->next++));
	return rc;
}
