/* test_inproc.c: the runtime's own pieces of the in-process targets
 * (usdt/tr2_inproc.h) and the session id they share with tr2-bpf
 * (formatter/tr2_sid.h): SHA-1 against FIPS 180 vectors and OpenSSL, the
 * host hash, the session id, the values of
 * git's GIT_TRACE2* variables as git reads them, and tr2_json_check against
 * the formatter's tr2_json_is_valid (simdjson), which it stands in for. */
#include "unit.h"
#include "tr2_inproc.h"
#include "tr2_json.h"
#include "tr2_sid.h"

#include <unistd.h>
#include <openssl/evp.h>

static const char *hex(const unsigned char *md, size_t n)
{
	static char out[41];

	for (size_t i = 0; i < n && i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return out;
}

static const char *sha1_hex(const void *data, size_t len)
{
	unsigned char md[20];

	tr2_sha1(data, len, md);
	return hex(md, 20);
}

/* FIPS 180-2 appendix A and the usual empty-string vector */
static void test_sha1_vectors(void **state)
{
	static char million[1000000];

	assert_string_equal(sha1_hex("", 0), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	assert_string_equal(sha1_hex("abc", 3), "a9993e364706816aba3e25717850c26c9cd0d89d");
	assert_string_equal(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56),
			    "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	memset(million, 'a', sizeof(million));
	assert_string_equal(sha1_hex(million, sizeof(million)), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

/* every length across the padding boundaries (55, 56, 63, 64, 119, 120...) */
static void test_sha1_openssl(void **state)
{
	unsigned char data[300], md[EVP_MAX_MD_SIZE];
	unsigned mdlen;
	char want[41];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + 3);
	for (size_t len = 0; len <= sizeof(data); len++) {
		assert_true(EVP_Digest(data, len, md, &mdlen, EVP_sha1(), NULL));
		memcpy(want, hex(md, mdlen), sizeof(want));
		assert_string_equal(sha1_hex(data, len), want);
	}
}

/* The sid's host part, as git's tr2_sid.c makes it: OpenSSL's SHA-1 of
 * this machine's name and of others; an empty name is hashed too, and only
 * a failed gethostname() gives "Localhost". */
static void test_host_hash(void **state)
{
	static const char *const hosts[] = { "localhost", "build-42.example.org", "h", "\xc3\xa9t\xc3\xa9" };
	unsigned char md[EVP_MAX_MD_SIZE];
	char mine[16], want[16], name[256] = "";
	unsigned mdlen;

	assert_int_equal(gethostname(name, sizeof(name) - 1), 0);
	assert_true(EVP_Digest(name, strlen(name), md, &mdlen, EVP_sha1(), NULL));
	snprintf(want, sizeof(want), "H%.8s", hex(md, mdlen));
	tr2_sid_host(mine, sizeof(mine));
	assert_string_equal(mine, want);
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		assert_true(EVP_Digest(hosts[i], strlen(hosts[i]), md, &mdlen, EVP_sha1(), NULL));
		snprintf(want, sizeof(want), "H%.8s", hex(md, mdlen));
		tr2_sid_host_hash(hosts[i], mine, sizeof(mine));
		assert_string_equal(mine, want);
	}
	tr2_sid_host_hash("", mine, sizeof(mine));
	assert_string_equal(mine, "Hda39a3ee");
	tr2_sid_host_hash(NULL, mine, sizeof(mine));
	assert_string_equal(mine, "Localhost");
}

/* git's "<yyyymmdd>T<hhmmss>.<uuuuuu>Z-<host>-P<pid>", under its parent's */
static void test_sid_format(void **state)
{
	int64_t t = at("2026-11-21T20:40:14.048864Z");
	char buf[256];

	assert_int_equal(tr2_sid_format(buf, sizeof(buf), NULL, t, "H0a7c9cdf", 0x35e3), 43);
	assert_string_equal(buf, "20261121T204014.048864Z-H0a7c9cdf-P000035e3");
	tr2_sid_format(buf, sizeof(buf), "", t, "Localhost", 0xffffffffu);
	assert_string_equal(buf, "20261121T204014.048864Z-Localhost-Pffffffff");
	tr2_sid_format(buf, sizeof(buf), "A/B", t, "H0a7c9cdf", 1);
	assert_string_equal(buf, "A/B/20261121T204014.048864Z-H0a7c9cdf-P00000001");
	/* as snprintf: the length needed, the text cut */
	assert_int_equal(tr2_sid_format(buf, 10, "A", t, "H0a7c9cdf", 1), 45);
	assert_string_equal(buf, "A/2026112");
}

/* the target values of seeds/000 "Enabling a Target", in git's order */
static void test_target_values(void **state)
{
	static const struct {
		const char *value;
		enum tr2_sysenv_kind kind;
		int fd;
		const char *socket_path;
	} cases[] = {
		{ NULL, TR2_SYSENV_OFF, -1, NULL },
		{ "", TR2_SYSENV_OFF, -1, NULL },
		{ "0", TR2_SYSENV_OFF, -1, NULL },
		{ "false", TR2_SYSENV_OFF, -1, NULL },
		{ "FaLsE", TR2_SYSENV_OFF, -1, NULL },
		{ "1", TR2_SYSENV_FD, 2, NULL },
		{ "true", TR2_SYSENV_FD, 2, NULL },
		{ "TRUE", TR2_SYSENV_FD, 2, NULL },
		{ "2", TR2_SYSENV_FD, 2, NULL },
		{ "9", TR2_SYSENV_FD, 9, NULL },
		{ "10", TR2_SYSENV_UNKNOWN, -1, NULL },
		{ "01", TR2_SYSENV_UNKNOWN, -1, NULL },
		{ " 1", TR2_SYSENV_UNKNOWN, -1, NULL },
		{ "yes", TR2_SYSENV_UNKNOWN, -1, NULL },   /* not a target value, only a bool */
		{ "/tmp/x", TR2_SYSENV_PATH, -1, NULL },
		{ "/", TR2_SYSENV_PATH, -1, NULL },
		{ "rel/x", TR2_SYSENV_UNKNOWN, -1, NULL },
		{ "~/x", TR2_SYSENV_UNKNOWN, -1, NULL },
		{ "./x", TR2_SYSENV_UNKNOWN, -1, NULL },
		{ "af_unix:", TR2_SYSENV_BAD_SOCKET, -1, "" },
		{ "af_unix:stream:", TR2_SYSENV_BAD_SOCKET, -1, "" },
		{ "af_unix:dgram:", TR2_SYSENV_BAD_SOCKET, -1, "" },
		{ "af_unix:rel", TR2_SYSENV_BAD_SOCKET_PATH, -1, "rel" },
		{ "af_unix:seqpacket:/s", TR2_SYSENV_BAD_SOCKET_PATH, -1, "seqpacket:/s" },
		{ "af_unix:/s", TR2_SYSENV_AF_UNIX, -1, "/s" },
		{ "af_unix:stream:/s", TR2_SYSENV_AF_UNIX, -1, "/s" },
		{ "af_unix:dgram:/s", TR2_SYSENV_AF_UNIX, -1, "/s" },
		{ "AF_UNIX:/s", TR2_SYSENV_UNKNOWN, -1, NULL },
	};
	char longest[200] = "af_unix:/";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = NULL;
		int fd = -1;

		if (tr2_sysenv_target(cases[i].value, &fd, &path) != cases[i].kind)
			fail_msg("'%s': kind %d, want %d", cases[i].value ? cases[i].value : "(unset)",
				 tr2_sysenv_target(cases[i].value, &fd, &path), cases[i].kind);
		assert_int_equal(fd, cases[i].fd);
		if (cases[i].socket_path)
			assert_string_equal(path, cases[i].socket_path);
	}
	/* sun_path holds 108 bytes, NUL included */
	memset(longest + 9, 'x', 106);
	assert_int_equal(tr2_sysenv_target(longest, &(int){ 0 }, NULL), TR2_SYSENV_AF_UNIX);
	strcat(longest, "x");
	assert_int_equal(tr2_sysenv_target(longest, &(int){ 0 }, NULL), TR2_SYSENV_BAD_SOCKET_PATH);
}

/* git_parse_maybe_bool, for the BRIEF variables */
static void test_bool_values(void **state)
{
	static const struct {
		const char *value;
		int want;
	} cases[] = {
		{ NULL, 1 }, { "", 0 }, { "1", 1 }, { "0", 0 }, { "true", 1 }, { "YES", 1 }, { "On", 1 },
		{ "false", 0 }, { "No", 0 }, { "OFF", 0 }, { "2", 1 }, { "-1", 1 }, { "1k", 1 },
		{ "0k", 0 }, { "0x10", 1 }, { "010", 1 }, { "abc", -1 }, { "1x", -1 }, { "1kb", -1 },
		{ "99999999999", -1 }, { "3g", -1 }, { "1g", 1 }, { " 1", 1 }, { "1 ", -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (tr2_sysenv_bool(cases[i].value) != cases[i].want)
			fail_msg("'%s': %d, want %d", cases[i].value ? cases[i].value : "(unset)",
				 tr2_sysenv_bool(cases[i].value), cases[i].want);
}

/* Both checks give the same verdict, and it is want (1 valid, 0 not, -1
 * either, only that they agree). */
static void agree(const char *text, int want)
{
	bool mine = tr2_json_check(text), theirs = tr2_json_is_valid(text);

	if (mine != theirs)
		fail_msg("tr2_json_check says %d, tr2_json_is_valid %d: '%s'", mine, theirs, text);
	if (want >= 0 && mine != want)
		fail_msg("'%s': %d, want %d", text, mine, want);
}

static void test_json_cases(void **state)
{
	static const char *const valid[] = {
		"{\"a\":1}", "[1, 2.5e-3, -0, true, false, null, \"s\"]", "42", "\"str\"", "null", " {} ",
		"{\"esc\":\"\\n\\u00e9\\\"\\/\"}", "{\n  \"a\": [\n    1\n  ]\r\n}\n", "\t[]\t", "-0.0E+00",
		"123456789012345678901234567890", "{\"k\":\"caf\xc3\xa9\"}", "\"\xf4\x8f\xbf\xbf\"",
		"[1.7976931348623157e308, 1e-999, \"\\ud83d\\ude00\\u0000\"]", "{\"a\":1,\"a\":2}",
		"1.7976931348623158e308", "-1.7976931348623158e308", "0e999999999", "0.000e400",
		"1e0000000000000000001", "1E-0000000000000000001", "\"\\uDBFF\\uDFFF\"", "\"\x7f\"",
		"179769313486231580793728971405303415079934132710037826936173778980444968292764750946649"
		"017977587207096330286416692887910946555547851940402630657488671505820681908902000708383"
		"676273854845817711531764475730270069855571366959622842914819860834936475292719074168444"
		"365510704342711559699508093042880177904174497791",
		"0.0000000000000000000000000000000000000000000000000000000000000001e372",
	};
	static const char *const invalid[] = {
		"", " ", "{", "{\"a\":1", "{\"a\":1}}", "{\"a\":1} x", "{\"a\":1}{}", "[1,]", "{'a':1}",
		"NaN", "Infinity", "-Infinity", "nan", "1.", ".5", "01", "+1", "1e", "tru", "True", "-",
		"\"a\tb\"", "\"a\x01\"", "\"\\x\"", "\"\xff\"", "{\"a\":\"\xc0\xaf\"}", "\x0c{}", "undefined",
		"{a:1}", "falses", "nullx ", "true1", "1 2", "1],[2", "[1}", "{\"a\" 1}", "{,}", "[,1]",
		"{\"a\":1,}", "\"\\u12\"", "\"\\u12g4\"", "\"abc", "1e999", "[-1e309]", "\"\\ud800\"",
		"[\"\\udc00x\"]", "{\"\\ud800\":1}", "\"\\ud800\\u0041\"", "\"\\ud800\\ud800\"",
		"1.7976931348623159e308", "1e00000000000000000001", "1e+99999999999999999999",
		"\xef\xbb\xbf{}", "1e-", "1E+", "-01", "2.e3", "[\"\xed\xa0\x80\"]",
		"179769313486231580793728971405303415079934132710037826936173778980444968292764750946649"
		"017977587207096330286416692887910946555547851940402630657488671505820681908902000708383"
		"676273854845817711531764475730270069855571366959622842914819860834936475292719074168444"
		"365510704342711559699508093042880177904174497792",
		"0.0000000000000000000000000000000000000000000000000000000000000001e374",
	};
	char deep[2048];   /* 255 objects: 1536 bytes */

	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
		agree(valid[i], 1);
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		agree(invalid[i], 0);
	agree(NULL, 0);
	/* nesting: 255 levels, not 256, arrays or objects */
	for (size_t n = 250; n <= 260; n++) {
		memset(deep, '[', n);
		memset(deep + n, ']', n);
		deep[2 * n] = '\0';
		agree(deep, n <= 255);
	}
	strcpy(deep, "1");
	for (int i = 0; i < 255; i++) {
		memmove(deep + 5, deep, strlen(deep) + 1);
		memcpy(deep, "{\"k\":", 5);
		strcat(deep, "}");
	}
	agree(deep, 1);
}

/* Random texts per run; -DJSON_ROUNDS=N for a longer search by hand. */
#ifndef JSON_ROUNDS
#define JSON_ROUNDS 200000
#endif

/* Random texts built from JSON's tokens and near misses, and random edits
 * of valid texts: both checks must agree on every one (a fixed seed, so a
 * failure repeats). */
static void test_json_differential(void **state)
{
	static const char *const pieces[] = {
		"{", "}", "[", "]", ",", ":", "\"", "\"k\"", "\\", "\\u", "\\n", "d800", "dc00", "DFFF", "0", "1",
		"9", "-", ".", "e", "E", "+", "true", "false", "null", "tru", " ", "\n", "\t", "\r", "\f", "a",
		"\xc3\xa9", "\xff", "\xc3", "\x01", "\x7f", "1e308", "1.8e308", "00", "1e", "\"x\"", "[1,2]",
		"{\"a\":[]}", "1.5", "-0", "\xed\xa0\x80", "\xf0\x9f\x98\x80", "\\ud83d\\ude00", "/",
	};
	static const char *const seeds[] = {
		"{\"a\":[1,-2.5e+3,true,null],\"b\":{\"c\":\"d\\u00e9\\n\"}}", "[[[]],{},\"\",0]",
		"{\"s\":\"q\\\"b\\\\c\\u0001\\n\",\"u\":\"\xc3\xa9\",\"e\":\"\"}", "-12.5E-7",
	};
	const size_t npieces = sizeof(pieces) / sizeof(pieces[0]);
	uint64_t rng = 0x9e3779b97f4a7c15u;
	char text[512];
	int agreed_valid = 0;

#define NEXT() (rng = rng * 6364136223846793005u + 1442695040888963407u, (size_t)(rng >> 33))
	for (int round = 0; round < JSON_ROUNDS; round++) {
		size_t len = 0;

		if (round % 2) {
			for (size_t n = 1 + NEXT() % 12; n--;) {
				const char *p = pieces[NEXT() % npieces];

				if (len + strlen(p) >= sizeof(text))
					break;
				memcpy(text + len, p, strlen(p));
				len += strlen(p);
			}
			text[len] = '\0';
		} else {
			const char *s = seeds[NEXT() % (sizeof(seeds) / sizeof(seeds[0]))];

			strcpy(text, s);
			len = strlen(text);
			for (size_t edits = 1 + NEXT() % 3; edits-- && len > 0;) {
				size_t at = NEXT() % len;
				const char *p = pieces[NEXT() % npieces];

				switch (NEXT() % 3) {
				case 0:   /* delete a byte */
					memmove(text + at, text + at + 1, len - at);
					len--;
					break;
				case 1:   /* insert a piece */
					if (len + strlen(p) < sizeof(text)) {
						memmove(text + at + strlen(p), text + at, len - at + 1);
						memcpy(text + at, p, strlen(p));
						len += strlen(p);
					}
					break;
				default:  /* replace a byte */
					text[at] = p[0];
					break;
				}
			}
		}
		agree(text, -1);
		agreed_valid += tr2_json_check(text);
	}
#undef NEXT
	/* the texts are no trivial refusals: many are valid */
	assert_true(agreed_valid > 5000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha1_vectors),
		cmocka_unit_test(test_sha1_openssl),
		cmocka_unit_test(test_host_hash),
		cmocka_unit_test(test_sid_format),
		cmocka_unit_test(test_target_values),
		cmocka_unit_test(test_bool_values),
		cmocka_unit_test(test_json_cases),
		cmocka_unit_test(test_json_differential),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
