/*
 * resolver.c: a small resolver over libdirauth (docs/client.md).
 *
 *   dirauth-resolver-example TRUST-BUNDLE SERVER-URL NAMESPACE CLASS N STATE-DIR
 *
 * brings NAMESPACE up to the latest snapshot SERVER-URL offers (an authority or any mirror: the
 * library believes nothing the server says without the trust bundle's signatures), then prints N
 * endpoints of CLASS chosen at random among those that may be offered. The state (the latest
 * verified header, so that the next run never goes back) is STATE-DIR/NAMESPACE.header. Exit 0,
 * or 1 with the library's sentence. libcurl fetches; the random bytes come from getrandom(); the
 * clock is the system's (RESOLVER_NOW=<unix seconds> sets it, for tests).
 */
#define _DEFAULT_SOURCE
#include <dirauth/dirauth.h>

#include <curl/curl.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct resolver {
	const char *server; /* base URL, no trailing slash */
	const char *state_dir;
};

/* The system clock, or RESOLVER_NOW (unix seconds) for a test on a clock of its own. */
static uint64_t now(void *user)
{
	const char *fixed = getenv("RESOLVER_NOW");
	(void)user;
	return fixed != NULL ? strtoull(fixed, NULL, 10) : (uint64_t)time(NULL);
}

static int random_bytes(void *user, uint8_t *out, size_t len)
{
	(void)user;
	return getrandom(out, len, 0) == (ssize_t)len ? 0 : -1;
}

static void state_path(const struct resolver *r, const char *namespace_name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s.header", r->state_dir, namespace_name);
}

static int state_read(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len)
{
	char path[4096];
	state_path(user, namespace_name, path, sizeof(path));
	FILE *file = fopen(path, "rb");
	*len = 0;
	if (file == NULL)
		return errno == ENOENT ? 0 : -1; /* nothing held yet */
	*len = fread(out, 1, cap, file);
	int failed = ferror(file) || !feof(file); /* an error, or larger than cap */
	fclose(file);
	return failed ? -1 : 0;
}

/* Written whole to a temporary file, flushed to disk, then renamed over the old one. */
static int state_write(void *user, const char *namespace_name, const uint8_t *bytes, size_t len)
{
	char path[4096], temporary[4200];
	state_path(user, namespace_name, path, sizeof(path));
	snprintf(temporary, sizeof(temporary), "%s.tmp", path);
	FILE *file = fopen(temporary, "wb");
	if (file == NULL)
		return -1;
	int failed = fwrite(bytes, 1, len, file) != len || fflush(file) != 0 || fsync(fileno(file)) != 0;
	failed |= fclose(file) != 0;
	return failed ? -1 : rename(temporary, path);
}

static size_t received(char *data, size_t size, size_t count, void *sink)
{
	return dirauth_sink_append(sink, data, size * count) == 0 ? size * count : 0;
}

/* GET server + path; libcurl decodes gzip and zstd itself, so the encoding reported is "". */
static int fetch(void *user, const char *path, long *status, char encoding[DIRAUTH_ENCODING_MAX],
                 struct dirauth_sink *sink)
{
	const struct resolver *r = user;
	char url[4096];
	snprintf(url, sizeof(url), "%s%s", r->server, path);
	CURL *curl = curl_easy_init();
	if (curl == NULL)
		return -1;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, received);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, sink);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	CURLcode rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	curl_easy_cleanup(curl);
	encoding[0] = '\0';
	return rc == CURLE_OK ? 0 : -1;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *file = fopen(path, "rb");
	uint8_t *bytes = malloc(64 * 1024);
	if (file == NULL || bytes == NULL) {
		if (file != NULL)
			fclose(file);
		free(bytes);
		return NULL;
	}
	*len = fread(bytes, 1, 64 * 1024, file);
	fclose(file);
	return bytes;
}

static int fail(const char *what, const struct dirauth_result *result)
{
	fprintf(stderr, "resolver: %s: %s (%s)\n", what, result->detail, dirauth_status_name(result->status));
	return 1;
}

int main(int argc, char **argv)
{
	struct dirauth_result result = {0};
	struct dirauth_context *context = NULL;
	size_t bundle_len = 0, count = 0;

	if (argc != 7) {
		fprintf(stderr, "usage: %s TRUST-BUNDLE SERVER-URL NAMESPACE CLASS N STATE-DIR\n", argv[0]);
		return 2;
	}
	struct resolver r = {argv[2], argv[6]};
	const char *namespace_name = argv[3], *service_class = argv[4];
	size_t n = strtoul(argv[5], NULL, 10);
	uint8_t *bundle = read_file(argv[1], &bundle_len);
	if (bundle == NULL || n == 0 || n > 1000) {
		fprintf(stderr, "resolver: cannot read %s, or N is not 1..1000\n", argv[1]);
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	struct dirauth_callbacks callbacks = {.user = &r,
	                                      .now = now,
	                                      .random = random_bytes,
	                                      .state_read = state_read,
	                                      .state_write = state_write,
	                                      .fetch = fetch};
	int status = 1;
	if (dirauth_context_new(&callbacks, bundle, bundle_len, NULL, &context, &result) != DIRAUTH_SUCCESS) {
		status = fail("trust bundle", &result);
	} else if (dirauth_update_run(context, namespace_name, &result) != DIRAUTH_SUCCESS) {
		status = fail("update", &result);
	} else {
		struct dirauth_endpoint *chosen = calloc(n, sizeof(*chosen));
		struct dirauth_snapshot_info info;
		dirauth_snapshot(context, namespace_name, &info, NULL);
		if (chosen == NULL || dirauth_sample(context, namespace_name, service_class, n, chosen,
		                                     &count, &result) != DIRAUTH_SUCCESS) {
			status = chosen == NULL ? 1 : fail("sample", &result);
		} else {
			printf("%s epoch %llu: %zu of the %s endpoints offered\n", namespace_name,
			       (unsigned long long)info.epoch, count, service_class);
			for (size_t i = 0; i < count; i++)
				printf("%s %s %s %s %s %s\n", chosen[i].endpoint_id, chosen[i].transport,
				       chosen[i].address, chosen[i].region, chosen[i].capacity,
				       chosen[i].health);
			status = 0;
		}
		free(chosen);
	}
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	free(bundle);
	curl_global_cleanup();
	return status;
}
