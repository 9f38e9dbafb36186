/*
 * simnet.c: the simulated authorities and their time (simnet.h): keys and configurations derived
 * from the seed, each node's pieces opened and closed as dirauthd's main opens them, the steps
 * that tick the nodes, the faults a test or a scenario sets, and what a test asks of the run.
 *
 * A node is opened in dirauthd's order: its signer (service and listener, on its own socket),
 * the signer client and health tracker, the store, the prepared set, the peer client (over the
 * harness's transport), the authority set with the own certificate bundle, the round. A crash
 * closes all of it; a restart opens it again over the same directory, so that whatever the
 * round knows after a restart it re-derived from its store, as a restarted dirauthd does.
 */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */
#include "tests/sim/simnet_internal.h"

#include "schema/certificate.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "settings/settings.h"
#include "server/store/snapshots.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIM_UNIX_BASE        1767225600ULL /* 2026-01-01: the start of the first epoch simulated */
#define SIM_SIGNER_TIMEOUTMS 5000

/* ---- the generator ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void sim_rng_seed(struct sim_rng *rng, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t sim_rng_next(struct sim_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t sim_rng_below(struct sim_rng *rng, uint64_t bound)
{
	if (bound == 0)
		return 0;
	/* Lemire's multiply-and-reject: no bias. */
	uint64_t threshold = -bound % bound;
	for (;;) {
		uint64_t x = sim_rng_next(rng);
		unsigned __int128 m = (unsigned __int128)x * bound;
		if ((uint64_t)m >= threshold)
			return (uint64_t)(m >> 64);
	}
}

int sim_rng_permille(struct sim_rng *rng, unsigned permille)
{
	return permille > 0 && sim_rng_below(rng, 1000) < permille;
}

/* ---- arrays, logging and violations ---- */

void *sim_grow(void *items, size_t *cap, size_t count, size_t size, size_t first)
{
	if (count < *cap)
		return items;
	size_t grown_cap = *cap ? *cap * 2 : first;
	void *grown = realloc(items, grown_cap * size);
	if (grown)
		*cap = grown_cap;
	return grown;
}

void sim_log(struct simnet *net, const char *format, ...)
{
	if (!net->o.log)
		return;
	va_list args;
	va_start(args, format);
	fprintf(net->o.log, "simnet %.3f: ", (double)(net->now_ms - net->start_ms) / 1000.0);
	vfprintf(net->o.log, format, args);
	fputc('\n', net->o.log);
	va_end(args);
	fflush(net->o.log);
}

void sim_violation(struct simnet *net, enum simnet_invariant invariant, uint64_t epoch, uint32_t nodes,
                   const char *format, ...)
{
	struct simnet_violation *grown =
	    sim_grow(net->violations, &net->violation_cap, net->violation_count, sizeof *grown, 16);
	if (!grown)
		return;
	net->violations = grown;
	struct simnet_violation *v = &net->violations[net->violation_count++];
	memset(v, 0, sizeof *v);
	v->invariant = invariant;
	v->epoch = epoch;
	v->nodes = nodes;
	va_list args;
	va_start(args, format);
	vsnprintf(v->detail, sizeof v->detail, format, args);
	va_end(args);
	sim_log(net, "VIOLATION %s epoch %llu: %s", simnet_invariant_name(invariant),
	        (unsigned long long)epoch, v->detail);
}

const char *simnet_invariant_name(enum simnet_invariant invariant)
{
	static const char *const names[] = {"signatures",  "votes",    "revocation", "agreement",
	                                    "convergence", "liveness", "harness"};
	return (size_t)invariant < sizeof names / sizeof names[0] ? names[invariant] : "unknown";
}

/* ---- time ---- */

uint64_t sim_node_local_ms(const struct sim_node *node, uint64_t ms)
{
	int64_t local = (int64_t)ms + node->skew_ms;
	return local < 0 ? 0 : (uint64_t)local;
}

uint64_t sim_node_seconds(const struct sim_node *node, uint64_t ms)
{
	return sim_node_local_ms(node, ms) / 1000;
}

void sim_node_clock(struct sim_node *node)
{
	if (node->now_ms > node->high_ms)
		node->high_ms = node->now_ms;
	clock_set_ms(node->clock, sim_node_local_ms(node, node->high_ms));
}

uint64_t sim_vote_at_ms(const struct simnet *net, uint64_t epoch)
{
	struct epoch_phases phases;
	if (schedule_epoch_phases(&net->schedule, epoch, &phases) != 0)
		return 0;
	return phases.vote_at * 1000;
}

uint64_t simnet_epoch_start_ms(const struct simnet *net, uint64_t epoch)
{
	return (net->schedule.genesis + epoch * net->schedule.length) * 1000;
}

uint64_t simnet_vote_at_ms(const struct simnet *net, uint64_t epoch)
{
	return simnet_epoch_start_ms(net, epoch) - net->schedule.prepare * 1000;
}

uint64_t simnet_epoch_now(const struct simnet *net)
{
	uint64_t epoch = 0;
	schedule_current_epoch(&net->schedule, net->now_ms / 1000, &epoch);
	return epoch;
}

uint64_t simnet_now_ms(const struct simnet *net)
{
	return net->now_ms;
}

const char *simnet_dir(const struct simnet *net)
{
	return net->dir;
}

size_t simnet_node_count(const struct simnet *net)
{
	return net->node_count;
}

bool simnet_node_up(const struct simnet *net, size_t node)
{
	return node < net->node_count && net->nodes[node]->up;
}

/* ---- keys ---- */

void sim_derive(uint64_t seed, const char *label, uint64_t index, uint8_t out[32])
{
	uint8_t prefix[16];
	for (int i = 0; i < 8; i++) {
		prefix[i] = (uint8_t)(seed >> (8 * i));
		prefix[8 + i] = (uint8_t)(index >> (8 * i));
	}
	const uint8_t *parts[3] = {(const uint8_t *)"dirauth simnet\n", prefix, (const uint8_t *)label};
	size_t lengths[3] = {15, sizeof prefix, strlen(label)};
	crypto_sha256_parts(parts, lengths, 3, out);
}

void sim_key_clear(struct sim_key *key)
{
	signer_key_free(key->key);
	memset(key, 0, sizeof *key);
}

/* Writes the key file (the signer's format: PRIVATE+KEY+<name>+<key id>+<base64(type || seed)>)
 * of the key derived from the seed, 0600 in dir (made 0700), and loads it. */
int sim_key_make(struct simnet *net, const char *dir, const char *file, const char *name, const char *label,
                 uint64_t index, struct sim_key *out)
{
	uint8_t seed[32], public_key[32], encoded[33];
	char path[SIM_PATH_MAX], base64[64], line[NOTE_NAME_MAX + 128];
	size_t public_len = sizeof public_key;
	int rc = DIRAUTH_ERR_CRYPTO;
	memset(out, 0, sizeof *out);
	sim_derive(net->o.seed, label, index, seed);
	EVP_PKEY *pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	if (!pkey || EVP_PKEY_get_raw_public_key(pkey, public_key, &public_len) != 1)
		goto done;
	if ((rc = note_verifier_from_ed25519(name, public_key, &out->verifier)) != 0)
		goto done;
	encoded[0] = NOTE_KEY_TYPE_ED25519;
	memcpy(encoded + 1, seed, 32);
	base64_encode(encoded, sizeof encoded, base64);
	int n = snprintf(line, sizeof line, "PRIVATE+KEY+%s+%08x+%s\n", name, (unsigned)out->verifier.key_id,
	                 base64);
	rc = DIRAUTH_ERR_IO;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		goto done;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto done;
	ssize_t written = write(fd, line, (size_t)n);
	close(fd);
	if (written != n)
		goto done;
	rc = signer_key_load(path, &out->key);
done:
	EVP_PKEY_free(pkey);
	crypto_wipe(seed, sizeof seed);
	crypto_wipe(encoded, sizeof encoded);
	crypto_wipe(line, sizeof line);
	return rc;
}

/* ---- files ---- */

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftwbuf)
{
	(void)sb, (void)flag, (void)ftwbuf;
	remove(path);
	return 0;
}

static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return DIRAUTH_ERR_IO;
	ssize_t written = write(fd, data, len);
	close(fd);
	return written == (ssize_t)len ? 0 : DIRAUTH_ERR_IO;
}

/* snprintf into a path buffer: DIRAUTH_ERR_BOUNDS when it does not fit. */
static int path_format(char *out, size_t cap, const char *format, ...) __attribute__((format(printf, 3, 4)));

static int path_format(char *out, size_t cap, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	int n = vsnprintf(out, cap, format, args);
	va_end(args);
	return n < 0 || (size_t)n >= cap ? DIRAUTH_ERR_BOUNDS : 0;
}

/* ---- a node's configuration ---- */

static int node_config(struct simnet *net, struct sim_node *node, char *why, size_t cap)
{
	const struct simnet_options *o = &net->o;
	struct buffer text;
	char key[NOTE_VERIFIER_KEY_MAX + 1];
	int rc = 0;
	buffer_init(&text);
	rc = buffer_appendf(&text,
	                    "# simulated authority %s (node %zu)\n"
	                    "authority: { name: %s, signer_socket: \"%s\" }\n"
	                    "listen: { address: 127.0.0.1, port: 1 }\n"
	                    "data_dir: \"%s\"\n"
	                    "epoch: { length_seconds: %llu, genesis: %llu, validity_epochs: %llu }\n"
	                    "clock: { source: system }\n"
	                    "namespaces:\n"
	                    "  - { name: %s, origin: %s%s }\n"
	                    "providers:\n",
	                    net->member_name[node->member], node->index, net->member_name[node->member],
	                    node->socket_path, node->data_dir, (unsigned long long)net->schedule.length,
	                    (unsigned long long)net->schedule.genesis,
	                    (unsigned long long)net->schedule.validity_epochs, SIMNET_NAMESPACE,
	                    SIMNET_ORIGIN, o->lifecycle ? ", lifecycle: true, max_revocations: 256" : "");
	for (size_t p = 0; rc == 0 && p < 2; p++) {
		note_verifier_format(sim_workload_provider(net, p), key);
		rc = buffer_appendf(&text, "  - { key: \"%s\", namespaces: [%s], classes: [mix-gateway] }\n",
		                    key, SIMNET_NAMESPACE);
	}
	if (rc == 0)
		rc = buffer_appendf(&text,
		                    "bounds: { clock_skew_seconds: %llu, records_per_snapshot: 2000, "
		                    "endpoints_per_service: 4, snapshot_body_compressed: 67108864, "
		                    "snapshot_body_uncompressed: 67108864 }\n"
		                    "store: { map_size_bytes: 67108864 }\n"
		                    "authorities:\n"
		                    "  threshold: %zu\n"
		                    "  members:\n",
		                    (unsigned long long)o->skew_bound_seconds,
		                    2 * o->threshold > o->members ? o->threshold : o->members / 2 + 1);
	for (size_t m = 0; rc == 0 && m < o->members; m++) {
		note_verifier_format(&net->identity[m].verifier, key);
		rc = buffer_appendf(
		    &text, "    - { name: %s, identity: \"%s\", url: \"http://n%zu.sim.invalid\" }\n",
		    net->member_name[m], key, m);
	}
	if (rc) {
		buffer_free(&text);
		return rc;
	}
	char path[SIM_PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/dirauthd.yaml", node->dir);
	write_file(path, text.data, text.len, 0600); /* for a person reading a kept run */
	struct settings_error error;
	rc = config_parse(text.data, text.len, node->dir, &node->config, &error);
	buffer_free(&text);
	if (rc) {
		snprintf(why, cap, "node %zu: the configuration, line %zu: %s", node->index, error.line,
		         error.message);
		return rc;
	}
	if (o->configure)
		o->configure(o->configure_context, node->index, node->config);
	return 0;
}

/* The member's signing key certified by its identity for the whole run, in the signer's keys. */
static int node_certificate(struct simnet *net, struct sim_node *node)
{
	struct certificate c;
	struct note_signature signature;
	struct buffer text, note;
	memset(&c, 0, sizeof c);
	snprintf(c.authority, sizeof c.authority, "%s", net->member_name[node->member]);
	c.identity = net->identity[node->member].verifier;
	c.signing_key = net->signing[node->member].verifier;
	c.valid_after = net->schedule.genesis - 86400;
	c.valid_until = SIM_UNIX_BASE + 390ULL * 86400;
	buffer_init(&text);
	buffer_init(&note);
	int rc = certificate_encode(&c, &text);
	if (rc == 0)
		rc = signer_key_sign(net->identity[node->member].key, text.data, text.len, &signature);
	if (rc == 0)
		rc = note_format(text.data, text.len, &signature, 1, &note);
	if (rc == 0)
		rc = write_file(node->certificate_path, note.data, note.len, 0644);
	buffer_free(&text);
	buffer_free(&note);
	return rc;
}

/* ---- a node's pieces ---- */

static int signer_now(void *context, uint64_t *now)
{
	struct sim_node *node = context;
	return clock_now(node->clock, now);
}

static int own_certificates(void *context, struct buffer *out)
{
	char why[SIGNER_DETAIL_MAX + 1];
	return signer_client_query(context, SIGNER_OP_GET_CERTIFICATES, NULL, 0, out, why, sizeof why);
}

static void node_close(struct sim_node *node)
{
	round_free(node->round);
	authority_set_free(node->set);
	peer_client_free(node->peers);
	prepared_set_free(node->prepared);
	store_close(node->store);
	signer_health_free(node->health);
	signer_client_close(node->signer);
	signer_listener_stop(node->listener);
	signer_service_close(node->signer_service);
	if (node->audit)
		fclose(node->audit);
	if (node->log)
		fclose(node->log);
	node->round = NULL;
	node->set = NULL;
	node->peers = NULL;
	node->prepared = NULL;
	node->store = NULL;
	node->health = NULL;
	node->signer = NULL;
	node->listener = NULL;
	node->signer_service = NULL;
	node->audit = NULL;
	node->log = NULL;
	node->up = 0;
}

/* Opens the node's pieces in dirauthd's order, at the node's time. */
static int node_open(struct simnet *net, struct sim_node *node, char *why, size_t cap)
{
	const struct config *config = node->config;
	char path[SIM_PATH_MAX + 32], detail[512] = "";
	struct buffer own;
	int rc;
	buffer_init(&own);
	node->now_ms = node->high_ms = net->now_ms;
	node->lane_depth = 0;
	sim_node_clock(node);
	snprintf(path, sizeof path, "%s/dirauthd.log", node->dir);
	node->log = fopen(path, "a");
	snprintf(path, sizeof path, "%s/signer/audit.log", node->dir);
	node->audit = fopen(path, "a");
	if (!node->log || !node->audit) {
		snprintf(why, cap, "node %zu: cannot open its logs", node->index);
		rc = DIRAUTH_ERR_IO;
		goto fail;
	}
	const char *certificates[] = {node->certificate_path};
	struct signer_namespace ns;
	memset(&ns, 0, sizeof ns);
	snprintf(ns.name, sizeof ns.name, "%s", SIMNET_NAMESPACE);
	snprintf(ns.origin, sizeof ns.origin, "%s", SIMNET_ORIGIN);
	ns.schedule = config->epoch;
	struct signer_service_options signer_options = {
	    .authority = net->member_name[node->member],
	    .signing_key_path = node->key_path,
	    .certificate_paths = certificates,
	    .certificate_count = 1,
	    .ledger_directory = node->ledger_path,
	    .namespaces = &ns,
	    .namespace_count = 1,
	    .audit = node->audit,
	    .now = signer_now,
	    .now_context = node,
	    .clock_skew_seconds = config->bounds.clock_skew_seconds,
	};
	if ((rc = signer_service_open(&signer_options, &node->signer_service, detail, sizeof detail)) != 0) {
		snprintf(why, cap, "node %zu: the signer: %s: %s", node->index, dirauth_strerror(rc), detail);
		goto fail;
	}
	if ((rc = signer_listener_start(node->signer_service, node->socket_path, getuid(), NULL,
	                                &node->listener)) != 0 ||
	    (rc = signer_client_open(config->signer_socket, SIM_SIGNER_TIMEOUTMS, &node->signer)) != 0 ||
	    (rc = signer_health_create(node->signer, config->authority_name, node->clock, &node->health)) !=
	        0) {
		snprintf(why, cap, "node %zu: the signer's socket: %s", node->index, dirauth_strerror(rc));
		goto fail;
	}
	struct store_options store_options = {.path = config->data_dir,
	                                      .map_size = config->store.map_size_bytes,
	                                      .refuse_percent = config->store.refuse_percent};
	if ((rc = store_open(&store_options, &node->store)) != 0 ||
	    (rc = prepared_set_create(config, node->store, &node->prepared)) != 0) {
		snprintf(why, cap, "node %zu: the store: %s", node->index, dirauth_strerror(rc));
		goto fail;
	}
	prepared_set_load_latest(node->prepared, 0); /* as the scheduler does at a start */
	node->transport = (struct peer_transport){
	    .call = sim_transport_call, .context = node, .broadcast = sim_transport_broadcast};
	struct peer_client_options peer_options = {.transport = &node->transport};
	if ((rc = peer_client_new(config, &peer_options, &node->peers)) != 0) {
		snprintf(why, cap, "node %zu: the peer client: %s", node->index, dirauth_strerror(rc));
		goto fail;
	}
	if (own_certificates(node->signer, &own) != 0)
		buffer_reset(&own);
	struct authority_set_options set_options = {
	    .own_certificates = own_certificates, .own_context = node->signer, .cache_dir = node->data_dir};
	rc = authority_set_new(config, node->peers, own.len ? own.data : NULL, own.len, &set_options,
	                       &node->set, detail, sizeof detail);
	if (rc) {
		snprintf(why, cap, "node %zu: the authority set: %s: %s", node->index, dirauth_strerror(rc),
		         detail);
		goto fail;
	}
	struct round_options round_options = {.config = config,
	                                      .store = node->store,
	                                      .signer = node->signer,
	                                      .signer_health = node->health,
	                                      .clock = node->clock,
	                                      .authorities = node->set,
	                                      .peers = node->peers,
	                                      .prepared = node->prepared,
	                                      .log = node->log};
	if ((rc = round_create(&round_options, &node->round)) != 0) {
		snprintf(why, cap, "node %zu: the round: %s", node->index, dirauth_strerror(rc));
		goto fail;
	}
	buffer_free(&own);
	node->up = 1;
	return 0;
fail:
	buffer_free(&own);
	node_close(node);
	return rc;
}

/* Lays out node index running as member (keys, certificate, configuration). */
static int node_make(struct simnet *net, size_t index, size_t member, int clone, char *why, size_t cap)
{
	struct sim_node *node = calloc(1, sizeof *node);
	if (!node)
		return DIRAUTH_ERR_NOMEM;
	net->nodes[index] = node;
	node->net = net;
	node->index = index;
	node->member = member;
	node->clone = clone;
	node->group = 0;
	node->skew_ms = net->o.skew_ms ? (int64_t)sim_rng_below(&net->rng, 2 * (uint64_t)net->o.skew_ms + 1) -
	                                     (int64_t)net->o.skew_ms
	                               : 0;
	char signer_dir[SIM_PATH_MAX], keys_dir[SIM_PATH_MAX];
	if (path_format(node->dir, sizeof node->dir, "%s/n%zu", net->dir, index) ||
	    path_format(node->data_dir, sizeof node->data_dir, "%s/data", node->dir) ||
	    path_format(signer_dir, sizeof signer_dir, "%s/signer", node->dir) ||
	    path_format(keys_dir, sizeof keys_dir, "%s/keys", signer_dir) ||
	    path_format(node->socket_path, sizeof node->socket_path, "%s/signer.sock", signer_dir) ||
	    path_format(node->key_path, sizeof node->key_path, "%s/signing.key", keys_dir) ||
	    path_format(node->certificate_path, sizeof node->certificate_path, "%s/signing.cert", keys_dir) ||
	    path_format(node->ledger_path, sizeof node->ledger_path, "%s/ledger", signer_dir)) {
		snprintf(why, cap, "the run's directory %s is too long", net->dir);
		return DIRAUTH_ERR_BOUNDS;
	}
	if (mkdir(node->dir, 0700) != 0 || mkdir(signer_dir, 0700) != 0) {
		snprintf(why, cap, "mkdir %s: %s", node->dir, strerror(errno));
		return DIRAUTH_ERR_IO;
	}
	if (clock_open_manual(0, &node->clock) != 0)
		return DIRAUTH_ERR_NOMEM;
	struct sim_key signing;
	int rc =
	    sim_key_make(net, keys_dir, "signing.key", net->member_name[member], "signing", member, &signing);
	sim_key_clear(&signing);
	if (rc == 0)
		rc = node_certificate(net, node);
	if (rc) {
		snprintf(why, cap, "node %zu: its keys: %s", index, dirauth_strerror(rc));
		return rc;
	}
	return node_config(net, node, why, cap);
}

static void node_free(struct sim_node *node)
{
	if (!node)
		return;
	node_close(node);
	config_free(node->config);
	clock_close(node->clock);
	free(node);
}

/* ---- the simulation ---- */

void simnet_options_init(struct simnet_options *o)
{
	memset(o, 0, sizeof *o);
	o->seed = 1;
	o->members = 5;
	o->epoch_seconds = 60;
	o->validity_epochs = 3;
	o->step_ms = 250;
	o->delay_ms = 100;
	o->jitter_ms = 20;
	o->bandwidth_mbit = 100;
	o->skew_ms = 2000;
	o->skew_bound_seconds = 5;
	o->lifecycle = 1;
	o->services = 8;
	o->registrations = 2;
	o->health = 3;
	o->revocation_permille = 150;
}

static int make_run_dir(struct simnet *net)
{
	const char *parent = net->o.dir;
	struct stat st;
	if (!parent && stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
		parent = "/dev/shm";
	if (!parent)
		parent = getenv("TMPDIR");
	if (!parent || !*parent)
		parent = "/tmp";
	snprintf(net->dir, sizeof net->dir, "%s/simnet-XXXXXX", parent);
	return mkdtemp(net->dir) ? 0 : DIRAUTH_ERR_IO;
}

int simnet_create(const struct simnet_options *options, struct simnet **out, char *why, size_t cap)
{
	char ignored[8];
	if (!why) {
		why = ignored;
		cap = sizeof ignored;
	}
	why[0] = 0;
	*out = NULL;
	if (options->members < 2 || options->members > SIMNET_MAX_MEMBERS || options->step_ms == 0 ||
	    options->epoch_seconds < 10) {
		snprintf(why, cap, "options out of range");
		return DIRAUTH_ERR_CONFIG;
	}
	struct simnet *net = calloc(1, sizeof *net);
	if (!net)
		return DIRAUTH_ERR_NOMEM;
	net->o = *options;
	if (!net->o.threshold)
		net->o.threshold = net->o.members / 2 + 1;
	const char *keep = getenv(SIMNET_KEEP_ENV);
	net->keep = net->o.keep || (keep && strcmp(keep, "1") == 0);
	sim_rng_seed(&net->rng, net->o.seed);
	net->schedule.length = net->o.epoch_seconds;
	net->schedule.validity_epochs = net->o.validity_epochs;
	net->schedule.genesis = SIM_UNIX_BASE - SIM_START_EPOCH * net->o.epoch_seconds;
	net->next_check_epoch = SIM_START_EPOCH;
	for (size_t i = 0; i < SIMNET_MAX_NODES; i++)
		memset(net->cut_passes[i], 0, sizeof net->cut_passes[i]);
	int rc = make_run_dir(net);
	if (rc) {
		snprintf(why, cap, "cannot make the run's directory: %s", strerror(errno));
		free(net);
		return rc;
	}
	if ((rc = sim_check_new(&net->check)) != 0 || (rc = sim_workload_new(net, &net->workload)) != 0)
		goto fail;
	char identities[SIM_PATH_MAX + 16];
	snprintf(identities, sizeof identities, "%s/identities", net->dir);
	for (size_t m = 0; m < net->o.members; m++) {
		snprintf(net->member_name[m], sizeof net->member_name[m], "authority-%zu.sim", m);
		char identity_file[48], signing_file[48];
		snprintf(identity_file, sizeof identity_file, "identity-%zu.key", m);
		snprintf(signing_file, sizeof signing_file, "signing-%zu.key", m);
		if ((rc = sim_key_make(net, identities, identity_file, net->member_name[m], "identity", m,
		                       &net->identity[m])) ||
		    (rc = sim_key_make(net, identities, signing_file, net->member_name[m], "signing", m,
		                       &net->signing[m]))) {
			snprintf(why, cap, "the keys of member %zu: %s", m, dirauth_strerror(rc));
			goto fail;
		}
	}
	for (size_t i = 0; i < net->o.members; i++) {
		if ((rc = node_make(net, i, i, 0, why, cap)) != 0)
			goto fail;
		net->node_count = i + 1;
	}
	/* The phases are those the configuration gives a set (the same at every node). */
	net->schedule = net->nodes[0]->config->epoch;
	net->now_ms = net->start_ms = sim_vote_at_ms(net, SIM_START_EPOCH) - 10000;
	for (size_t i = 0; i < net->node_count; i++)
		if ((rc = node_open(net, net->nodes[i], why, cap)) != 0)
			goto fail;
	if ((rc = sim_workload_start(net)) != 0) {
		snprintf(why, cap, "the first registrations: %s", dirauth_strerror(rc));
		goto fail;
	}
	sim_log(net, "seed %llu: %zu members, k = %zu, %llu-second epochs, %u ms one way (+%u jitter), %s",
	        (unsigned long long)net->o.seed, net->o.members, net->o.threshold,
	        (unsigned long long)net->o.epoch_seconds, net->o.delay_ms, net->o.jitter_ms, net->dir);
	*out = net;
	return 0;
fail:
	if (!why[0])
		snprintf(why, cap, "%s", dirauth_strerror(rc));
	simnet_free(net);
	return rc;
}

void simnet_free(struct simnet *net)
{
	if (!net)
		return;
	for (size_t i = 0; i < SIMNET_MAX_NODES; i++)
		node_free(net->nodes[i]);
	for (size_t m = 0; m < SIMNET_MAX_MEMBERS; m++) {
		sim_key_clear(&net->identity[m]);
		sim_key_clear(&net->signing[m]);
	}
	sim_workload_free(net->workload);
	sim_check_free(net->check);
	if (net->dir[0]) {
		if (net->keep)
			sim_log(net, "the run's directory is kept: %s", net->dir);
		else
			remove_tree(net->dir);
	}
	free(net->violations);
	free(net);
}

/* ---- steps ---- */

static int fault_active(const struct simnet *net)
{
	if (net->loss_permille || net->partitioned)
		return 1;
	for (size_t i = 0; i < net->node_count; i++) {
		const struct sim_node *node = net->nodes[i];
		if ((!node->up && !node->retired) || node->slow_ms || (node->clone && node->up))
			return 1;
	}
	return 0;
}

static void tick(struct simnet *net, struct sim_node *node)
{
	if (!node->up || node->now_ms > net->now_ms)
		return; /* down, or still busy with its last tick */
	node->now_ms = node->high_ms = net->now_ms;
	node->lane_depth = 0;
	sim_node_clock(node);
	net->stats.ticks++;
	round_tick(node->round, 0, sim_node_seconds(node, node->now_ms));
	sim_node_clock(node);
}

uint64_t sim_check_ms(const struct simnet *net, uint64_t epoch)
{
	return simnet_epoch_start_ms(net, epoch) + net->o.epoch_seconds * 1000 / 6;
}

int simnet_run_until(struct simnet *net, uint64_t until_ms)
{
	size_t order[SIMNET_MAX_NODES];
	while (net->now_ms < until_ms) {
		net->now_ms += net->o.step_ms;
		net->stats.steps++;
		sim_workload_run(net);
		if (fault_active(net))
			net->last_fault_ms = net->now_ms;
		for (size_t i = 0; i < net->node_count; i++)
			order[i] = i;
		for (size_t i = net->node_count; i > 1; i--) {
			size_t j = (size_t)sim_rng_below(&net->rng, i);
			size_t t = order[i - 1];
			order[i - 1] = order[j];
			order[j] = t;
		}
		for (size_t i = 0; i < net->node_count; i++)
			tick(net, net->nodes[order[i]]);
		while (net->now_ms >= sim_check_ms(net, net->next_check_epoch)) {
			sim_check_epoch(net, net->next_check_epoch);
			net->next_check_epoch++;
		}
	}
	net->stats.simulated_ms = net->now_ms - net->start_ms;
	return 0;
}

int simnet_run_epochs(struct simnet *net, uint64_t count)
{
	return simnet_run_until(net, sim_check_ms(net, simnet_epoch_now(net) + count) + 1);
}

/* ---- faults ---- */

void simnet_set_loss(struct simnet *net, unsigned permille)
{
	permille = permille > 1000 ? 1000 : permille;
	if (permille != net->loss_permille)
		sim_log(net, "loss %u per mille", permille);
	net->loss_permille = permille;
}

void simnet_partition(struct simnet *net, const unsigned *group, size_t count)
{
	char text[64] = "";
	size_t len = 0;
	for (size_t i = 0; i < net->node_count; i++) {
		net->nodes[i]->group = i < count ? group[i] : 0;
		len += (size_t)snprintf(text + len, sizeof text - len, "%u", net->nodes[i]->group);
	}
	net->partitioned = 1;
	net->last_fault_ms = net->now_ms;
	sim_log(net, "partition: groups %s", text);
}

void simnet_cut(struct simnet *net, size_t from, size_t to, int cut)
{
	if (from >= net->node_count || to >= net->node_count)
		return;
	if (cut)
		net->cut[from] |= (uint32_t)1 << to;
	else
		net->cut[from] &= ~((uint32_t)1 << to);
	net->cut_passes[from][to] = 0;
	net->partitioned = 1;
	net->last_fault_ms = net->now_ms;
	sim_log(net, "link %zu -> %zu %s", from, to, cut ? "cut" : "restored");
}

void simnet_cut_except(struct simnet *net, size_t from, size_t to, uint32_t passes)
{
	if (from >= net->node_count || to >= net->node_count)
		return;
	simnet_cut(net, from, to, 1);
	net->cut_passes[from][to] = passes;
	sim_log(net, "link %zu -> %zu passes operations %#x only", from, to, (unsigned)passes);
}

void simnet_heal(struct simnet *net)
{
	for (size_t i = 0; i < net->node_count; i++) {
		net->nodes[i]->group = 0;
		net->cut[i] = 0;
		memset(net->cut_passes[i], 0, sizeof net->cut_passes[i]);
	}
	if (net->partitioned)
		sim_log(net, "partition healed");
	net->partitioned = 0;
	net->last_fault_ms = net->now_ms;
}

void simnet_set_slow(struct simnet *net, size_t node, uint32_t extra_ms)
{
	if (node >= net->node_count)
		return;
	net->nodes[node]->slow_ms = extra_ms;
	net->last_fault_ms = net->now_ms;
	sim_log(net, "node %zu: %u ms more each way", node, extra_ms);
}

int simnet_crash(struct simnet *net, size_t index)
{
	if (index >= net->node_count || !net->nodes[index]->up)
		return 0;
	struct sim_node *node = net->nodes[index];
	node_close(node);
	node->retired = node->clone;
	net->stats.crashes++;
	net->last_fault_ms = net->now_ms;
	sim_log(net, "node %zu crashed%s", index, node->clone ? " (a clone: for good)" : "");
	return 0;
}

int simnet_restart(struct simnet *net, size_t index)
{
	char why[768];
	if (index >= net->node_count || net->nodes[index]->up || net->nodes[index]->retired)
		return 0;
	struct sim_node *node = net->nodes[index];
	int rc = node_open(net, node, why, sizeof why);
	if (rc) {
		sim_violation(net, SIMNET_HARNESS, simnet_epoch_now(net), 1u << index, "restart: %s", why);
		return rc;
	}
	net->stats.restarts++;
	net->last_fault_ms = net->now_ms;
	sim_log(net, "node %zu restarted", index);
	return 0;
}

static void backup_path(const struct simnet *net, size_t node, const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/backup-%zu-%s", net->dir, node, name);
}

int simnet_backup(struct simnet *net, size_t index, const char *name)
{
	char path[SIM_PATH_MAX + 64];
	if (index >= net->node_count || !net->nodes[index]->up)
		return DIRAUTH_ERR_NOT_FOUND;
	backup_path(net, index, name, path, sizeof path);
	if (mkdir(path, 0700) != 0)
		return DIRAUTH_ERR_IO;
	int rc = store_backup(net->nodes[index]->store, path);
	sim_log(net, "node %zu: backup %s: %s", index, name, rc ? dirauth_strerror(rc) : "taken");
	return rc;
}

int simnet_restore(struct simnet *net, size_t index, const char *name)
{
	char path[SIM_PATH_MAX + 64];
	if (index >= net->node_count)
		return DIRAUTH_ERR_NOT_FOUND;
	struct sim_node *node = net->nodes[index];
	backup_path(net, index, name, path, sizeof path);
	int was_up = node->up;
	simnet_crash(net, index);
	remove_tree(node->data_dir);
	if (rename(path, node->data_dir) != 0)
		return DIRAUTH_ERR_IO;
	sim_check_reset_node(net, index);
	sim_log(net, "node %zu: restored from backup %s", index, name);
	return was_up ? simnet_restart(net, index) : 0;
}

int simnet_clone(struct simnet *net, size_t index, size_t *clone)
{
	char why[768];
	if (index >= net->node_count || net->node_count >= SIMNET_MAX_NODES || !net->nodes[index]->up)
		return DIRAUTH_ERR_BOUNDS;
	size_t c = net->node_count;
	int rc = node_make(net, c, net->nodes[index]->member, 1, why, sizeof why);
	if (rc == 0) {
		net->node_count = c + 1;
		net->nodes[c]->skew_ms = net->nodes[index]->skew_ms;
		rc = mkdir(net->nodes[c]->data_dir, 0700) == 0 ? 0 : DIRAUTH_ERR_IO;
	}
	if (rc == 0)
		rc = store_backup(net->nodes[index]->store, net->nodes[c]->data_dir);
	if (rc == 0)
		rc = node_open(net, net->nodes[c], why, sizeof why);
	if (rc) {
		sim_violation(net, SIMNET_HARNESS, simnet_epoch_now(net), 1u << index, "clone: %s",
		              why[0] ? why : dirauth_strerror(rc));
		return rc;
	}
	net->last_fault_ms = net->now_ms;
	*clone = c;
	sim_log(net, "node %zu: a clone of node %zu (member %s)", c, index,
	        net->member_name[net->nodes[c]->member]);
	return 0;
}

/* ---- what a test asks ---- */

size_t simnet_violation_count(const struct simnet *net)
{
	return net->violation_count;
}

const struct simnet_violation *simnet_violation(const struct simnet *net, size_t index)
{
	return index < net->violation_count ? &net->violations[index] : NULL;
}

size_t simnet_violations_of(const struct simnet *net, enum simnet_invariant invariant)
{
	size_t count = 0;
	for (size_t i = 0; i < net->violation_count; i++)
		count += net->violations[i].invariant == invariant;
	return count;
}

void simnet_violations_print(const struct simnet *net, FILE *out)
{
	for (size_t i = 0; i < net->violation_count; i++) {
		const struct simnet_violation *v = &net->violations[i];
		char nodes[64] = "";
		size_t len = 0;
		for (size_t n = 0; n < SIMNET_MAX_NODES; n++)
			if (v->nodes & (1u << n))
				len += (size_t)snprintf(nodes + len, sizeof nodes - len, "%s%zu",
				                        len ? "," : "", n);
		fprintf(out, "%s epoch %llu nodes %s: %s\n", simnet_invariant_name(v->invariant),
		        (unsigned long long)v->epoch, nodes[0] ? nodes : "-", v->detail);
	}
}

void simnet_statistics_get(const struct simnet *net, struct simnet_statistics *out)
{
	*out = net->stats;
	out->simulated_ms = net->now_ms - net->start_ms;
}

int simnet_latest(struct simnet *net, size_t index, uint64_t *epoch)
{
	*epoch = 0;
	if (index >= net->node_count || !net->nodes[index]->up)
		return DIRAUTH_ERR_NOT_FOUND;
	return store_snapshot_latest(net->nodes[index]->store, SIMNET_NAMESPACE, epoch);
}

int simnet_stored_header(struct simnet *net, size_t index, uint64_t epoch, struct buffer *note)
{
	if (index >= net->node_count || !net->nodes[index]->up)
		return DIRAUTH_ERR_NOT_FOUND;
	return store_snapshot_get(net->nodes[index]->store, SIMNET_NAMESPACE, epoch, note, NULL);
}

const char *simnet_member_name(const struct simnet *net, size_t member)
{
	return member < net->o.members ? net->member_name[member] : "";
}

struct round *simnet_round(struct simnet *net, size_t index)
{
	if (index >= net->node_count || !net->nodes[index]->up)
		return NULL;
	struct sim_node *node = net->nodes[index];
	if (node->now_ms < net->now_ms)
		node->now_ms = net->now_ms;
	sim_node_clock(node);
	return node->round;
}

int simnet_signed_by(struct simnet *net, uint64_t epoch, size_t member)
{
	struct buffer header;
	int result = -1;
	buffer_init(&header);
	for (size_t i = 0; i < net->node_count && result != 1; i++) {
		struct sim_node *node = net->nodes[i];
		struct note *note = NULL;
		if (!node->up ||
		    store_snapshot_get(node->store, SIMNET_NAMESPACE, epoch, &header, NULL) != 0 ||
		    note_parse(header.data, header.len, &note) != 0)
			continue;
		size_t count = 0;
		uint8_t verified = 0;
		result = note_verify(note, &net->signing[member].verifier, 1, &verified, &count) == 0 &&
		         count == 1;
		note_free(note);
	}
	buffer_free(&header);
	return result;
}

struct digest_walk {
	struct crypto_sha256_stream *stream;
};

static int digest_visit(void *context, uint64_t epoch, const uint8_t *note, size_t len)
{
	struct digest_walk *w = context;
	uint8_t prefix[16];
	for (int i = 0; i < 8; i++) {
		prefix[i] = (uint8_t)(epoch >> (8 * i));
		prefix[8 + i] = (uint8_t)((uint64_t)len >> (8 * i));
	}
	crypto_sha256_update(w->stream, prefix, sizeof prefix);
	crypto_sha256_update(w->stream, note, len);
	return 0;
}

int simnet_history_digest(struct simnet *net, uint8_t out[32])
{
	struct digest_walk w = {crypto_sha256_new()};
	int rc = w.stream ? 0 : DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; rc == 0 && i < net->node_count; i++) {
		struct sim_node *node = net->nodes[i];
		uint8_t index = (uint8_t)i;
		crypto_sha256_update(w.stream, &index, 1);
		if (node->up)
			rc = store_snapshot_foreach(node->store, SIMNET_NAMESPACE, 0, digest_visit, &w);
	}
	if (rc == 0)
		return crypto_sha256_finish(w.stream, out); /* frees the stream */
	crypto_sha256_free(w.stream);
	return rc;
}
