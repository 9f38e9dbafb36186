/*
 * check_log_routes.c: the transparency log over real HTTP on loopback (http_fixture.h: a real
 * signer, store, scheduler and HTTP server in the test process), as a tlog-tiles client sees it.
 *
 * 260 published snapshots, caught up into the log in three steps (checkpoints of 100, 256 and 260
 * entries): the checkpoint verifies against the log key and the cosigner read from their key
 * files; the root of every checkpointed size is rebuilt from tiles fetched over HTTP alone, with
 * tlog/'s client functions, and equals the checkpoint's; entry bundles hash to their level-0
 * tiles and hold the published header texts; tiles are immutable and the checkpoint is not; one
 * connection carries every request. Hostile and out-of-tree paths each get their status and code.
 */
#include "http_fixture.h"

#include "schema/checkpoint.h"
#include "server/http/routes.h"
#include "server/publish/publish.h"
#include "server/store/tlog_table.h"
#include "server/tlog/translog.h"
#include "signer/key.h"
#include "tlog/bundle.h"
#include "tlog/policy.h"
#include "tlog/tile.h"
#include "tlog/tree.h"

/* A client that keeps one connection for all its requests. */
struct client {
	struct fixture *f;
	CURL *curl;
	long connects; /* connections opened so far */
};

/* GET path on the client's connection. */
static void client_get(struct client *c, const char *path, struct response *out)
{
	char url[512];
	snprintf(url, sizeof url, "http://127.0.0.1:%u%s", c->f->port, path);
	memset(out, 0, sizeof *out);
	buffer_init(&out->body);
	buffer_init(&out->headers);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &out->body);
	curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, collect);
	curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, &out->headers);
	CURLcode rc = curl_easy_perform(c->curl);
	ck_assert_msg(rc == CURLE_OK, "GET %s: %s", path, curl_easy_strerror(rc));
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &out->status);
	long connects = 0;
	curl_easy_getinfo(c->curl, CURLINFO_NUM_CONNECTS, &connects);
	c->connects += connects;
}

/* A tlog_fetch_tile over HTTP: the only source of hashes of the rebuild. */
static int fetch_tile(void *context, const struct tlog_tile *tile, uint8_t out[TLOG_TILE_BYTES], size_t *len)
{
	struct client *c = context;
	char tile_path[TLOG_TILE_PATH_MAX + 1], path[256];
	ck_assert_int_eq(tlog_tile_path_format(tile, tile_path), 0);
	snprintf(path, sizeof path, "/v1/mix/log/%s", tile_path);
	struct response r;
	client_get(c, path, &r);
	int rc = 0;
	if (r.status != 200 || r.body.len > TLOG_TILE_BYTES) {
		rc = DIRAUTH_ERR_NOT_FOUND;
	} else {
		ck_assert_str_eq(header(&r, "Cache-Control"), "public, max-age=31536000, immutable");
		ck_assert_str_eq(header(&r, "Content-Type"), "application/octet-stream");
		memcpy(out, r.body.data, r.body.len);
		*len = r.body.len;
	}
	response_free(&r);
	return rc;
}

/* The root of the tree of size leaves, from tiles fetched over HTTP. */
static void root_from_tiles(struct client *c, uint64_t size, merkle_hash out)
{
	struct tlog_tile_source *source = calloc(1, sizeof *source);
	source->fetch = fetch_tile;
	source->context = c;
	source->tree_size = size;
	struct tlog_hash_reader reader = {tlog_tile_source_read, source};
	ck_assert_int_eq(tlog_tree_root(&reader, size, out), 0);
	free(source);
}

/* The checkpoint note served, verified against the keys of the signer's key files. */
static struct checkpoint verified_checkpoint(struct fixture *f, const struct buffer *note)
{
	struct fixture_log_keys keys;
	fixture_log_keys_load(f, &keys);
	struct note *parsed = NULL;
	struct checkpoint checkpoint;
	ck_assert_int_eq(note_parse(note->data, note->len, &parsed), 0);
	ck_assert_int_eq(tlog_checkpoint_verify(parsed, &keys.policy, &checkpoint, NULL, NULL), 0);
	note_free(parsed);
	return checkpoint;
}

/* The checkpoint of size as stored, parsed. */
static struct checkpoint stored_checkpoint(struct fixture *f, uint64_t size)
{
	struct buffer note;
	struct note *parsed = NULL;
	struct checkpoint checkpoint;
	buffer_init(&note);
	ck_assert_int_eq(store_log_checkpoint_at(f->store, "mix", size, &note), 0);
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	ck_assert_int_eq(checkpoint_parse(parsed->text, parsed->text_len, &checkpoint), 0);
	note_free(parsed);
	buffer_free(&note);
	return checkpoint;
}

static void expect_path(struct client *c, const char *path, long status, const char *code)
{
	struct response r;
	client_get(c, path, &r);
	expect_error(&r, status, code);
	response_free(&r);
}

START_TEST(test_log_over_http)
{
	struct fixture f;
	struct client c = {&f, NULL, 0};
	struct response r;
	fixture_open(&f, 0);

	/* Nothing published yet. */
	request(&f, "GET", "/v1/mix/log/checkpoint", NULL, 0, 0, NULL, &r);
	expect_error(&r, 404, "no_checkpoint");
	response_free(&r);
	request(&f, "GET", "/v1/mix/log/tile/0/000.p/1", NULL, 0, 0, NULL, &r);
	expect_error(&r, 404, "no_checkpoint");
	response_free(&r);

	for (uint64_t e = 11; e < 111; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 100);
	for (uint64_t e = 111; e < 267; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 256);
	for (uint64_t e = 267; e < 271; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 260);

	/* From here on one client, on one connection (an idle one is closed after the connection
	 * timeout, which publishing 260 epochs may take). */
	c.curl = curl_easy_init();
	ck_assert_ptr_nonnull(c.curl);

	/* The checkpoint: the latest, signed and cosigned, cached briefly. */
	client_get(&c, "/v1/mix/log/checkpoint", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(header(&r, "Content-Type"), "text/plain; charset=utf-8");
	ck_assert_str_eq(header(&r, "Cache-Control"), "public, max-age=5");
	struct checkpoint latest = verified_checkpoint(&f, &r.body);
	ck_assert_uint_eq(latest.tree_size, 260);
	response_free(&r);

	/* Every checkpointed size verifies from the tiles alone. */
	merkle_hash root;
	root_from_tiles(&c, 260, root);
	ck_assert_mem_eq(root, latest.root, MERKLE_HASH_SIZE);
	const uint64_t sizes[] = {100, 256};
	for (size_t i = 0; i < 2; i++) {
		struct checkpoint old = stored_checkpoint(&f, sizes[i]);
		root_from_tiles(&c, sizes[i], root);
		ck_assert_mem_eq(root, old.root, MERKLE_HASH_SIZE);
	}

	/* Entry bundles: the header texts, hashing to their level-0 tiles. */
	const char *bundles[][2] = {{"/v1/mix/log/tile/entries/000", "/v1/mix/log/tile/0/000"},
	                            {"/v1/mix/log/tile/entries/001.p/4", "/v1/mix/log/tile/0/001.p/4"},
	                            {"/v1/mix/log/tile/entries/000.p/100", "/v1/mix/log/tile/0/000.p/100"}};
	const size_t widths[] = {256, 4, 100}, starts[] = {0, 256, 0};
	for (size_t i = 0; i < 3; i++) {
		struct response bundle, tile;
		struct tlog_entry *entries = calloc(widths[i], sizeof *entries);
		client_get(&c, bundles[i][0], &bundle);
		client_get(&c, bundles[i][1], &tile);
		ck_assert_int_eq(bundle.status, 200);
		ck_assert_int_eq(tile.status, 200);
		ck_assert_str_eq(header(&bundle, "Cache-Control"), "public, max-age=31536000, immutable");
		ck_assert_int_eq(tlog_bundle_parse(bundle.body.data, bundle.body.len, widths[i], entries), 0);
		ck_assert_int_eq(tlog_bundle_check_tile(entries, widths[i], tile.body.data, tile.body.len),
		                 0);
		struct buffer leaf;
		buffer_init(&leaf);
		for (size_t j = 0; j < widths[i]; j += 37) {
			uint64_t epoch = 0;
			ck_assert_int_eq(store_log_leaf(f.store, "mix", starts[i] + j, &epoch, &leaf), 0);
			ck_assert_uint_eq(epoch, 11 + starts[i] + j);
			ck_assert_uint_eq(entries[j].len, leaf.len);
			ck_assert_mem_eq(entries[j].data, leaf.data, leaf.len);
		}
		buffer_free(&leaf);
		free(entries);
		response_free(&bundle);
		response_free(&tile);
	}

	/* The partial tiles of checkpointed sizes are served; the others are not. */
	client_get(&c, "/v1/mix/log/tile/1/000.p/1", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_uint_eq(r.body.len, 32);
	response_free(&r);
	/* Asked again, tiles and bundles are the answers kept (answer_cache.h): the same bytes and
	 * headers, without reading the store. */
	const char *again[] = {"/v1/mix/log/tile/0/000", "/v1/mix/log/tile/entries/000",
	                       "/v1/mix/log/tile/1/000.p/1", "/v1/mix/log/tile/entries/001.p/4"};
	for (size_t i = 0; i < sizeof again / sizeof again[0]; i++) {
		struct response once, twice;
		struct answer_cache_statistics before, after;
		client_get(&c, again[i], &once);
		answer_cache_statistics(f.http->log_answers, &before);
		client_get(&c, again[i], &twice);
		answer_cache_statistics(f.http->log_answers, &after);
		ck_assert_uint_eq(after.hits, before.hits + 1);
		ck_assert_int_eq(once.status, 200);
		ck_assert_int_eq(twice.status, 200);
		ck_assert_uint_eq(once.body.len, twice.body.len);
		ck_assert_mem_eq(once.body.data, twice.body.data, once.body.len);
		ck_assert_str_eq(header(&twice, "Cache-Control"), "public, max-age=31536000, immutable");
		ck_assert_str_eq(header(&twice, "Content-Type"), "application/octet-stream");
		response_free(&once);
		response_free(&twice);
	}
	expect_path(&c, "/v1/mix/log/tile/0/000.p/101", 404, "partial_tile_not_checkpointed");
	expect_path(&c, "/v1/mix/log/tile/0/001.p/3", 404, "partial_tile_not_checkpointed");
	expect_path(&c, "/v1/mix/log/tile/entries/001.p/2", 404, "partial_tile_not_checkpointed");
	/* Beyond the tree of the latest checkpoint. */
	expect_path(&c, "/v1/mix/log/tile/0/001", 404, "beyond_tree");
	expect_path(&c, "/v1/mix/log/tile/0/001.p/5", 404, "beyond_tree");
	expect_path(&c, "/v1/mix/log/tile/entries/002", 404, "beyond_tree");
	expect_path(&c, "/v1/mix/log/tile/1/000", 404, "beyond_tree");
	expect_path(&c, "/v1/mix/log/tile/2/000.p/1", 404, "beyond_tree");
	expect_path(&c, "/v1/mix/log/tile/8/000", 404, "beyond_tree");
	expect_path(&c, "/v1/mix/log/tile/63/x018/x446/x744/x073/x709/x551/615", 404, "beyond_tree");
	/* Not a tile's one spelling. */
	const char *malformed[] = {
	    "/v1/mix/log/tile/",
	    "/v1/mix/log/tile/0",
	    "/v1/mix/log/tile/0/",
	    "/v1/mix/log/tile/0/0",
	    "/v1/mix/log/tile/0/0000",
	    "/v1/mix/log/tile/0/x000/000",
	    "/v1/mix/log/tile/0/x001",
	    "/v1/mix/log/tile/0/001/002",
	    "/v1/mix/log/tile/00/000",
	    "/v1/mix/log/tile/64/000",
	    "/v1/mix/log/tile/0/000.p/0",
	    "/v1/mix/log/tile/0/000.p/256",
	    "/v1/mix/log/tile/0/000.p/007",
	    "/v1/mix/log/tile/0/000.p/",
	    "/v1/mix/log/tile/0/000/",
	    "/v1/mix/log/tile/0/000.p/4/",
	    "/v1/mix/log/tile/-1/000",
	    "/v1/mix/log/tile/data/000",
	    "/v1/mix/log/tile/8/000.gz",
	    "/v1/mix/log/tile/entries/000.p/256",
	    "/v1/mix/log/tile/entries/x000/000",
	    "/v1/mix/log/tile/0/x018/x446/x744/x073/x709/x551/616",
	    "/v1/mix/log/tile/0/x001/x002/x003/x004/x005/x006/x007/x008/x009/x010/x011/x012/x013/000",
	};
	for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
		expect_path(&c, malformed[i], 400, "malformed_log_path");
	/* Not the log's at all, or not served here. */
	expect_path(&c, "/v1/mix/log/tile/0/%30%30%30", 404, "not_found");
	expect_path(&c, "/v1/mix/log/", 404, "not_found");
	expect_path(&c, "/v1/mix/log/checkpoint/", 404, "not_found");
	expect_path(&c, "/v1/mix/log/tiles/0/000", 404, "not_found");
	expect_path(&c, "/v1/nowhere/log/checkpoint", 404, "not_found");
	expect_path(&c, "/v1/mail/log/checkpoint", 404, "no_checkpoint");
	expect_path(&c, "/v1/mail/log/tile/0/000.p/1", 404, "no_checkpoint");
	/* One connection carried every request, refusals included. */
	ck_assert_int_eq(c.connects, 1);

	/* Other methods: 405 with Allow; HEAD answers without a body. */
	request(&f, "POST", "/v1/mix/log/checkpoint", (const uint8_t *)"x", 1, 0, NULL, &r);
	expect_error(&r, 405, "method_not_allowed");
	ck_assert_str_eq(header(&r, "Allow"), "GET, HEAD");
	response_free(&r);
	request(&f, "DELETE", "/v1/mix/log/tile/0/000", NULL, 0, 0, NULL, &r);
	expect_error(&r, 405, "method_not_allowed");
	response_free(&r);
	request(&f, "HEAD", "/v1/mix/log/tile/0/000", NULL, 0, 0, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_uint_eq(r.body.len, 0);
	ck_assert_str_eq(header(&r, "Content-Length"), "8192");
	response_free(&r);

	curl_easy_cleanup(c.curl);
	fixture_close(&f);
}
END_TEST

static Suite *log_routes_suite(void)
{
	Suite *suite = suite_create("log_routes");
	TCase *tc = tcase_create("log_routes");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_log_over_http);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(log_routes_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
