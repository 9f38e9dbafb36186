/*
 * nginx_front.c: the shipped TLS proxy configuration, derived for a test's authority
 * (nginx_front.h).
 *
 * The derivation reads the shipped file line by line and rewrites only the lines of the
 * directives it substitutes, each parsed as "<indent><directive> <arguments>;<rest>"; comments,
 * blocks and every other directive pass through as they are.
 */
#include "tests/harness/nginx_front.h"

#include "base/buffer.h"
#include "base/error.h"
#include "tests/support/test_programs.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHIPPED_MAX  (256 * 1024)
#define ARGUMENT_MAX 16

/* One line of the shipped file, split. A line without a directive (blank, a comment, a lone
 * brace) has directive_len 0. */
struct line {
	const char *start;
	size_t len;
	size_t indent;
	const char *directive;
	size_t directive_len;
	const char *arguments[ARGUMENT_MAX];
	size_t argument_lens[ARGUMENT_MAX];
	size_t argument_count;
	const char *rest; /* from the ';' on, to the end of the line */
	size_t rest_len;
};

static void line_split(const char *start, size_t len, struct line *out)
{
	memset(out, 0, sizeof *out);
	out->start = start;
	out->len = len;
	size_t i = 0;
	while (i < len && (start[i] == ' ' || start[i] == '\t'))
		i++;
	out->indent = i;
	if (i == len || start[i] == '#' || start[i] == '{' || start[i] == '}')
		return;
	const char *semicolon = memchr(start + i, ';', len - i);
	if (!semicolon)
		return; /* a block's opening line ("server {") */
	out->directive = start + i;
	while (i < len && !isspace((unsigned char)start[i]) && start + i < semicolon)
		i++;
	out->directive_len = (size_t)(start + i - out->directive);
	while (start + i < semicolon && out->argument_count < ARGUMENT_MAX) {
		while (start + i < semicolon && isspace((unsigned char)start[i]))
			i++;
		if (start + i == semicolon)
			break;
		out->arguments[out->argument_count] = start + i;
		while (start + i < semicolon && !isspace((unsigned char)start[i]))
			i++;
		out->argument_lens[out->argument_count] =
		    (size_t)(start + i - out->arguments[out->argument_count]);
		out->argument_count++;
	}
	out->rest = semicolon;
	out->rest_len = (size_t)(start + len - semicolon);
}

static int is_directive(const struct line *line, const char *name)
{
	return line->directive_len == strlen(name) && memcmp(line->directive, name, line->directive_len) == 0;
}

static int has_argument(const struct line *line, const char *word)
{
	for (size_t i = 0; i < line->argument_count; i++)
		if (line->argument_lens[i] == strlen(word) &&
		    memcmp(line->arguments[i], word, strlen(word)) == 0)
			return 1;
	return 0;
}

/* "<indent><directive> <first>" then the arguments from index from on, and the rest. */
static int emit(struct buffer *out, const struct line *line, const char *first, size_t from)
{
	int rc = buffer_appendf(out, "%.*s%.*s %s", (int)line->indent, line->start, (int)line->directive_len,
	                        line->directive, first);
	for (size_t i = from; rc == 0 && i < line->argument_count; i++)
		rc = buffer_appendf(out, " %.*s", (int)line->argument_lens[i], line->arguments[i]);
	if (rc == 0)
		rc = buffer_appendf(out, "%.*s\n", (int)line->rest_len, line->rest);
	return rc == 0 ? 0 : DIRAUTH_ERR_NOMEM;
}

/* What the derivation substituted, counted: the ones a test cannot run without must be there. */
struct substituted {
	unsigned tls_listen, http_listen, ipv6_listen, server_name, certificate, certificate_key, upstream,
	    error_log;
};

static int derive_line(const struct nginx_front_options *o, const struct line *line, struct buffer *out,
                       struct substituted *done)
{
	char first[PATH_MAX + 64];
	if (is_directive(line, "listen") && line->argument_count > 0) {
		if (line->arguments[0][0] == '[') {
			done->ipv6_listen++;
			return buffer_appendf(out, "%.*s# (left out: on 127.0.0.1 only) %.*s\n",
			                      (int)line->indent, line->start, (int)(line->len - line->indent),
			                      line->start + line->indent) == 0
			           ? 0
			           : DIRAUTH_ERR_NOMEM;
		}
		int tls = has_argument(line, "ssl");
		snprintf(first, sizeof first, "127.0.0.1:%u", tls ? o->tls_port : o->http_port);
		if (tls)
			done->tls_listen++;
		else
			done->http_listen++;
		return emit(out, line, first, 1);
	}
	if (is_directive(line, "server_name")) {
		done->server_name++;
		return emit(out, line, o->server_name, line->argument_count);
	}
	if (is_directive(line, "ssl_certificate")) {
		done->certificate++;
		return emit(out, line, o->certificate, line->argument_count);
	}
	if (is_directive(line, "ssl_certificate_key")) {
		done->certificate_key++;
		return emit(out, line, o->certificate_key, line->argument_count);
	}
	if (is_directive(line, "error_log") && line->argument_count > 0) {
		done->error_log++;
		snprintf(first, sizeof first, "%s/dirauthd-proxy.error.log", o->dir);
		return emit(out, line, first, 1);
	}
	/* An upstream's server: "server 127.0.0.1:8080 ...;" (a server block opens with "{"). */
	if (is_directive(line, "server") && line->argument_count > 0 &&
	    memchr(line->arguments[0], ':', line->argument_lens[0])) {
		const char *colon = line->arguments[0] + line->argument_lens[0];
		while (*--colon != ':')
			;
		done->upstream++;
		snprintf(first, sizeof first, "%.*s:%u", (int)(colon - line->arguments[0]),
		         line->arguments[0], o->upstream_port);
		return emit(out, line, first, 1);
	}
	return buffer_appendf(out, "%.*s\n", (int)line->len, line->start) == 0 ? 0 : DIRAUTH_ERR_NOMEM;
}

static int read_shipped(const char *path, struct buffer *out)
{
	FILE *file = fopen(path, "re");
	if (!file) {
		fprintf(stderr, "nginx_front: %s: %s\n", path, strerror(errno));
		return DIRAUTH_ERR_IO;
	}
	char block[8192];
	int rc = 0;
	size_t n;
	while (rc == 0 && (n = fread(block, 1, sizeof block, file)) > 0)
		rc = out->len + n > SHIPPED_MAX ? DIRAUTH_ERR_BOUNDS
		                                : (buffer_append(out, block, n) == 0 ? 0 : DIRAUTH_ERR_NOMEM);
	if (ferror(file))
		rc = DIRAUTH_ERR_IO;
	fclose(file);
	return rc;
}

/* The shipped file, derived for o (nginx_front.h). */
static int derive(const struct nginx_front_options *o, struct buffer *out)
{
	struct buffer shipped;
	buffer_init(&shipped);
	int rc = read_shipped(o->shipped, &shipped);
	if (rc == 0 && buffer_appendf(out,
	                              "# %s, derived for %s in a test: the listen ports, server_name, "
	                              "certificate paths, upstream port and error_log path substituted.\n",
	                              o->shipped, o->server_name) != 0)
		rc = DIRAUTH_ERR_NOMEM;
	struct substituted done = {0};
	const char *text = (const char *)shipped.data;
	for (size_t at = 0; rc == 0 && at < shipped.len;) {
		const char *end = memchr(text + at, '\n', shipped.len - at);
		size_t len = end ? (size_t)(end - (text + at)) : shipped.len - at;
		struct line line;
		line_split(text + at, len, &line);
		rc = derive_line(o, &line, out, &done);
		at += len + 1;
	}
	const struct {
		unsigned count;
		const char *what;
	} needed[] = {{done.tls_listen, "a listen ... ssl"},
	              {done.server_name, "server_name"},
	              {done.certificate, "ssl_certificate"},
	              {done.certificate_key, "ssl_certificate_key"},
	              {done.upstream, "an upstream server 127.0.0.1:<port>"}};
	for (size_t i = 0; rc == 0 && i < sizeof needed / sizeof needed[0]; i++)
		if (needed[i].count == 0) {
			fprintf(stderr, "nginx_front: %s has no %s line to substitute\n", o->shipped,
			        needed[i].what);
			rc = DIRAUTH_ERR_SYNTAX;
		}
	buffer_free(&shipped);
	return rc;
}

static int write_file(const char *path, const struct buffer *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return DIRAUTH_ERR_IO;
	size_t written = 0;
	while (written < text->len) {
		ssize_t n = write(fd, text->data + written, text->len - written);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		written += (size_t)n;
	}
	return close(fd) == 0 && written == text->len ? 0 : DIRAUTH_ERR_IO;
}

/* dir/nginx.conf: what a test needs around the derived server configuration. */
static int write_main(const struct nginx_front_options *o, const char *path)
{
	struct buffer text;
	buffer_init(&text);
	int rc = buffer_appendf(&text,
	                        "# nginx in front of %s in a test: what a test needs around the shipped "
	                        "server configuration (dirauthd-proxy.conf here).\n"
	                        "daemon off;\n"
	                        "master_process on;\n"
	                        "worker_processes 1;\n",
	                        o->server_name) == 0
	             ? 0
	             : DIRAUTH_ERR_NOMEM;
	if (rc == 0)
		rc = test_nginx_user(&text);
	if (rc == 0 &&
	    buffer_appendf(&text,
	                   "pid %s/nginx.pid;\n"
	                   "error_log %s/error.log warn;\n"
	                   "events { worker_connections 512; }\n"
	                   "http {\n"
	                   "\tdefault_type application/octet-stream;\n"
	                   "\tgzip on; # as Debian's nginx.conf has it: the shipped server turns it off\n",
	                   o->dir, o->dir) != 0)
		rc = DIRAUTH_ERR_NOMEM;
	if (rc == 0)
		rc = test_nginx_temp_paths(o->nginx, o->dir, &text);
	if (rc == 0 && buffer_appendf(&text, "\tinclude %s/dirauthd-proxy.conf;\n}\n", o->dir) != 0)
		rc = DIRAUTH_ERR_NOMEM;
	if (rc == 0)
		rc = write_file(path, &text);
	buffer_free(&text);
	return rc;
}

int nginx_front_write(const struct nginx_front_options *o, struct nginx_front_command *command)
{
	if ((mkdir(o->dir, 0755) != 0 && errno != EEXIST) || chmod(o->dir, 0755) != 0)
		return DIRAUTH_ERR_IO;
	struct buffer site;
	buffer_init(&site);
	char path[PATH_MAX];
	int rc = derive(o, &site);
	if (rc == 0) {
		snprintf(path, sizeof path, "%s/dirauthd-proxy.conf", o->dir);
		rc = write_file(path, &site);
	}
	buffer_free(&site);
	snprintf(command->config, sizeof command->config, "%s/nginx.conf", o->dir);
	if (rc == 0)
		rc = write_main(o, command->config);
	if (rc)
		return rc;
	snprintf(command->program, sizeof command->program, "%s", o->nginx);
	snprintf(command->prefix, sizeof command->prefix, "%s/", o->dir);
	snprintf(command->error_log, sizeof command->error_log, "%s/error.log", o->dir);
	char **argv = command->argv;
	argv[0] = command->program;
	argv[1] = "-p";
	argv[2] = command->prefix;
	argv[3] = "-e";
	argv[4] = command->error_log;
	argv[5] = "-c";
	argv[6] = command->config;
	argv[7] = NULL;
	return 0;
}
