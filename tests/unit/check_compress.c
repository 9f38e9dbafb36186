/*
 * check_compress.c: tests of the content encodings, of bounded decompression and of
 * Accept-Encoding negotiation.
 *
 * Decoding is where network input meets memory, so most tests here are refusals: bombs,
 * output past the bound, truncated frames, trailing bytes, corruption, oversized zstd windows.
 * A bomb test also checks that the buffer never grew near the bomb's size, which is the point
 * of guarding while decoding rather than after.
 */
#include "compress/compress.h"

#include "base/buffer.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "test_support.h"

#include <check.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define MIB ((size_t)1024 * 1024)

static const enum content_encoding all_encodings[] = {ENCODING_IDENTITY, ENCODING_GZIP, ENCODING_ZSTD};
static const enum content_encoding compressed_encodings[] = {ENCODING_GZIP, ENCODING_ZSTD};

static uint8_t *random_bytes(size_t len)
{
	uint8_t *data = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(data);
	ck_assert_int_eq(crypto_random(data, len), 0);
	return data;
}

/*
 * Text like a snapshot body: lines of fixed words and random hex. It compresses a few times
 * over, as real bodies do, well within the ratio guard.
 */
static uint8_t *text_bytes(size_t len)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t *data = malloc(len);
	uint8_t noise[32];
	size_t pos = 0;
	ck_assert_ptr_nonnull(data);
	while (pos < len) {
		char line[128];
		ck_assert_int_eq(crypto_random(noise, sizeof noise), 0);
		int n = snprintf(line, sizeof line, "record service ");
		for (size_t i = 0; i < 16; i++) {
			line[n++] = hex[noise[i] >> 4];
			line[n++] = hex[noise[i] & 15];
		}
		n += snprintf(line + n, sizeof line - (size_t)n, " endpoint https://example.org/%u\n",
		              (unsigned)noise[20]);
		size_t take = len - pos < (size_t)n ? len - pos : (size_t)n;
		memcpy(data + pos, line, take);
		pos += take;
	}
	return data;
}

static void round_trip(enum content_encoding encoding, const uint8_t *data, size_t len)
{
	struct buffer encoded, decoded;
	buffer_init(&encoded);
	buffer_init(&decoded);
	ck_assert_int_eq(compress_encode(encoding, data, len, &encoded), 0);
	if (encoding == ENCODING_GZIP) {
		ck_assert_uint_ge(encoded.len, 18);
		ck_assert_uint_eq(encoded.data[0], 0x1f);
		ck_assert_uint_eq(encoded.data[1], 0x8b);
	} else if (encoding == ENCODING_ZSTD) {
		ck_assert_uint_ge(encoded.len, 4);
		ck_assert_uint_eq(encoded.data[0], 0x28);
		ck_assert_uint_eq(encoded.data[3], 0xfd);
	} else {
		ck_assert_uint_eq(encoded.len, len);
	}
	/* Decoding appends after what the buffer already holds. */
	ck_assert_int_eq(buffer_append(&decoded, "prefix", 6), 0);
	ck_assert_int_eq(compress_decode(encoding, encoded.data, encoded.len, len, &decoded), 0);
	ck_assert_uint_eq(decoded.len, 6 + len);
	ck_assert_mem_eq(decoded.data, "prefix", 6);
	if (len)
		ck_assert_mem_eq(decoded.data + 6, data, len);
	buffer_free(&encoded);
	buffer_free(&decoded);
}

START_TEST(test_round_trips)
{
	static const uint8_t small[] = "a small body\n";
	uint8_t *random = random_bytes(MIB);
	uint8_t *text = text_bytes(MIB);
	for (size_t i = 0; i < sizeof all_encodings / sizeof all_encodings[0]; i++) {
		round_trip(all_encodings[i], NULL, 0);
		round_trip(all_encodings[i], small, sizeof small - 1);
		round_trip(all_encodings[i], random, MIB);
		round_trip(all_encodings[i], text, MIB);
	}
	free(random);
	free(text);
}
END_TEST

START_TEST(test_compressible_text_shrinks)
{
	uint8_t *text = text_bytes(MIB);
	for (size_t i = 0; i < 2; i++) {
		struct buffer encoded;
		buffer_init(&encoded);
		ck_assert_int_eq(compress_encode(compressed_encodings[i], text, MIB, &encoded), 0);
		ck_assert_uint_lt(encoded.len, MIB / 2);
		buffer_free(&encoded);
	}
	free(text);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(content_encoding_name(ENCODING_IDENTITY), "identity");
	ck_assert_str_eq(content_encoding_name(ENCODING_GZIP), "gzip");
	ck_assert_str_eq(content_encoding_name(ENCODING_ZSTD), "zstd");
}
END_TEST

/* A bomb: 100 MiB of zeros, a few hundred KiB or less once compressed. */
START_TEST(test_bomb_refused_while_decoding)
{
	size_t bomb_len = 100 * MIB;
	uint8_t *zeros = calloc(1, bomb_len);
	ck_assert_ptr_nonnull(zeros);
	for (size_t i = 0; i < 2; i++) {
		struct buffer encoded, decoded;
		buffer_init(&encoded);
		buffer_init(&decoded);
		ck_assert_int_eq(compress_encode(compressed_encodings[i], zeros, bomb_len, &encoded), 0);
		ck_assert_uint_lt(encoded.len, bomb_len / COMPRESS_MAX_RATIO);
		ck_assert_int_eq(
		    compress_decode(compressed_encodings[i], encoded.data, encoded.len, 512 * MIB, &decoded),
		    DIRAUTH_ERR_BOUNDS);
		/* Refused after about the grace, not after expanding: the buffer never grew. */
		ck_assert_uint_eq(decoded.len, 0);
		ck_assert_uint_lt(decoded.cap, 1 * MIB);
		buffer_free(&encoded);
		buffer_free(&decoded);
	}
	free(zeros);
}
END_TEST

START_TEST(test_ratio_guard_grace)
{
	uint8_t *zeros = calloc(1, MIB);
	ck_assert_ptr_nonnull(zeros);
	for (size_t i = 0; i < 2; i++) {
		struct buffer encoded, decoded;
		buffer_init(&encoded);
		buffer_init(&decoded);
		/* Within the grace any ratio is fine. */
		ck_assert_int_eq(
		    compress_encode(compressed_encodings[i], zeros, COMPRESS_RATIO_GRACE, &encoded), 0);
		ck_assert_int_eq(
		    compress_decode(compressed_encodings[i], encoded.data, encoded.len, MIB, &decoded), 0);
		ck_assert_uint_eq(decoded.len, COMPRESS_RATIO_GRACE);
		ck_assert_mem_eq(decoded.data, zeros, COMPRESS_RATIO_GRACE);
		/* Past it, 1 MiB of zeros is over the ratio even with room to spare. */
		buffer_reset(&encoded);
		buffer_reset(&decoded);
		ck_assert_int_eq(compress_encode(compressed_encodings[i], zeros, MIB, &encoded), 0);
		ck_assert_int_eq(
		    compress_decode(compressed_encodings[i], encoded.data, encoded.len, 16 * MIB, &decoded),
		    DIRAUTH_ERR_BOUNDS);
		ck_assert_uint_eq(decoded.len, 0);
		buffer_free(&encoded);
		buffer_free(&decoded);
	}
	free(zeros);
}
END_TEST

START_TEST(test_max_output_refused)
{
	size_t len = 300 * 1000;
	uint8_t *text = text_bytes(len);
	for (size_t i = 0; i < sizeof all_encodings / sizeof all_encodings[0]; i++) {
		struct buffer encoded, decoded;
		buffer_init(&encoded);
		buffer_init(&decoded);
		ck_assert_int_eq(compress_encode(all_encodings[i], text, len, &encoded), 0);
		ck_assert_int_eq(buffer_append(&decoded, "kept", 4), 0);
		ck_assert_int_eq(
		    compress_decode(all_encodings[i], encoded.data, encoded.len, len - 1, &decoded),
		    DIRAUTH_ERR_BOUNDS);
		/* The buffer is left as it was before the call. */
		ck_assert_uint_eq(decoded.len, 4);
		ck_assert_mem_eq(decoded.data, "kept", 5);
		ck_assert_int_eq(compress_decode(all_encodings[i], encoded.data, encoded.len, 1000, &decoded),
		                 DIRAUTH_ERR_BOUNDS);
		ck_assert_int_eq(compress_decode(all_encodings[i], encoded.data, encoded.len, 0, &decoded),
		                 DIRAUTH_ERR_BOUNDS);
		ck_assert_uint_eq(decoded.len, 4);
		/* Exactly max_output bytes is fine. */
		ck_assert_int_eq(compress_decode(all_encodings[i], encoded.data, encoded.len, len, &decoded),
		                 0);
		ck_assert_uint_eq(decoded.len, 4 + len);
		ck_assert_mem_eq(decoded.data + 4, text, len);
		buffer_free(&encoded);
		buffer_free(&decoded);
	}
	free(text);
}
END_TEST

START_TEST(test_truncated_refused)
{
	size_t len = 200 * 1000;
	uint8_t *text = text_bytes(len);
	for (size_t i = 0; i < 2; i++) {
		enum content_encoding encoding = compressed_encodings[i];
		struct buffer encoded, decoded, small;
		buffer_init(&encoded);
		buffer_init(&decoded);
		buffer_init(&small);
		ck_assert_int_eq(compress_encode(encoding, text, len, &encoded), 0);
		for (size_t cut = 0; cut < encoded.len; cut += 1 + cut / 4)
			ck_assert_int_eq(compress_decode(encoding, encoded.data, cut, 4 * len, &decoded),
			                 DIRAUTH_ERR_SYNTAX);
		ck_assert_int_eq(compress_decode(encoding, encoded.data, encoded.len - 1, 4 * len, &decoded),
		                 DIRAUTH_ERR_SYNTAX);
		ck_assert_uint_eq(decoded.len, 0);
		/* Every prefix of a small frame, including the empty input. */
		ck_assert_int_eq(compress_encode(encoding, (const uint8_t *)"hello, hello", 12, &small), 0);
		for (size_t cut = 0; cut < small.len; cut++)
			ck_assert_int_eq(compress_decode(encoding, small.data, cut, 100, &decoded),
			                 DIRAUTH_ERR_SYNTAX);
		ck_assert_int_eq(compress_decode(encoding, NULL, 0, 100, &decoded), DIRAUTH_ERR_SYNTAX);
		ck_assert_int_eq(compress_decode(encoding, small.data, small.len, 100, &decoded), 0);
		ck_assert_uint_eq(decoded.len, 12);
		buffer_free(&encoded);
		buffer_free(&decoded);
		buffer_free(&small);
	}
	free(text);
}
END_TEST

START_TEST(test_trailing_bytes_refused)
{
	for (size_t i = 0; i < 2; i++) {
		enum content_encoding encoding = compressed_encodings[i];
		struct buffer encoded, decoded;
		size_t frame_len;
		buffer_init(&encoded);
		buffer_init(&decoded);
		ck_assert_int_eq(compress_encode(encoding, (const uint8_t *)"body", 4, &encoded), 0);
		frame_len = encoded.len;
		ck_assert_int_eq(buffer_append(&encoded, "\0", 1), 0);
		ck_assert_int_eq(compress_decode(encoding, encoded.data, encoded.len, 100, &decoded),
		                 DIRAUTH_ERR_SYNTAX);
		/* A second complete frame or member is trailing data too. */
		encoded.len = frame_len;
		ck_assert_int_eq(compress_encode(encoding, (const uint8_t *)"more", 4, &encoded), 0);
		ck_assert_int_eq(compress_decode(encoding, encoded.data, encoded.len, 100, &decoded),
		                 DIRAUTH_ERR_SYNTAX);
		ck_assert_uint_eq(decoded.len, 0);
		ck_assert_int_eq(compress_decode(encoding, encoded.data, frame_len, 100, &decoded), 0);
		ck_assert_mem_eq(decoded.data, "body", 5);
		buffer_free(&encoded);
		buffer_free(&decoded);
	}
}
END_TEST

START_TEST(test_corruption_refused)
{
	size_t len = 100 * 1000;
	uint8_t *random = random_bytes(len);
	for (size_t i = 0; i < 2; i++) {
		enum content_encoding encoding = compressed_encodings[i];
		struct buffer encoded, decoded;
		buffer_init(&encoded);
		buffer_init(&decoded);
		ck_assert_int_eq(compress_encode(encoding, random, len, &encoded), 0);
		/* Incompressible data is stored nearly as is, so only the checksum can catch this. */
		encoded.data[encoded.len / 2] ^= 0x10;
		ck_assert_int_eq(compress_decode(encoding, encoded.data, encoded.len, 2 * len, &decoded),
		                 DIRAUTH_ERR_SYNTAX);
		/* A wrong magic number. */
		encoded.data[encoded.len / 2] ^= 0x10;
		encoded.data[0] ^= 1;
		ck_assert_int_eq(compress_decode(encoding, encoded.data, encoded.len, 2 * len, &decoded),
		                 DIRAUTH_ERR_SYNTAX);
		ck_assert_uint_eq(decoded.len, 0);
		buffer_free(&encoded);
		buffer_free(&decoded);
	}
	/* Each encoding refuses the other's frames. */
	struct buffer gzip, decoded;
	buffer_init(&gzip);
	buffer_init(&decoded);
	ck_assert_int_eq(compress_encode(ENCODING_GZIP, (const uint8_t *)"x", 1, &gzip), 0);
	ck_assert_int_eq(compress_decode(ENCODING_ZSTD, gzip.data, gzip.len, 100, &decoded),
	                 DIRAUTH_ERR_SYNTAX);
	buffer_reset(&gzip);
	ck_assert_int_eq(compress_encode(ENCODING_ZSTD, (const uint8_t *)"x", 1, &gzip), 0);
	ck_assert_int_eq(compress_decode(ENCODING_GZIP, gzip.data, gzip.len, 100, &decoded),
	                 DIRAUTH_ERR_SYNTAX);
	buffer_free(&gzip);
	buffer_free(&decoded);
	free(random);
}
END_TEST

START_TEST(test_zstd_skippable_frame_refused)
{
	/* A skippable frame (magic 0x184D2A50, 4-byte length, payload) decodes to nothing. */
	static const uint8_t skippable[] = {0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 'h', 'i'};
	struct buffer decoded;
	buffer_init(&decoded);
	ck_assert_int_eq(compress_decode(ENCODING_ZSTD, skippable, sizeof skippable, 100, &decoded),
	                 DIRAUTH_ERR_SYNTAX);
	buffer_free(&decoded);
}
END_TEST

START_TEST(test_zstd_large_window_refused)
{
	/* A frame that declares a 128 MiB window (no content size) would make the decoder allocate
	 * it; it is refused as over a bound. */
	ZSTD_CCtx *context = ZSTD_createCCtx();
	uint8_t frame[256];
	struct buffer decoded;
	ck_assert_ptr_nonnull(context);
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, 27)));
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 0)));
	ZSTD_inBuffer input = {"abc", 3, 0};
	ZSTD_outBuffer output = {frame, sizeof frame, 0};
	/* Feeding the data before ending keeps the encoder from learning the size and shrinking
	 * the window. */
	ck_assert(!ZSTD_isError(ZSTD_compressStream2(context, &output, &input, ZSTD_e_continue)));
	ck_assert_uint_eq(input.pos, 3);
	ck_assert_uint_eq(ZSTD_compressStream2(context, &output, &input, ZSTD_e_end), 0);
	ZSTD_freeCCtx(context);
	ck_assert_uint_eq(ZSTD_getFrameContentSize(frame, output.pos), ZSTD_CONTENTSIZE_UNKNOWN);
	/* The frame is valid: a decoder allowing zstd's default 128 MiB window decodes it. */
	ZSTD_DCtx *reference = ZSTD_createDCtx();
	uint8_t plain[16];
	ZSTD_inBuffer frame_input = {frame, output.pos, 0};
	ZSTD_outBuffer plain_output = {plain, sizeof plain, 0};
	ck_assert_ptr_nonnull(reference);
	ck_assert_uint_eq(ZSTD_decompressStream(reference, &plain_output, &frame_input), 0);
	ck_assert_uint_eq(plain_output.pos, 3);
	ZSTD_freeDCtx(reference);
	buffer_init(&decoded);
	ck_assert_int_eq(compress_decode(ENCODING_ZSTD, frame, output.pos, 100, &decoded),
	                 DIRAUTH_ERR_BOUNDS);
	buffer_free(&decoded);
}
END_TEST

START_TEST(test_gzip_from_zlib_decodes)
{
	/* A gzip stream written by zlib directly (other level, no compress_encode) is accepted;
	 * a zlib (RFC 1950) stream is not gzip. */
	static const char message[] = "interoperable";
	uint8_t stream_bytes[128];
	uLongf stream_len = sizeof stream_bytes;
	struct buffer decoded;
	z_stream stream;
	memset(&stream, 0, sizeof stream);
	ck_assert_int_eq(deflateInit2(&stream, 1, Z_DEFLATED, 15 + 16, 9, Z_FILTERED), Z_OK);
	stream.next_in = (Bytef *)(uintptr_t)message;
	stream.avail_in = sizeof message - 1;
	stream.next_out = stream_bytes;
	stream.avail_out = sizeof stream_bytes;
	ck_assert_int_eq(deflate(&stream, Z_FINISH), Z_STREAM_END);
	size_t gzip_len = sizeof stream_bytes - stream.avail_out;
	deflateEnd(&stream);
	buffer_init(&decoded);
	ck_assert_int_eq(compress_decode(ENCODING_GZIP, stream_bytes, gzip_len, 100, &decoded), 0);
	ck_assert_str_eq((const char *)decoded.data, message);
	buffer_reset(&decoded);
	ck_assert_int_eq(compress2(stream_bytes, &stream_len, (const Bytef *)message, sizeof message - 1, 6),
	                 Z_OK);
	ck_assert_int_eq(compress_decode(ENCODING_GZIP, stream_bytes, stream_len, 100, &decoded),
	                 DIRAUTH_ERR_SYNTAX);
	buffer_free(&decoded);
}
END_TEST

struct negotiation_case {
	const char *header;
	enum content_encoding expected;
};

START_TEST(test_negotiation_table)
{
	static const struct negotiation_case cases[] = {
	    {NULL, ENCODING_IDENTITY},
	    {"", ENCODING_IDENTITY},
	    {"gzip", ENCODING_GZIP},
	    {"zstd", ENCODING_ZSTD},
	    {"gzip, zstd", ENCODING_ZSTD},
	    {"zstd;q=0.1, gzip;q=1", ENCODING_ZSTD},
	    {"gzip, deflate, br", ENCODING_GZIP},
	    {"GZIP", ENCODING_GZIP},
	    {"ZStd", ENCODING_ZSTD},
	    {"x-gzip", ENCODING_GZIP},
	    {"deflate, br", ENCODING_IDENTITY},
	    {"identity", ENCODING_IDENTITY},
	    {"zstd;q=0, gzip", ENCODING_GZIP},
	    {"zstd;q=0.0, gzip;q=0.000", ENCODING_IDENTITY},
	    {"zstd;q=0.5", ENCODING_ZSTD},
	    {"zstd ; q=0.5 , gzip", ENCODING_ZSTD},
	    {"zstd;Q=0", ENCODING_IDENTITY},
	    {"zstd;q=1.000", ENCODING_ZSTD},
	    {"zstd;q=0.001", ENCODING_ZSTD},
	    {"*", ENCODING_ZSTD},
	    {"*;q=0.5", ENCODING_ZSTD},
	    {"*;q=0", ENCODING_COUNT},
	    {"*;q=0, identity", ENCODING_IDENTITY},
	    {"*;q=0, gzip", ENCODING_GZIP},
	    {"*, zstd;q=0", ENCODING_GZIP},
	    {"*, zstd;q=0, gzip;q=0", ENCODING_IDENTITY},
	    {"identity;q=0", ENCODING_COUNT},
	    {"identity;q=0, gzip", ENCODING_GZIP},
	    {"identity;q=0, *;q=0", ENCODING_COUNT},
	    {"identity;q=0, deflate", ENCODING_COUNT},
	    {"identity;q=0.5, zstd;q=0", ENCODING_IDENTITY},
	    {"gzip;q=0", ENCODING_IDENTITY},
	    /* Malformed q values make the element ignored, not accepted. */
	    {"zstd;q=2", ENCODING_IDENTITY},
	    {"zstd;q=1.5", ENCODING_IDENTITY},
	    {"zstd;q=0.0000", ENCODING_IDENTITY},
	    {"zstd;q=", ENCODING_IDENTITY},
	    {"zstd;q", ENCODING_IDENTITY},
	    {"zstd;q=-1", ENCODING_IDENTITY},
	    {"zstd;;", ENCODING_IDENTITY},
	    {"zstd gzip", ENCODING_IDENTITY},
	    /* Other parameters are skipped, empty list elements too. */
	    {"zstd;level=3", ENCODING_ZSTD},
	    {",, gzip ,,", ENCODING_GZIP},
	    {"\tgzip\t;\tq=0.8", ENCODING_GZIP},
	    {"zstdx, gzipx", ENCODING_IDENTITY},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		ck_assert_msg(compress_negotiate(cases[i].header) == cases[i].expected,
		              "case %zu \"%s\": got %d", i, cases[i].header ? cases[i].header : "(null)",
		              (int)compress_negotiate(cases[i].header));
}
END_TEST

START_TEST(test_negotiation_long_header)
{
	/* A refusal of everything answers the same whatever follows it, read to the end of the
	 * list: 1,500 more entries, or as many as the bound holds. */
	static char header[COMPRESS_ACCEPT_MAX + 2];
	size_t len = (size_t)snprintf(header, sizeof header, "identity;q=0, *;q=0");
	for (int i = 0; i < 1500; i++)
		len += (size_t)snprintf(header + len, sizeof header - len, ", x-%d", i);
	ck_assert_uint_le(len, COMPRESS_ACCEPT_MAX);
	ck_assert_int_eq(compress_negotiate(header), ENCODING_COUNT);
	while (len < COMPRESS_ACCEPT_MAX)
		header[len++] = ' ';
	header[len] = 0;
	ck_assert_int_eq(compress_negotiate(header), ENCODING_COUNT);
	/* Only naming a coding again changes the answer, at whichever end of the list. */
	memcpy(header + len - 6, ", gzip", 6);
	ck_assert_int_eq(compress_negotiate(header), ENCODING_GZIP);
	/* Past the bound nothing is read, so nothing is agreed, even where the start accepts. */
	memset(header, ' ', sizeof header);
	memcpy(header, "zstd, gzip, identity", 20);
	header[COMPRESS_ACCEPT_MAX + 1] = 0;
	ck_assert_int_eq(compress_negotiate(header), ENCODING_COUNT);
	header[COMPRESS_ACCEPT_MAX] = 0;
	ck_assert_int_eq(compress_negotiate(header), ENCODING_ZSTD);
}
END_TEST

/* The fuzz seeds are valid inputs, so that the fuzzer starts from code paths that succeed. */
START_TEST(test_fuzz_seeds_decode)
{
	char dir[PATH_MAX];
	unsigned count = 0;
	snprintf(dir, sizeof dir, "%s", test_source_path("tests/fuzz/corpus/decompress"));
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	struct dirent *entry;
	while ((entry = readdir(d)) != NULL) {
		char path[PATH_MAX];
		size_t len;
		struct buffer decoded;
		if (entry->d_name[0] == '.')
			continue;
		int n = snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
		ck_assert(n > 0 && (size_t)n < sizeof path);
		uint8_t *seed = test_read_file(path, &len);
		ck_assert_uint_ge(len, 1);
		buffer_init(&decoded);
		ck_assert_msg(compress_decode((enum content_encoding)(seed[0] % ENCODING_COUNT), seed + 1,
		                              len - 1, MIB, &decoded) == 0,
		              "%s does not decode", path);
		buffer_free(&decoded);
		free(seed);
		count++;
	}
	closedir(d);
	ck_assert_uint_ge(count, 3);
}
END_TEST

static Suite *compress_suite(void)
{
	Suite *s = suite_create("compress");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_round_trips);
	tcase_add_test(tc, test_compressible_text_shrinks);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_bomb_refused_while_decoding);
	tcase_add_test(tc, test_ratio_guard_grace);
	tcase_add_test(tc, test_max_output_refused);
	tcase_add_test(tc, test_truncated_refused);
	tcase_add_test(tc, test_trailing_bytes_refused);
	tcase_add_test(tc, test_corruption_refused);
	tcase_add_test(tc, test_zstd_skippable_frame_refused);
	tcase_add_test(tc, test_zstd_large_window_refused);
	tcase_add_test(tc, test_gzip_from_zlib_decodes);
	tcase_add_test(tc, test_negotiation_table);
	tcase_add_test(tc, test_negotiation_long_header);
	tcase_add_test(tc, test_fuzz_seeds_decode);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(compress_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
