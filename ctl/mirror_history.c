/*
 * mirror_history.c: the mirror's own check of the headers it serves for the epochs between two
 * snapshots it fetched (ctl_mirror_verify_chain, mirror.h).
 *
 * fetch believes the new snapshot through libdirauth, which walks the same chain but keeps only
 * its end; the mirror serves every header of the walk as a file, so it downloads them again from
 * the server that passed and holds each to the same test: signed by the trust bundle's threshold
 * at its own valid-after, and the `previous` digests leading from the new header back to the held
 * one (verify/history.h). A header that does not chain is never served.
 */
#include "ctl/mirror.h"

#include "ctl/keyring.h"
#include "base/error.h"
#include "verify/history.h"
#include "verify/keyring.h"

#include <stdio.h>
#include <string.h>

#define LATEST_HEADER "latest.header"
#define WHAT_MAX      (NAMESPACE_NAME_MAX + 16)

static void what_of(const char *namespace_name, char what[WHAT_MAX])
{
	snprintf(what, WHAT_MAX, "fetch %s", namespace_name);
}

/* Reads the held header note back; without it there is no rollback check, and a check that
 * cannot run denies. */
static int parse_held(const char *namespace_name, const uint8_t *held_bytes, size_t held_len,
                      struct verify_held *held, struct ctl_report *report)
{
	int rc = verify_held_parse(held_bytes, held_len, held, NULL, 0);

	if (rc != 0)
		ctl_report_fail(report,
		                rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO ? CTL_EXIT_SOFTWARE
		                                                                    : CTL_EXIT_DATA,
		                "fetch %s: held header %s cannot be read back: %s", namespace_name,
		                LATEST_HEADER, dirauth_strerror(rc));
	return rc;
}

/* The walk of step 2b, begun: the keyring of the bundle and the certificates, and the chain from
 * header back to held. The caller frees *ring (also on failure). */
static int chain_begin(const struct trust_bundle *bundle, const uint8_t *certificates,
                       size_t certificates_len, const struct verify_held *held,
                       const struct snapshot_header *header, uint64_t max_chain,
                       struct certificate_keyring **ring, struct verify_chain *chain,
                       struct ctl_report *report)
{
	const char *namespace_name = header->namespace_name;
	struct verify_pins pins;
	char detail[VERIFY_DETAIL_MAX];
	char what[WHAT_MAX + 16];
	int rc;

	snprintf(what, sizeof(what), "fetch %s: history", namespace_name);
	rc = ctl_keyring_build(what, bundle, certificates, certificates_len, ring, NULL, report);
	if (rc != 0)
		return rc;
	pins.ring = *ring;
	pins.threshold = bundle->threshold;
	pins.pinned_by = VERIFY_TRUST_BUNDLE_PINNED_BY;
	rc = verify_chain_begin(chain, &pins, held, header, max_chain, detail, sizeof(detail));
	what_of(namespace_name, what);
	if (rc == DIRAUTH_ERR_BOUNDS) {
		/* Too far to walk: only the operator can say the new snapshot is the one to believe. */
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "%s: %s: check the new snapshot by other means, then delete %s/%s and fetch again", what,
		    detail, namespace_name, LATEST_HEADER);
		return rc;
	}
	if (rc != 0)
		return ctl_verification_fail(report, what, rc, detail);
	return 0;
}

static int chain_add(struct verify_chain *chain, uint64_t epoch, const uint8_t *note, size_t note_len,
                     struct ctl_report *report)
{
	char detail[VERIFY_DETAIL_MAX];
	char what[WHAT_MAX];
	int rc;

	rc = verify_chain_add(chain, epoch, note, note_len, detail, sizeof(detail));
	if (rc != 0) {
		what_of(chain->namespace_name, what);
		return ctl_verification_fail(report, what, rc, detail);
	}
	return 0;
}

static int chain_finish(const struct verify_chain *chain, struct ctl_report *report)
{
	char detail[VERIFY_DETAIL_MAX];
	char what[WHAT_MAX];
	int rc;

	rc = verify_chain_finish(chain, detail, sizeof(detail));
	if (rc != 0) {
		what_of(chain->namespace_name, what);
		return ctl_verification_fail(report, what, rc, detail);
	}
	return 0;
}

/* Step 2b over links already downloaded, from a parsed held header. */
static int walk_links(const struct trust_bundle *bundle, const uint8_t *certificates, size_t certificates_len,
                      const struct verify_held *held, const struct snapshot_header *header,
                      const struct ctl_fetch_link *links, size_t link_count, uint64_t max_chain,
                      struct ctl_report *report)
{
	struct certificate_keyring *ring = NULL;
	struct verify_chain chain;
	int rc;

	rc = chain_begin(bundle, certificates, certificates_len, held, header, max_chain, &ring, &chain,
	                 report);
	for (size_t i = 0; rc == 0 && i < link_count && !verify_chain_reached(&chain); i++)
		rc = chain_add(&chain, links[i].epoch, links[i].note, links[i].note_len, report);
	if (rc == 0)
		rc = chain_finish(&chain, report);
	verify_keyring_free(ring);
	return rc;
}

int ctl_mirror_verify_chain(const struct trust_bundle *bundle, const uint8_t *certificates,
                            size_t certificates_len, const uint8_t *held_bytes, size_t held_len,
                            const struct snapshot_header *header, const struct ctl_fetch_link *links,
                            size_t link_count, uint64_t max_chain, struct ctl_report *report)
{
	struct verify_held held;
	int rc;

	rc = parse_held(header->namespace_name, held_bytes, held_len, &held, report);
	if (rc == 0)
		rc = walk_links(bundle, certificates, certificates_len, &held, header, links, link_count,
		                max_chain, report);
	return rc;
}
