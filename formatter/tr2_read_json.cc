/* tr2_read_json.cc: tr2's JSON parsing, all of it through simdjson's On Demand
 * API: one EVENT line's top-level object flattened into C structs for
 * tr2-fmt's reader (tr2_read_json.h), and the check of data_json values for
 * the EVENT target (tr2_json_is_valid, tr2_json.h).  Built with
 * -fno-exceptions: simdjson reports through error codes, and an allocation
 * failure ends the program, as everywhere in tr2. */
#include <simdjson.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "tr2_read_json.h"
extern "C" {
#include "tr2_json.h"
}

using namespace simdjson;
using ondemand::json_type;

/* Levels of nesting (arrays and objects) allowed in an EVENT line and in a
 * data_json value (255, the limit data_json values have always had);
 * walk() recurses once per level. */
#define LINE_MAX_DEPTH 64
#define VALUE_MAX_DEPTH 255

/* parse()'s result for a line that is not UTF-8: take the slow path. */
#define NOT_UTF8 (-100)

struct tr2_jline {
	ondemand::parser parser;
	std::vector<char> buf;      /* the line as parsed, then SIMDJSON_PADDING bytes */
	size_t len;                 /* of the line in buf */
	bool mapped;                /* buf holds the slow path's mapping (tr2_read_json.h) */
	bool plain;                 /* not mapped, and no backslash: no string has an escape */
	/* Unescaped strings, each followed by a NUL: room for the worst case
	 * (the line's length), so that pointers into it stay valid while it
	 * fills; malloc'd, so that only the bytes used take memory. */
	char *text;
	size_t text_cap, text_len;
	/* The string arrays' vectors, one after the other, each NULL-ended, and
	 * where each begins, by field: the fields' strv point into them once
	 * the line is parsed (they move while they grow). */
	std::vector<char *> strv;
	std::vector<size_t> strv_len;
	std::vector<std::pair<size_t, size_t>> arrays;   /* (field, first element) */
	std::vector<tr2_jfield> fields;  /* nr_fields used; grown as needed */
	size_t nr_fields;
	char err[200];
	/* Memory grows with the bytes and values of the longest line, never
	 * with its worst case: about 3 bytes per byte of a line of long
	 * strings (the line read, its copy here, its line written). */
};

struct tr2_jline *tr2_jline_new(void)
{
	return new tr2_jline();
}

void tr2_jline_free(struct tr2_jline *j)
{
	if (j)
		free(j->text);
	delete j;
}

const char *tr2_jline_error(const struct tr2_jline *j)
{
	return j->err;
}

/* The end of the text from start to end without the whitespace after it. */
static const char *trim(const char *start, const char *end)
{
	while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
		end--;
	return end;
}

/* ---- the slow path for invalid UTF-8 ---- */

/* Is s the UTF-8 of U+10FF80..U+10FFFF, the code points bytes are mapped to? */
static bool is_mapped(const unsigned char *s)
{
	return s[0] == 0xf4 && s[1] == 0x8f && (s[2] & 0xfe) == 0xbe && (s[3] & 0xc0) == 0x80;
}

/* Rewrites buf (j->len bytes) with each byte that is not part of a valid
 * sequence of an unmapped code point as U+10FF00 + byte. */
/* The length of a sequence of a code point not mapped at s (0: s[0] is to be
 * mapped). */
static int unmapped_seq(const unsigned char *s)
{
	int n = s[0] < 0x80 ? 1 : tr2_utf8_seq(s);

	return n > 0 && !(n == 4 && is_mapped(s)) ? n : 0;
}

static void map_line(struct tr2_jline *j)
{
	const unsigned char *s = (const unsigned char *)j->buf.data();
	size_t o = 0, size = 0;

	/* the size first: a mapped byte takes 4 */
	for (size_t i = 0; i < j->len;) {
		int n = unmapped_seq(s + i);

		size += n ? (size_t)n : 4;
		i += n ? (size_t)n : 1;
	}
	std::vector<char> out(size + SIMDJSON_PADDING);

	for (size_t i = 0; i < j->len;) {
		/* buf[len] is NUL, so tr2_utf8_seq never reads past the line */
		int n = unmapped_seq(s + i);

		if (n) {
			memcpy(&out[o], s + i, (size_t)n);
			o += (size_t)n;
			i += (size_t)n;
		} else {
			out[o++] = (char)0xf4;
			out[o++] = (char)0x8f;
			out[o++] = (char)(0xbe | (s[i] >> 6 & 1));
			out[o++] = (char)(0x80 | (s[i] & 0x3f));
			i++;
		}
	}
	j->buf.swap(out);
	j->len = o;
	j->mapped = true;
}

/* Turns the mapped code points in s (n bytes) back into their bytes, in
 * place; NUL-terminates and returns the new length. */
static size_t unmap(char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		if (i + 4 <= n && is_mapped(u + i)) {
			s[o++] = (char)(0x80 | (u[i + 2] & 1) << 6 | (u[i + 3] & 0x3f));
			i += 4;
		} else {
			s[o++] = s[i++];
		}
	}
	s[o] = '\0';
	return o;
}

/* Column (from 1) in the line as given of offset off into buf. */
static size_t column(const struct tr2_jline *j, size_t off)
{
	size_t col = off + 1;

	if (j->mapped)
		for (size_t i = 0; i + 4 <= off; i++)
			if (is_mapped((const unsigned char *)j->buf.data() + i))
				col -= 3;
	return col;
}

/* ---- values ---- */

/* Checks and consumes v and everything in it: v is at nesting level depth
 * (0 for the document), and arrays and objects at max_depth or deeper are
 * refused. */
template <class V> static error_code walk(V &v, int depth, int max_depth)
{
	json_type t;
	error_code e = v.type().get(t);

	if (e)
		return e;
	if ((t == json_type::object || t == json_type::array) && depth >= max_depth)
		return DEPTH_ERROR;
	switch (t) {
	case json_type::object: {
		ondemand::object o;

		if ((e = v.get_object().get(o)))
			return e;
		for (auto it : o) {
			std::string_view k;

			if ((e = it.error()) || (e = it.value_unsafe().unescaped_key().get(k)) ||
			    (e = walk(it.value_unsafe().value(), depth + 1, max_depth)))
				return e;
		}
		return SUCCESS;
	}
	case json_type::array: {
		ondemand::array a;

		if ((e = v.get_array().get(a)))
			return e;
		for (auto it : a)
			if ((e = it.error()) || (e = walk(it.value_unsafe(), depth + 1, max_depth)))
				return e;
		return SUCCESS;
	}
	case json_type::string: {
		std::string_view s;

		return v.get_string().get(s);
	}
	case json_type::number: {
		/* not get_number(), which refuses integers beyond 64 bits; as a
		 * double, only magnitudes beyond DBL_MAX (1e309) and exponents
		 * of more than 19 digits are refused */
		double d;

		return v.get_double().get(d);
	}
	case json_type::boolean: {
		bool b;

		return v.get_bool().get(b);
	}
	case json_type::null: {
		bool is_null = false;

		if ((e = v.is_null().get(is_null)))
			return e;
		return is_null ? SUCCESS : N_ATOM_ERROR;
	}
	}
	return TAPE_ERROR;
}

/* Consumes the string v and copies it, unescaped, into j->text, NUL-terminated;
 * *nul is set when it holds a NUL byte ("\u0000"). */
static error_code copy_string(struct tr2_jline *j, ondemand::value &v, char **out, size_t *len, bool *nul)
{
	std::string_view s;
	error_code e = v.get_string().get(s);

	if (e)
		return e;
	*out = j->text + j->text_len;
	*len = s.size();
	memcpy(*out, s.data(), s.size());
	(*out)[s.size()] = '\0';
	j->text_len += s.size() + 1;
	*nul |= memchr(s.data(), '\0', s.size()) != NULL;
	return SUCCESS;
}

/*
 * Consumes a string of the top-level object, whose token (text and spaces)
 * is given.  On a plain line the string is the text between its quotes,
 * byte for byte (simdjson checked UTF-8 and control bytes for the whole line
 * first), and is left in the line buffer: tr2_jline_parse() puts its NUL in
 * place of the closing quote once the line is parsed.  This saves copying
 * most of a line's bytes; the top-level strings are what EVENT lines are made
 * of.
 */
static error_code top_string(struct tr2_jline *j, ondemand::value &v, std::string_view token, struct tr2_jval *out)
{
	const char *text = token.data() + 1, *end = trim(text, token.data() + token.size()) - 1;
	ondemand::raw_json_string raw;

	if (!j->plain)
		return copy_string(j, v, &out->text, &out->len, &out->nul);
	out->text = (char *)text;
	out->len = (size_t)(end - text);
	out->in_place = true;
	return v.get_raw_json_string().get(raw);
}

/* A top-level array, of field number field: its strings go to j->strv when
 * they all are strings (out->strv is set once the line is parsed). */
static error_code flatten_array(struct tr2_jline *j, ondemand::value &v, size_t field, struct tr2_jval *out)
{
	ondemand::array a;
	size_t first = j->strv.size();
	bool all_strings = true;
	error_code e = v.get_array().get(a);

	if (e)
		return e;
	for (auto it : a) {
		ondemand::value x;
		json_type t;

		if ((e = it.error()))
			return e;
		x = it.value_unsafe();
		if ((e = x.type().get(t)))
			return e;
		if (t == json_type::string) {
			char *str;
			size_t len;

			e = copy_string(j, x, &str, &len, &out->nul);
			j->strv.push_back(str);
			j->strv_len.push_back(len);
		} else {
			all_strings = false;
			e = walk(x, 2, LINE_MAX_DEPTH);
		}
		if (e)
			return e;
		out->n++;
	}
	if (all_strings) {
		j->arrays.emplace_back(field, first);
		j->strv.push_back(NULL);
		j->strv_len.push_back(0);
	}
	return SUCCESS;
}

/* Flattens one value of the top-level object, whose first token (and the
 * spaces after it) is given, into *out and consumes it. */
static error_code flatten(struct tr2_jline *j, ondemand::document &doc, ondemand::value &v,
			  std::string_view token, size_t field, struct tr2_jval *out)
{
	const char *start = token.data(), *end = start + token.size();
	ondemand::number n;
	json_type t;
	error_code e = v.type().get(t);

	/* what every type sets, without clearing the whole struct */
	out->nul = out->big = out->in_place = false;
	out->strv = NULL;
	out->n = 0;
	if (e)
		return e;
	switch (t) {
	case json_type::object:
		out->type = TR2_J_OBJECT;
		e = walk(v, 1, LINE_MAX_DEPTH);
		break;
	case json_type::array:
		out->type = TR2_J_ARRAY;
		e = flatten_array(j, v, field, out);
		break;
	case json_type::string:
		out->type = TR2_J_STRING;
		e = top_string(j, v, token, out);
		break;
	case json_type::number:
		if ((e = v.get_number().get(n)))
			break;
		if (n.is_double()) {
			out->type = TR2_J_DOUBLE;
			out->d = n.get_double();
		} else {
			out->type = TR2_J_INT;
			out->big = !n.is_int64();
			out->i = out->big ? 0 : n.get_int64();
		}
		break;
	case json_type::boolean:
		out->type = TR2_J_BOOL;
		e = v.get_bool().get(out->b);
		break;
	case json_type::null:
		out->type = TR2_J_NULL;
		e = walk(v, 1, LINE_MAX_DEPTH);
		break;
	}
	if (e || t == json_type::string)
		return e;
	/* an object's or array's text ends where the next token (',' or '}') begins */
	if ((t == json_type::object || t == json_type::array) && doc.current_location().get(end))
		end = j->buf.data() + j->len;
	end = trim(start, end);
	out->text = (char *)start;
	out->len = (size_t)(end - start);
	return SUCCESS;
}

/* ---- one line ---- */

static long fail(struct tr2_jline *j, ondemand::document *doc, error_code e)
{
	const char *at = NULL;

	if (e == UNCLOSED_STRING) {
		snprintf(j->err, sizeof(j->err), "truncated JSON");
	} else if (e == INCOMPLETE_ARRAY_OR_OBJECT) {
		/* simdjson checks first that the last token is the root's '}' */
		snprintf(j->err, sizeof(j->err), "truncated JSON, or text after the object");
	} else if (doc && !doc->current_location().get(at)) {
		snprintf(j->err, sizeof(j->err), "invalid JSON at column %zu: %s",
			 column(j, (size_t)(at - j->buf.data())), error_message(e));
	} else {
		snprintf(j->err, sizeof(j->err), "invalid JSON: %s", error_message(e));
	}
	return TR2_J_EJSON;
}

/* Parses buf; the fields go to j->fields. */
static long parse(struct tr2_jline *j)
{
	ondemand::document doc;
	ondemand::object obj;
	const char *at;
	json_type t;
	error_code e;

	j->nr_fields = 0;
	j->text_len = 0;
	j->strv.clear();
	j->strv_len.clear();
	j->arrays.clear();
	/* every string, NUL included, is shorter than its JSON form */
	if (j->text_cap < j->len + 1) {
		free(j->text);
		j->text_cap = j->len + 1;
		j->text = (char *)malloc(j->text_cap);
		if (!j->text)
			abort();
	}

	if ((e = j->parser.iterate(j->buf.data(), j->len, j->buf.size()).get(doc)))
		return e == UTF8_ERROR ? NOT_UTF8 : fail(j, NULL, e);
	if ((e = doc.type().get(t)))
		return fail(j, &doc, e);
	if (t != json_type::object) {
		e = walk(doc, 0, LINE_MAX_DEPTH);
		if (!e && !doc.current_location().get(at))
			e = TRAILING_CONTENT;
		return e ? fail(j, &doc, e) : TR2_J_ENOTOBJ;
	}
	if ((e = doc.get_object().get(obj)))
		return fail(j, &doc, e);
	for (auto it : obj) {
		std::string_view token, key;

		if (j->nr_fields == j->fields.size())
			j->fields.resize(j->fields.size() * 2 + 16);
		struct tr2_jfield &f = j->fields[j->nr_fields];

		if ((e = it.error()))
			return fail(j, &doc, e);
		/* the value's first token, and spaces; the view consumes nothing */
		token = it.value_unsafe().value().raw_json_token();
		if (j->plain) {
			/* the key is the text between its quotes: "key" : value,
			 * as simdjson has checked, so its closing quote is found
			 * going back from the value over spaces and the colon */
			const char *k = (const char *)it.value_unsafe().key().raw(), *q = token.data() - 1;

			while (*q != '"')
				q--;
			key = std::string_view(k, (size_t)(q - k));
		} else if ((e = it.value_unsafe().unescaped_key().get(key))) {
			/* in simdjson's string buffer, valid until the next parse */
			return fail(j, &doc, e);
		}
		if ((e = flatten(j, doc, it.value_unsafe().value(), token, j->nr_fields, &f.v)))
			return fail(j, &doc, e);
		f.key = key.data();
		f.key_len = key.size();
		j->nr_fields++;
	}
	if (!doc.current_location().get(at))
		return fail(j, &doc, TRAILING_CONTENT);
	return (long)j->nr_fields;
}

long tr2_jline_parse(struct tr2_jline *j, const char *line, size_t len, struct tr2_jfield **out)
{
	long n;

	if (j->buf.size() < len + SIMDJSON_PADDING)
		j->buf.resize(len + SIMDJSON_PADDING);
	memcpy(j->buf.data(), line, len);
	j->buf[len] = '\0';
	j->len = len;
	j->mapped = false;
	j->plain = !memchr(line, '\\', len);
	j->err[0] = '\0';
	n = parse(j);
	if (n == NOT_UTF8) {
		map_line(j);
		j->plain = false;
		n = parse(j);
		if (n == NOT_UTF8)
			n = fail(j, NULL, UTF8_ERROR);   /* cannot happen: the mapping is UTF-8 */
	}
	if (n < 0)
		return n;
	for (auto &a : j->arrays) {
		j->fields[a.first].v.strv = &j->strv[a.second];
		j->fields[a.first].v.strv_len = &j->strv_len[a.second];
	}

	/* The whole line is parsed: the byte after each raw text or string left
	 * in the line (a ',', '}', space or closing quote) is no longer needed,
	 * and becomes its NUL. */
	for (long i = 0; i < n; i++) {
		struct tr2_jfield &f = j->fields[i];

		if (f.v.type != TR2_J_STRING || f.v.in_place)
			f.v.text[f.v.len] = '\0';
		if (!j->mapped)
			continue;
		f.v.len = unmap(f.v.text, f.v.len);
		for (size_t k = 0; f.v.strv && k < f.v.n; k++)
			f.v.strv_len[k] = unmap(f.v.strv[k], f.v.strv_len[k]);
	}
	*out = j->fields.data();
	return n;
}

/* ---- data_json values ---- */

bool tr2_json_is_valid(const char *text)
{
	/* one parser and buffer per thread, grown to the longest value seen */
	struct validator {
		ondemand::parser parser;
		std::vector<char> buf;
	};
	static thread_local validator v;
	ondemand::document doc;
	ondemand::array a;
	const char *at;
	size_t len, n = 0;

	if (!text)
		return false;
	/*
	 * The text is parsed as the one element of an array, [text]: simdjson
	 * 3.0 parses a document that is one scalar through a path of its own,
	 * which lets "falses" and "nullx " through; an element goes through
	 * the path every EVENT line's values take.
	 */
	len = strlen(text);
	if (v.buf.size() < len + 3 + SIMDJSON_PADDING)
		v.buf.resize(len + 3 + SIMDJSON_PADDING);
	v.buf[0] = '[';
	memcpy(&v.buf[1], text, len);
	memcpy(&v.buf[len + 1], "]", 2);
	/* iterate() checks UTF-8, and control bytes in strings, for the whole text */
	if (v.parser.iterate(v.buf.data(), len + 2, v.buf.size()).get(doc) || doc.get_array().get(a))
		return false;
	for (auto it : a)
		if (it.error() || ++n > 1 || walk(it.value_unsafe(), 1, VALUE_MAX_DEPTH + 1))
			return false;
	/* one element, and nothing after the array ("1],[2" makes [1],[2]) */
	return n == 1 && doc.current_location().get(at) != SUCCESS;
}
