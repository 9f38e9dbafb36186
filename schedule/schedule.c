/*
 * schedule.c: epoch arithmetic (schedule.h).
 *
 * Every multiplication is checked against a limit of 2^63 before it is made, so that a hostile
 * epoch number (from a request, a stored record or a peer) yields DIRAUTH_ERR_BOUNDS, never a
 * wrapped time.
 */
#include "schedule/schedule.h"

#include "base/error.h"

#define SCHEDULE_TIME_LIMIT (UINT64_MAX / 2)

int schedule_check(const struct epoch_schedule *schedule)
{
	if (schedule->length == 0 || schedule->length > SCHEDULE_LENGTH_MAX ||
	    schedule->validity_epochs == 0 || schedule->validity_epochs > SCHEDULE_VALIDITY_MAX ||
	    schedule->genesis > SCHEDULE_GENESIS_MAX)
		return DIRAUTH_ERR_CONFIG;
	if (schedule->prepare >= schedule->length || schedule->vote > schedule->prepare ||
	    schedule->signature > schedule->prepare - schedule->vote)
		return DIRAUTH_ERR_CONFIG;
	return 0;
}

int schedule_epoch_of(const struct epoch_schedule *schedule, uint64_t now, uint64_t *epoch)
{
	if (schedule->length == 0 || now < schedule->genesis)
		return DIRAUTH_ERR_NOT_FOUND;
	*epoch = (now - schedule->genesis) / schedule->length;
	return 0;
}

int schedule_current_epoch(const struct epoch_schedule *schedule, uint64_t now, uint64_t *epoch)
{
	/* vote_at(E) = start(E) - prepare: the epoch whose preparation began last is the epoch that
	 * contains now + prepare. */
	if (now > SCHEDULE_TIME_LIMIT)
		return DIRAUTH_ERR_NOT_FOUND;
	return schedule_epoch_of(schedule, now + schedule->prepare, epoch);
}

uint64_t schedule_destination_epoch(const struct epoch_schedule *schedule, uint64_t now)
{
	uint64_t epoch;
	if (schedule_current_epoch(schedule, now, &epoch) != 0)
		return 0;
	return epoch + 1;
}

int schedule_epoch_phases(const struct epoch_schedule *schedule, uint64_t epoch, struct epoch_phases *out)
{
	struct epoch_times times;
	int rc = schedule_epoch_times(schedule, epoch, &times);
	if (rc)
		return rc;
	if (times.valid_after < schedule->prepare)
		return DIRAUTH_ERR_BOUNDS;
	out->start = times.valid_after;
	out->vote_at = times.valid_after - schedule->prepare;
	out->vote_deadline = out->vote_at + schedule->vote;
	out->signature_deadline = out->vote_deadline + schedule->signature;
	return 0;
}

int schedule_epoch_times(const struct epoch_schedule *schedule, uint64_t epoch, struct epoch_times *out)
{
	uint64_t length = schedule->length;
	if (length == 0 || epoch > SCHEDULE_TIME_LIMIT / length)
		return DIRAUTH_ERR_BOUNDS;
	uint64_t start = schedule->genesis + epoch * length;
	if (start < schedule->genesis || start > SCHEDULE_TIME_LIMIT ||
	    schedule->validity_epochs > (SCHEDULE_TIME_LIMIT - start) / length)
		return DIRAUTH_ERR_BOUNDS;
	out->valid_after = start;
	out->fresh_until = start + length;
	out->valid_until = start + schedule->validity_epochs * length;
	return 0;
}
