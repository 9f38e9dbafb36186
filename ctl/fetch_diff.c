/*
 * fetch_diff.c: the body of the snapshot being fetched as a diff from the one held (fetch_diff.h).
 *
 * Everything that goes wrong here is a reason to fetch the whole body, written into use->why for
 * the caller to show, never a failure of the fetch: the held header is read back, its body file
 * read under the bundle's bound and hashed (a file that no longer hashes to what its header
 * commits to is no base), the diff asked for at
 * GET <server>/v1/<ns>/snapshots/<epoch>/diff/<base sha256>, and rebuilt and verified by
 * verify_snapshot_diff. The exchange's own report is a scratch one, kept out of the caller's.
 */
#include "ctl/fetch_diff.h"

#include "base/error.h"
#include "crypto/crypto.h"
#include "ctl/exchange.h"
#include "ctl/files.h"
#include "ctl/report.h"
#include "net/client.h"
#include "net/pool.h"
#include "verify/history.h"
#include "verify/snapshot.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int not_used(struct ctl_fetch_diff_use *use, const char *why, const char *detail)
{
	snprintf(use->why, sizeof use->why, "%s%s%.160s", why, detail && detail[0] ? ": " : "",
	         detail ? detail : "");
	return DIRAUTH_ERR_NOT_FOUND;
}

int ctl_fetch_diff(struct net_pool *pool, const char *server_url, size_t base_len, const char *authorization,
                   const struct trust_bundle *bundle, const char *directory, const char *namespace_name,
                   const uint8_t *held_note, size_t held_len, const struct snapshot_header *header,
                   struct buffer *body, struct ctl_fetch_diff_use *use)
{
	struct verify_held held;
	char path[4096], hex[65], detail[VERIFY_DETAIL_MAX];
	uint8_t *base = NULL, digest[32];
	size_t base_size = 0;
	memset(use, 0, sizeof *use);
	if (held_len == 0 || verify_held_parse(held_note, held_len, &held, NULL, 0) != 0 ||
	    held.header.epoch >= header->epoch)
		return DIRAUTH_ERR_NOT_FOUND;
	use->asked = 1;
	use->base_epoch = held.header.epoch;
	if (snprintf(path, sizeof path, "%s/%s/%" PRIu64 ".body", directory, namespace_name,
	             held.header.epoch) >= (int)sizeof path)
		return not_used(use, "the held body's path is too long", NULL);
	size_t bound =
	    bundle->max_body_uncompressed > SIZE_MAX ? SIZE_MAX : (size_t)bundle->max_body_uncompressed;
	if (!ctl_file_exists(path))
		return not_used(use, "the held body is not kept", NULL);
	if (ctl_file_read(path, bound, &base, &base_size) != 0)
		return not_used(use, "the held body cannot be read", NULL);
	if (crypto_sha256(base, base_size, digest) != 0 || memcmp(digest, held.header.body_sha256, 32) != 0) {
		free(base);
		return not_used(use, "the held body is not the one its header commits to", NULL);
	}
	for (size_t i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);

	struct buffer url;
	struct net_response response;
	struct ctl_report scratch;
	const char *const headers[] = {"Accept-Encoding: zstd, gzip", authorization, NULL};
	buffer_init(&url);
	net_response_init(&response);
	ctl_report_init(&scratch);
	int rc = buffer_appendf(&url, "%.*s/v1/%s/snapshots/%" PRIu64 "/diff/%s", (int)base_len, server_url,
	                        namespace_name, header->epoch, hex);
	size_t max_served =
	    bundle->max_body_compressed > SIZE_MAX ? SIZE_MAX : (size_t)bundle->max_body_compressed;
	if (rc == 0)
		rc = ctl_exchange_get_pooled(pool, "fetch", "diff", (const char *)url.data, headers,
		                             max_served, 1, &response, &scratch);
	if (rc != 0) {
		rc = not_used(use, "the diff could not be fetched", scratch.message);
	} else if (response.status == 404) {
		use->missing = 1;
		rc = not_used(use, "no diff offered from the held body", NULL);
	} else if ((rc = verify_snapshot_diff(bundle, header, base, base_size, response.content_encoding,
	                                      response.body.data, response.body.len, body, detail,
	                                      sizeof detail)) != 0) {
		rc = not_used(use, "the diff was refused", detail);
	} else {
		use->used = 1;
		use->bytes = response.body.len;
	}
	net_response_free(&response);
	buffer_free(&url);
	free(base);
	return rc;
}
