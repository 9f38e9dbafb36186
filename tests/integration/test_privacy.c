/*
 * test_privacy.c: after a run with many clients, nothing about them is left anywhere but in
 * aggregate counters (hard rule 8).
 *
 * The real dirauth-signer and dirauthd run on loopback with a real LMDB data directory, a public
 * namespace (mix) and a private one (tenant). Eight clients, each from its own loopback address
 * (127.83.61.11 to .18) and its own source port (61000 and up), each with its own made-up
 * User-Agent, X-Forwarded-For, X-Real-IP, Forwarded, From and Cookie values, send 200 requests
 * over their own connections: registrations in both namespaces, reads of snapshots, bodies,
 * certificates, health, readiness and metrics, and refusals (unknown and hidden namespaces, a
 * stranger's and a malformed registration, a wrong method, a percent-escape, a wrong capability),
 * and one more client sends a head the front door refuses. An epoch is published, a mirror
 * fetches both namespaces with `dirauthctl fetch` (the private one with --capability-file, and is
 * refused without it). Then every byte of every file the authority and its signer wrote (the
 * LMDB data and lock files of both, the body files, every log) and the metrics answer are read:
 * no client address (as text or as its four bytes), no source port, no identifier sent appears,
 * and the metrics count what happened without naming anyone, or the private namespace.
 */
#include "test_example_authority.h"
#include "test_support.h"
#include "tests/harness/launcher.h"

#include "base/buffer.h"
#include "schema/certificate.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/snapshot.h"
#include "signer/key.h"

#include <check.h>
#include <curl/curl.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define EPOCH_LENGTH  60
#define START_TIME    1800000000ULL /* a multiple of EPOCH_LENGTH */
#define CLIENTS       8
#define REQUESTS      25    /* per client: 200 in all */
#define PORT_BASE     61000 /* above Linux's ephemeral range: free for the clients to bind */
#define PORT_RANGE    16
#define SECRET        "dGVuYW50LXByaXZhdGUtY2FwYWJpbGl0eS0wMDAwMDAwMQ=="
#define CAPABILITY    "Authorization: Bearer " SECRET
#define GUARD_ADDRESS "127.83.61.99"

struct authority {
	struct launcher run;
	char capability_path[512];
	char identity_verifier[NOTE_VERIFIER_KEY_MAX + 1];
	struct signer_key *provider_a; /* enrolled for mix */
	struct signer_key *provider_b; /* enrolled for tenant */
	struct signer_key *stranger;   /* enrolled for nothing */
};

/* One client: its address, the ports it was seen from, its identifiers. */
struct client {
	char address[32];
	uint8_t address_bytes[4];
	long ports[REQUESTS + 4];
	size_t port_count;
	char user_agent[96];
	char forwarded_for[64];
	char real_ip[64];
	char forwarded[96];
	char from[96];
	char cookie[96];
	CURL *curl;
	long statuses[600]; /* how many answers of each status */
};

static size_t collect(char *data, size_t size, size_t count, void *context)
{
	if (buffer_append(context, data, size * count) != 0)
		return 0;
	return size * count;
}

/* Keys, the certificate, both configurations, the capability file and the clock. */
static void authority_prepare(struct authority *a)
{
	char dir[256];
	memset(a, 0, sizeof(*a));
	test_make_tempdir(dir, sizeof(dir));
	launcher_lay_out(&a->run, dir);
	char command[1024];
	snprintf(command, sizeof(command), "bash '%s' '%s/keys' >/dev/null",
	         test_source_path("scripts/example-keys.sh"), a->run.dir);
	ck_assert_msg(system(command) == 0, "example-keys.sh failed");
	struct signer_key *identity = test_run_key(a->run.dir, "authority1-identity.key");
	note_verifier_format(signer_key_verifier(identity), a->identity_verifier);
	signer_key_free(identity);
	test_write_authority_certificate(a->run.dir, START_TIME - 86400, START_TIME + 30 * 86400);
	a->provider_a = test_run_key(a->run.dir, "provider-a.key");
	a->provider_b = test_run_key(a->run.dir, "provider-b.key");
	ck_assert(signer_key_generate("stranger.example", &a->stranger) == 0);
	char verifier_a[NOTE_VERIFIER_KEY_MAX + 1], verifier_b[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(signer_key_verifier(a->provider_a), verifier_a);
	note_verifier_format(signer_key_verifier(a->provider_b), verifier_b);

	snprintf(a->capability_path, sizeof(a->capability_path), "%s/tenant.capability", a->run.dir);
	launcher_set_clock(&a->run, START_TIME);
	test_write_file(a->capability_path, SECRET "\n", strlen(SECRET) + 1, 0600);

	struct run_directory_signer signer = {"authority1.dirauth.example", "authority1.key",
	                                      "authority1.cert", 0, 0};
	uint8_t digest[32];
	char hex[65], tenant_options[160], rest[1024];
	ck_assert(crypto_sha256((const uint8_t *)SECRET, strlen(SECRET), digest) == 0);
	hex_encode(digest, sizeof(digest), hex);
	snprintf(tenant_options, sizeof tenant_options,
	         ", private: true, capability_sha256: %s, capability_file: tenant.capability", hex);
	const struct launcher_namespace namespaces[] = {{"mix", NULL}, {"tenant", tenant_options}};
	snprintf(rest, sizeof rest,
	         "providers:\n"
	         "  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n"
	         "  - { key: \"%s\", namespaces: [tenant], classes: [mix-gateway] }\n"
	         "http: { threads: 4, log_interval_seconds: 1 }\n",
	         verifier_a, verifier_b);
	launcher_write_configs(&a->run, &signer, EPOCH_LENGTH, 3, namespaces, 2, rest);
}

/* A plain GET from 127.0.0.1 (the test's own requests, not a client's): the status, or -1. */
static long plain_get(const char *url, const char *header, struct buffer *body)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = header ? curl_slist_append(NULL, header) : NULL;
	struct buffer ignored;
	long status = -1;
	buffer_init(&ignored);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, body ? body : &ignored);
	if (curl_easy_perform(curl) == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	buffer_free(&ignored);
	return status;
}

static void make_id(const char *label, uint64_t number, uint8_t out[32])
{
	char text[128];
	int n = snprintf(text, sizeof(text), "%s-%llu", label, (unsigned long long)number);
	ck_assert(crypto_sha256((const uint8_t *)text, (size_t)n, out) == 0);
}

/* A signed registration of service number in namespace_name by provider. */
static void build_registration(const struct signer_key *provider, const char *namespace_name, uint64_t number,
                               struct buffer *out)
{
	struct registration r;
	struct endpoint_descriptor endpoints[2];
	memset(&r, 0, sizeof(r));
	snprintf(r.namespace_name, sizeof(r.namespace_name), "%s", namespace_name);
	make_id(namespace_name, number, r.service_id);
	r.service_class = SERVICE_CLASS_MIX_GATEWAY;
	r.provider = *signer_key_verifier(provider);
	r.sequence = 1;
	r.issued_at = START_TIME;
	r.expires = START_TIME + 86400;
	for (size_t i = 0; i < 2; i++) {
		memset(&endpoints[i], 0, sizeof(endpoints[i]));
		make_id(namespace_name, number * 16 + i + 1000000, endpoints[i].endpoint_id);
		endpoints[i].transport = TRANSPORT_QUIC;
		snprintf(endpoints[i].address, sizeof(endpoints[i].address), "gw%llu.example.net:443",
		         (unsigned long long)number);
		strcpy(endpoints[i].region, "eu-west");
		endpoints[i].capacity = CAPACITY_MEDIUM;
		endpoints[i].profile = PROFILE_MODERN;
	}
	r.endpoint_count = 2;
	r.endpoints = endpoints;
	registration_sort_endpoints(&r);
	struct buffer text;
	struct note_signature signature;
	buffer_init(&text);
	buffer_init(out);
	ck_assert(registration_encode(&r, &text) == 0);
	ck_assert(signer_key_sign(provider, text.data, text.len, &signature) == 0);
	ck_assert(note_format(text.data, text.len, &signature, 1, out) == 0);
	buffer_free(&text);
}

static void client_init(struct client *c, unsigned index)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->address, sizeof(c->address), "127.83.61.%u", 11 + index);
	ck_assert(inet_pton(AF_INET, c->address, c->address_bytes) == 1);
	snprintf(c->user_agent, sizeof(c->user_agent), "PrivacyProbe/9.41 (user-QZX%04u-agent)", index);
	snprintf(c->forwarded_for, sizeof(c->forwarded_for), "198.51.100.%u", 70 + index);
	snprintf(c->real_ip, sizeof(c->real_ip), "203.0.113.%u", 150 + index);
	snprintf(c->forwarded, sizeof(c->forwarded), "for=\"[2001:db8:cafe::%u]:4711\"", 17 + index);
	snprintf(c->from, sizeof(c->from), "person-%u@users.example.org", 31 + index);
	snprintf(c->cookie, sizeof(c->cookie), "session=sess-Kq8%05u-cookie", index);
	c->curl = curl_easy_init();
	ck_assert_ptr_nonnull(c->curl);
	/* One connection per client, kept: every request of a client comes from its address and,
	 * unless a connection is closed, its one port. */
	curl_easy_setopt(c->curl, CURLOPT_INTERFACE, c->address);
	curl_easy_setopt(c->curl, CURLOPT_LOCALPORT, (long)(PORT_BASE + index * PORT_RANGE));
	curl_easy_setopt(c->curl, CURLOPT_LOCALPORTRANGE, (long)PORT_RANGE);
	curl_easy_setopt(c->curl, CURLOPT_USERAGENT, c->user_agent);
	curl_easy_setopt(c->curl, CURLOPT_COOKIE, c->cookie);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, 30L);
}

static void client_note_port(struct client *c)
{
	long port = 0;
	curl_easy_getinfo(c->curl, CURLINFO_LOCAL_PORT, &port);
	for (size_t i = 0; i < c->port_count; i++)
		if (c->ports[i] == port)
			return;
	ck_assert(c->port_count < sizeof(c->ports) / sizeof(c->ports[0]));
	ck_assert_msg(port >= PORT_BASE, "the client did not bind its port (%ld)", port);
	c->ports[c->port_count++] = port;
}

/* One request of a client, with every identifier it sends; returns the status. */
static long client_request(struct client *c, const struct authority *a, const char *method, const char *path,
                           const struct buffer *body, const char *extra, struct buffer *answer)
{
	char url[512], xff[128], real_ip[128], forwarded[160], from[160];
	snprintf(url, sizeof(url), "%s%s", a->run.url, path);
	snprintf(xff, sizeof(xff), "X-Forwarded-For: %s", c->forwarded_for);
	snprintf(real_ip, sizeof(real_ip), "X-Real-IP: %s", c->real_ip);
	snprintf(forwarded, sizeof(forwarded), "Forwarded: %s", c->forwarded);
	snprintf(from, sizeof(from), "From: %s", c->from);
	struct curl_slist *headers = NULL;
	headers = curl_slist_append(headers, xff);
	headers = curl_slist_append(headers, real_ip);
	headers = curl_slist_append(headers, forwarded);
	headers = curl_slist_append(headers, from);
	headers = curl_slist_append(headers, "Expect:");
	if (extra)
		headers = curl_slist_append(headers, extra);
	struct buffer ignored;
	buffer_init(&ignored);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, answer ? answer : &ignored);
	curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, (const char *)body->data);
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)body->len);
	} else {
		curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
	}
	CURLcode rc = curl_easy_perform(c->curl);
	long status = -1;
	if (rc == CURLE_OK)
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	ck_assert_msg(rc == CURLE_OK, "%s %s from %s: %s", method, path, c->address, curl_easy_strerror(rc));
	client_note_port(c);
	if (status >= 0 && status < 600)
		c->statuses[status]++;
	curl_slist_free_all(headers);
	buffer_free(&ignored);
	return status;
}

/* The first round of a client: registrations and refusals, before anything is published. */
static unsigned client_first_round(struct client *c, unsigned index, const struct authority *a)
{
	struct buffer note;
	unsigned sent = 0;
	char path[128];
	/* Registrations in both namespaces: 202 each. */
	for (unsigned k = 0; k < 3; k++) {
		build_registration(a->provider_a, "mix", index * 10 + k, &note);
		ck_assert_int_eq(client_request(c, a, "POST", "/v1/registrations", &note, NULL, NULL), 202);
		buffer_free(&note);
		sent++;
	}
	build_registration(a->provider_b, "tenant", index, &note);
	ck_assert_int_eq(client_request(c, a, "POST", "/v1/registrations", &note, NULL, NULL), 202);
	buffer_free(&note);
	sent++;
	/* Refusals: a stranger, a provider of mix writing into tenant, a malformed body, a replay. */
	build_registration(a->stranger, "mix", 900 + index, &note);
	ck_assert_int_eq(client_request(c, a, "POST", "/v1/registrations", &note, NULL, NULL), 403);
	buffer_free(&note);
	build_registration(a->provider_a, "tenant", 950 + index, &note);
	ck_assert_int_eq(client_request(c, a, "POST", "/v1/registrations", &note, NULL, NULL), 404);
	buffer_free(&note);
	buffer_init(&note);
	ck_assert(buffer_append_string(&note, "not a note\n") == 0);
	ck_assert_int_eq(client_request(c, a, "POST", "/v1/registrations", &note, NULL, NULL), 400);
	buffer_free(&note);
	build_registration(a->provider_a, "mix", index * 10, &note);
	ck_assert_int_eq(client_request(c, a, "POST", "/v1/registrations", &note, NULL, NULL), 409);
	buffer_free(&note);
	sent += 4;
	/* Reads: an epoch never published; the server's own state. */
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/mix/snapshots/7", NULL, NULL, NULL), 404);
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/health", NULL, NULL, NULL), 200);
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/ready", NULL, NULL, NULL), 200);
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/certificates", NULL, NULL, NULL), 200);
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/nowhere/snapshots/latest", NULL, NULL, NULL), 404);
	ck_assert_int_eq(client_request(c, a, "DELETE", "/v1/health", NULL, NULL, NULL), 405);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%%3%u", index);
	ck_assert_int_eq(client_request(c, a, "GET", path, NULL, NULL, NULL), 404);
	sent += 7;
	return sent;
}

/* The second round, after publication: reads of both namespaces, hidden and opened. */
static unsigned client_second_round(struct client *c, const struct authority *a, uint64_t epoch)
{
	char path[128];
	unsigned sent = 0;
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/mix/snapshots/latest", NULL, NULL, NULL), 200);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%llu", (unsigned long long)epoch);
	ck_assert_int_eq(client_request(c, a, "GET", path, NULL, NULL, NULL), 200);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%llu/body", (unsigned long long)epoch);
	ck_assert_int_eq(client_request(c, a, "GET", path, NULL, "Accept-Encoding: gzip", NULL), 200);
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/tenant/snapshots/latest", NULL, NULL, NULL), 404);
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/tenant/snapshots/latest", NULL,
	                                "Authorization: Bearer not-the-tenant-secret-0000", NULL),
	                 404);
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/tenant/snapshots/latest", NULL, CAPABILITY, NULL),
	                 200);
	snprintf(path, sizeof(path), "/v1/tenant/snapshots/%llu/body", (unsigned long long)epoch);
	ck_assert_int_eq(client_request(c, a, "GET", path, NULL, CAPABILITY, NULL), 200);
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/metrics", NULL, NULL, NULL), 200);
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/mix/log/checkpoint", NULL, NULL, NULL), 404);
	ck_assert_int_eq(client_request(c, a, "GET", "/v1/tenant/log/checkpoint", NULL, CAPABILITY, NULL),
	                 404);
	sent += 10;
	return sent;
}

/* A client the front door refuses: two Content-Length fields, from GUARD_ADDRESS and a port of
 * its own. Returns the port. */
static long guard_refused_client(const struct authority *a, const struct client *identity)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert(fd >= 0);
	struct sockaddr_in local, remote;
	memset(&local, 0, sizeof(local));
	local.sin_family = AF_INET;
	ck_assert(inet_pton(AF_INET, GUARD_ADDRESS, &local.sin_addr) == 1);
	long port = 0;
	for (long candidate = PORT_BASE + CLIENTS * PORT_RANGE; candidate < 65000 && !port; candidate++) {
		local.sin_port = htons((uint16_t)candidate);
		if (bind(fd, (struct sockaddr *)&local, sizeof(local)) == 0)
			port = candidate;
	}
	ck_assert(port != 0);
	memset(&remote, 0, sizeof(remote));
	remote.sin_family = AF_INET;
	remote.sin_port = htons((uint16_t)a->run.port);
	ck_assert(inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr) == 1);
	ck_assert(connect(fd, (struct sockaddr *)&remote, sizeof(remote)) == 0);
	char head[1024];
	int n = snprintf(head, sizeof(head),
	                 "POST /v1/registrations HTTP/1.1\r\nHost: x\r\nUser-Agent: %s\r\n"
	                 "X-Forwarded-For: %s\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx",
	                 identity->user_agent, identity->forwarded_for);
	ck_assert(write(fd, head, (size_t)n) == n);
	char answer[2048];
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fd, answer + got, sizeof(answer) - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	answer[got] = 0;
	ck_assert_msg(strncmp(answer, "HTTP/1.1 400", 12) == 0, "%s", answer);
	close(fd);
	return port;
}

/* Waits until both namespaces have a snapshot of epoch. */
static void wait_for_epoch(const struct authority *a, uint64_t epoch)
{
	char mix[128], tenant[128];
	snprintf(mix, sizeof(mix), "%s/v1/mix/snapshots/%llu", a->run.url, (unsigned long long)epoch);
	snprintf(tenant, sizeof(tenant), "%s/v1/tenant/snapshots/%llu", a->run.url,
	         (unsigned long long)epoch);
	for (int attempt = 0; attempt < 1500; attempt++) {
		if (plain_get(mix, NULL, NULL) == 200 && plain_get(tenant, CAPABILITY, NULL) == 200)
			return;
		test_sleep_ms(20);
	}
	ck_abort_msg("epoch %llu was not published; see %s", (unsigned long long)epoch, a->run.log_path);
}

static int run_fetch(const struct authority *a, const char *namespace_name, const char *capability_file)
{
	char binary[4096], bundle[600], out[600], now[32];
	snprintf(binary, sizeof(binary), "%s", test_binary_path("ctl/dirauthctl"));
	snprintf(bundle, sizeof(bundle), "%s/trust-bundle.txt", a->run.dir);
	snprintf(out, sizeof(out), "%s/mirror", a->run.dir);
	size_t len = 0;
	uint8_t *clock_text = test_read_file(a->run.clock_path, &len);
	snprintf(now, sizeof(now), "%.*s", (int)strcspn((const char *)clock_text, "\n"),
	         (const char *)clock_text);
	free(clock_text);
	char *argv[16] = {binary,        "fetch",
	                  "--trust",     bundle,
	                  "--server",    (char *)a->run.url,
	                  "--namespace", (char *)namespace_name,
	                  "--out",       out,
	                  "--now",       now,
	                  NULL};
	if (capability_file) {
		argv[12] = "--capability-file";
		argv[13] = (char *)capability_file;
		argv[14] = NULL;
	}
	char log[600];
	snprintf(log, sizeof(log), "%s/dirauthctl.log", a->run.dir);
	return test_wait_exit(test_spawn(argv, log), 60000);
}

/* Every regular file under path, appended to files (one path per line). */
static void list_files(const char *path, struct buffer *files)
{
	DIR *dir = opendir(path);
	ck_assert_msg(dir != NULL, "%s", path);
	struct dirent *entry;
	while ((entry = readdir(dir)) != NULL) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		char child[1024];
		snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
		struct stat st;
		ck_assert(lstat(child, &st) == 0);
		if (S_ISDIR(st.st_mode))
			list_files(child, files);
		else if (S_ISREG(st.st_mode))
			ck_assert(buffer_appendf(files, "%s\n", child) == 0);
	}
	closedir(dir);
}

static const uint8_t *find(const uint8_t *data, size_t len, const void *needle, size_t needle_len)
{
	for (size_t i = 0; needle_len <= len && i <= len - needle_len; i++)
		if (memcmp(data + i, needle, needle_len) == 0)
			return data + i;
	return NULL;
}

static int is_alnum(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A port as a number of its own: its digits with no letter or digit on either side. */
static int has_number(const uint8_t *data, size_t len, long number)
{
	char text[16];
	int n = snprintf(text, sizeof(text), "%ld", number);
	for (size_t i = 0; (size_t)n <= len && i <= len - (size_t)n; i++)
		if (memcmp(data + i, text, (size_t)n) == 0 && (i == 0 || !is_alnum(data[i - 1])) &&
		    (i + (size_t)n == len || !is_alnum(data[i + (size_t)n])))
			return 1;
	return 0;
}

/* Asserts that nothing of client c is in data (what names where it came from). */
static void expect_nothing_of(const struct client *c, const uint8_t *data, size_t len, const char *where)
{
	const char *texts[] = {c->address, c->user_agent, c->forwarded_for,    c->real_ip, c->forwarded,
	                       c->from,    c->cookie,     "users.example.org", "user-QZX", "sess-Kq8"};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		ck_assert_msg(!find(data, len, texts[i], strlen(texts[i])), "%s holds '%s'", where, texts[i]);
	ck_assert_msg(!find(data, len, c->address_bytes, 4), "%s holds the bytes of %s", where, c->address);
	for (size_t i = 0; i < c->port_count; i++)
		ck_assert_msg(!has_number(data, len, c->ports[i]), "%s holds the port %ld of %s", where,
		              c->ports[i], c->address);
}

START_TEST(test_nothing_about_clients_is_kept)
{
	struct authority a;
	authority_prepare(&a);
	launcher_start(&a.run);
	struct client clients[CLIENTS];
	unsigned sent = 0;
	for (unsigned i = 0; i < CLIENTS; i++) {
		client_init(&clients[i], i);
		sent += client_first_round(&clients[i], i, &a);
	}
	struct client guard_identity;
	client_init(&guard_identity, CLIENTS);
	snprintf(guard_identity.address, sizeof(guard_identity.address), "%s", GUARD_ADDRESS);
	ck_assert(inet_pton(AF_INET, GUARD_ADDRESS, guard_identity.address_bytes) == 1);
	guard_identity.ports[guard_identity.port_count++] = guard_refused_client(&a, &guard_identity);

	/* The next epoch publishes both namespaces. */
	uint64_t epoch = START_TIME / EPOCH_LENGTH + 1;
	launcher_set_clock(&a.run, epoch * EPOCH_LENGTH);
	wait_for_epoch(&a, epoch);
	for (unsigned i = 0; i < CLIENTS; i++)
		sent += client_second_round(&clients[i], &a, epoch);
	ck_assert_uint_eq(sent, CLIENTS * REQUESTS);

	/* A mirror of both, the private one only with its capability. */
	struct buffer bundle;
	char bundle_path[600];
	buffer_init(&bundle);
	ck_assert(buffer_appendf(&bundle,
	                         "dirauth trust v1\n"
	                         "namespace mix dirauth.example/mix\n"
	                         "namespace tenant dirauth.example/tenant\n"
	                         "authority %s\n"
	                         "threshold 1\n",
	                         a.identity_verifier) == 0);
	snprintf(bundle_path, sizeof(bundle_path), "%s/trust-bundle.txt", a.run.dir);
	test_write_file(bundle_path, bundle.data, bundle.len, 0644);
	buffer_free(&bundle);
	ck_assert_int_eq(run_fetch(&a, "mix", NULL), 0);
	ck_assert_int_eq(run_fetch(&a, "tenant", NULL), 76);
	ck_assert_int_eq(run_fetch(&a, "tenant", a.capability_path), 0);
	char stored[700];
	snprintf(stored, sizeof(stored), "%s/mirror/tenant/%llu.body", a.run.dir, (unsigned long long)epoch);
	size_t stored_len = 0;
	free(test_read_file(stored, &stored_len));
	ck_assert_uint_gt(stored_len, 0);

	/* The metrics: aggregates only, the private namespace nowhere. */
	struct buffer metrics;
	char url[128];
	buffer_init(&metrics);
	snprintf(url, sizeof(url), "%s/v1/metrics", a.run.url);
	ck_assert_int_eq(plain_get(url, CAPABILITY, &metrics), 200);
	const char *text = (const char *)metrics.data;
	ck_assert_ptr_nonnull(strstr(text, "dirauth_store_submissions_total "));
	ck_assert_ptr_nonnull(strstr(text, "dirauth_namespace_records{namespace=\"mix\"} 24\n"));
	ck_assert_ptr_nonnull(strstr(text, "dirauth_http_refused_total{reason=\"bad_request\"} 1\n"));
	ck_assert_msg(strstr(text, "tenant") == NULL, "%s", text);
	for (unsigned i = 0; i < CLIENTS; i++)
		expect_nothing_of(&clients[i], metrics.data, metrics.len, "the metrics");
	expect_nothing_of(&guard_identity, metrics.data, metrics.len, "the metrics");

	/* Stop both, so that every log line and page is on disk, then read every file. */
	ck_assert_int_eq(launcher_stop_dirauthd(&a.run, SIGTERM) & 0x7f, 0);
	launcher_stop_signer(&a.run, SIGTERM);
	struct buffer files;
	buffer_init(&files);
	list_files(a.run.dir, &files);
	ck_assert(buffer_append(&files, "", 1) == 0);
	size_t scanned = 0, bytes = 0;
	int saw_lmdb = 0, saw_log = 0, saw_audit = 0;
	for (char *line = (char *)files.data; *line;) {
		char *end = strchr(line, '\n');
		*end = 0;
		size_t len = 0;
		uint8_t *data = test_read_file(line, &len);
		for (unsigned i = 0; i < CLIENTS; i++)
			expect_nothing_of(&clients[i], data, len, line);
		expect_nothing_of(&guard_identity, data, len, line);
		ck_assert_msg(!find(data, len, SECRET, strlen(SECRET)) || strstr(line, "tenant.capability"),
		              "%s holds the capability", line);
		saw_lmdb |= strstr(line, "/data/") && strstr(line, ".mdb") ? 1 : 0;
		saw_log |= strstr(line, "dirauthd.log") ? 1 : 0;
		saw_audit |= strstr(line, "signer-audit.log") ? 1 : 0;
		scanned++;
		bytes += len;
		free(data);
		line = end + 1;
	}
	ck_assert(saw_lmdb && saw_log && saw_audit);
	ck_assert_uint_gt(bytes, 100000);
	/* The clients were who the test says: each from its own address and port. */
	for (unsigned i = 0; i < CLIENTS; i++) {
		ck_assert_uint_ge(clients[i].port_count, 1);
		ck_assert_int_eq(clients[i].statuses[202], 4);
		curl_easy_cleanup(clients[i].curl);
	}
	curl_easy_cleanup(guard_identity.curl);
	buffer_free(&files);
	buffer_free(&metrics);
	signer_key_free(a.provider_a);
	signer_key_free(a.provider_b);
	signer_key_free(a.stranger);
	test_remove_tree(a.run.dir);
	ck_assert_uint_gt(scanned, 30);
}
END_TEST

static Suite *privacy_suite(void)
{
	Suite *s = suite_create("privacy");
	TCase *t = tcase_create("clients");
	tcase_set_timeout(t, 300);
	tcase_add_test(t, test_nothing_about_clients_is_kept);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(privacy_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
