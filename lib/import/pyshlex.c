/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Python's shlex, as supervisord uses it, so that a job converted from a
 * supervisord config splits exactly as supervisord would split it.  Two
 * lexers are here: the POSIX one of shlex.split() (whitespace_split, no
 * comments) for commands, and the non-POSIX one with extra word characters
 * behind supervisor.datatypes.dict_of_key_value_pairs() for environments.
 * Both follow shlex.read_token() of Python 3.11 state by state; the comments
 * name the Python behaviour each branch copies.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pyshlex.h"
#include "words.h"
#include "xmalloc.h"

/* Python's complaints, word for word. */
#define PYSHLEX_NOCLOSE "No closing quotation"
#define PYSHLEX_NOESCAPE "No escaped character"

/* A growing NULL-terminated array of owned strings. */
struct pyshlex_vec {
	char **v;
	size_t n;
	size_t alloc;
};

/* The token being built. */
struct pyshlex_buf {
	char *s;
	size_t len;
	size_t alloc;
};

/* Append len bytes at p to the token. */
static void
pyshlex_put(struct pyshlex_buf *b, const char *p, size_t len)
{
	while (b->s == NULL || b->len + len >= b->alloc) {
		b->alloc = b->alloc == 0 ? 32 : b->alloc * 2;
		b->s = xreallocarray(b->s, b->alloc, 1);
	}
	memcpy(b->s + b->len, p, len);
	b->len += len;
	b->s[b->len] = '\0';
}

/* Add the owned string s to the array. */
static void
pyshlex_add(struct pyshlex_vec *vec, char *s)
{
	if (vec->n + 2 > vec->alloc) {
		vec->alloc = vec->alloc == 0 ? 8 : vec->alloc * 2;
		vec->v = xreallocarray(vec->v, vec->alloc, sizeof *vec->v);
	}
	vec->v[vec->n++] = s;
	vec->v[vec->n] = NULL;
}

/* Move the token, even an empty one, into the array. */
static void
pyshlex_emit(struct pyshlex_vec *vec, struct pyshlex_buf *b)
{
	pyshlex_add(vec, xstrndup(b->s == NULL ? "" : b->s, b->len));
	b->len = 0;
}

/* Python's shlex whitespace (not \v or \f). */
static int
pyshlex_is_space(char c)
{
	return (c == ' ' || c == '\t' || c == '\r' || c == '\n');
}

/*
 * Read a double-quoted string of shlex.split() from just after the opening
 * quote.  Backslash escapes only " and itself and is kept before anything
 * else, as read_token's escape state does when escapedstate is a quote.
 * Returns a pointer past the closing quote, or NULL with *why set.
 */
static const char *
pyshlex_double(struct pyshlex_buf *b, const char *s, const char **why)
{
	for (; *s != '"'; s++) {
		if (*s == '\0') {
			*why = PYSHLEX_NOCLOSE;
			return (NULL);
		}
		if (*s != '\\') {
			pyshlex_put(b, s, 1);
			continue;
		}
		if (*++s == '\0') {
			*why = PYSHLEX_NOESCAPE;
			return (NULL);
		}
		if (*s != '"' && *s != '\\')
			pyshlex_put(b, "\\", 1);
		pyshlex_put(b, s, 1);
	}
	return (s + 1);
}

/*
 * One word of shlex.split() starting at s, which is not whitespace: every
 * character up to unquoted whitespace joins the word.  A word with a quoted
 * part is kept even if empty ("" gives ""), as read_token's "quoted" flag
 * does.  Returns a pointer past the word, or NULL with *why set.
 */
static const char *
pyshlex_word(struct pyshlex_buf *b, const char *s, const char **why)
{
	const char *end;

	while (*s != '\0' && !pyshlex_is_space(*s)) {
		switch (*s) {
		case '\'':
			/* No escapes at all inside single quotes. */
			if ((end = strchr(s + 1, '\'')) == NULL) {
				*why = PYSHLEX_NOCLOSE;
				return (NULL);
			}
			pyshlex_put(b, s + 1, end - s - 1);
			s = end + 1;
			break;
		case '"':
			if ((s = pyshlex_double(b, s + 1, why)) == NULL)
				return (NULL);
			break;
		case '\\':
			/* Any character, newline included, is taken as is. */
			if (*++s == '\0') {
				*why = PYSHLEX_NOESCAPE;
				return (NULL);
			}
			pyshlex_put(b, s++, 1);
			break;
		default:
			pyshlex_put(b, s++, 1);
			break;
		}
	}
	return (s);
}

/*
 * Split s as Python 3.11's shlex.split(s) does (posix=True,
 * whitespace_split=True, no comments).  Whitespace is space, tab, CR and
 * LF only; '#' is an ordinary character.  Outside quotes a backslash takes
 * the next character literally (a backslash-newline gives a newline); in
 * single quotes nothing is special; in double quotes a backslash escapes
 * only " and \ and is kept before any other character.  A quoted empty
 * string is an empty word.  Bytes are handled one at a time: every special
 * character is ASCII, so UTF-8 (even invalid UTF-8) passes through intact.
 *
 * Returns an owned NULL-terminated array (free it with words_free) and
 * stores the number of words in *n if n is not NULL; NULL s is taken as "".
 * On error returns NULL and, if cause is not NULL, an owned copy of
 * Python's message in *cause: "No closing quotation" or "No escaped
 * character".
 */
char **
pyshlex_split(const char *s, size_t *n, char **cause)
{
	struct pyshlex_vec vec;
	struct pyshlex_buf b;
	const char *why = NULL;

	memset(&vec, 0, sizeof vec);
	memset(&b, 0, sizeof b);
	if (s == NULL)
		s = "";
	for (;;) {
		while (pyshlex_is_space(*s))
			s++;
		if (*s == '\0')
			break;
		if ((s = pyshlex_word(&b, s, &why)) == NULL)
			goto fail;
		pyshlex_emit(&vec, &b);
	}
	free(b.s);
	if (vec.v == NULL)
		vec.v = xcalloc(1, sizeof *vec.v);
	if (n != NULL)
		*n = vec.n;
	return (vec.v);

fail:
	free(b.s);
	words_free(vec.v);
	if (cause != NULL)
		*cause = xstrdup(why);
	return (NULL);
}

/*
 * The length of the code point at s, as Python's strict UTF-8 decoder
 * sees it: a well-formed sequence is one unit, and a byte that does not
 * start one is a unit of its own (what errors="surrogateescape" gives).
 */
static size_t
pyshlex_unit(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return (1);
	if (p[0] < 0xe0)
		len = 2;
	else if (p[0] < 0xf0)
		len = 3;
	else
		len = 4;
	/* Table 3-7 of Unicode: no overlongs, surrogates or > U+10FFFF. */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return (1);
	if (len > 2 && (p[2] & 0xc0) != 0x80)
		return (1);
	if (len > 3 && (p[3] & 0xc0) != 0x80)
		return (1);
	return (len);
}

/*
 * Is c one of the word characters of dict_of_key_value_pairs' lexer?  In
 * non-POSIX mode shlex has only ASCII letters, digits and '_', and
 * supervisor adds "/.+-():".
 */
static int
pyshlex_is_wordchar(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') ||
	    (c != '\0' && strchr("_/.+-():", c) != NULL));
}

/* Skip a '#' comment: up to and including the next newline. */
static const char *
pyshlex_comment(const char *s)
{
	const char *nl;

	if ((nl = strchr(s, '\n')) == NULL)
		return (s + strlen(s));
	return (nl + 1);
}

/*
 * One token of the non-POSIX lexer starting at s, which is neither
 * whitespace nor a comment, into b.  Returns a pointer past it, or NULL
 * with *why set.
 */
static const char *
pyshlex_token(struct pyshlex_buf *b, const char *s, const char **why)
{
	const char *end;
	size_t len;

	if (*s == '\'' || *s == '"') {
		/* Quotes are kept; the token ends at the closing quote. */
		if ((end = strchr(s + 1, *s)) == NULL) {
			*why = PYSHLEX_NOCLOSE;
			return (NULL);
		}
		pyshlex_put(b, s, end - s + 1);
		return (end + 1);
	}
	if (!pyshlex_is_wordchar(*s)) {
		/* Any other code point is a token by itself. */
		len = pyshlex_unit(s);
		pyshlex_put(b, s, len);
		return (s + len);
	}
	/*
	 * A word goes on through word characters and quotes (taken literally)
	 * and across comments; anything else ends it, and whatever is not
	 * whitespace is read again as the next token (shlex pushes it back).
	 */
	for (;;) {
		if (*s == '#')
			s = pyshlex_comment(s + 1);
		else if (pyshlex_is_wordchar(*s) || *s == '\'' || *s == '"')
			pyshlex_put(b, s++, 1);
		else
			break;
	}
	return (s);
}

/* All tokens of dict_of_key_value_pairs' lexer; 0, or -1 with *why set. */
static int
pyshlex_tokens(struct pyshlex_vec *vec, const char *s, const char **why)
{
	struct pyshlex_buf b;

	memset(&b, 0, sizeof b);
	for (;;) {
		if (pyshlex_is_space(*s))
			s++;
		else if (*s == '#')
			s = pyshlex_comment(s + 1);
		else if (*s == '\0')
			break;
		else if ((s = pyshlex_token(&b, s, why)) == NULL) {
			free(b.s);
			return (-1);
		} else
			pyshlex_emit(vec, &b);
	}
	free(b.s);
	return (0);
}

/*
 * Store KEY=value in out, replacing the value of an earlier KEY in place
 * (a Python dict keeps the first position); keys holds the keys of out.
 * The value is stripped of all leading and trailing quotes, as
 * str.strip('\'"') does.
 */
static void
pyshlex_set(struct pyshlex_vec *keys, struct pyshlex_vec *out, const char *key,
    const char *value)
{
	size_t i, vlen = strlen(value);
	char *kv;

	while (vlen > 0 && (value[vlen - 1] == '\'' || value[vlen - 1] == '"'))
		vlen--;
	while (vlen > 0 && (*value == '\'' || *value == '"')) {
		value++;
		vlen--;
	}
	xasprintf(&kv, "%s=%.*s", key, (int)vlen, value);
	for (i = 0; i < keys->n; i++) {
		if (strcmp(keys->v[i], key) == 0) {
			free(out->v[i]);
			out->v[i] = kv;
			return;
		}
	}
	pyshlex_add(keys, xstrdup(key));
	pyshlex_add(out, kv);
}

/*
 * Parse s as supervisor 4.2.5's dict_of_key_value_pairs(s) does: a
 * non-POSIX Python shlex lexer (word characters ASCII letters, digits and
 * "_/.+-():", quotes kept in tokens, '#' comments to the end of the line,
 * any other code point a token by itself) whose tokens are taken four at a
 * time as KEY, "=", VALUE and a fourth token that is skipped whatever it
 * is (normally the comma).  Quotes around VALUE are stripped; KEY is kept
 * as it is.  UTF-8 is read one code point at a time; a byte of invalid
 * UTF-8 counts as one code point, as under errors="surrogateescape".
 *
 * Returns an owned NULL-terminated array of "KEY=value" strings (free it
 * with words_free) in first-seen order of the keys, a repeated KEY taking
 * its last value, and stores their number in *n if n is not NULL; NULL s
 * is taken as "".  On error returns NULL and, if cause is not NULL, an
 * owned message in *cause: "No closing quotation", or "Unexpected end of
 * key/value pairs in value 'S'" when a group is short or its second token
 * is not "=".
 */
char **
pyshlex_pairs(const char *s, size_t *n, char **cause)
{
	struct pyshlex_vec tok, keys, out;
	const char *why = NULL;
	size_t i;

	memset(&tok, 0, sizeof tok);
	memset(&keys, 0, sizeof keys);
	memset(&out, 0, sizeof out);
	if (s == NULL)
		s = "";
	if (pyshlex_tokens(&tok, s, &why) != 0) {
		if (cause != NULL)
			*cause = xstrdup(why);
		goto fail;
	}
	for (i = 0; i < tok.n; i += 4) {
		if (tok.n - i < 3 || strcmp(tok.v[i + 1], "=") != 0) {
			if (cause != NULL)
				xasprintf(cause,
				    "Unexpected end of key/value pairs in "
				    "value '%s'",
				    s);
			goto fail;
		}
		pyshlex_set(&keys, &out, tok.v[i], tok.v[i + 2]);
	}
	words_free(tok.v);
	words_free(keys.v);
	if (out.v == NULL)
		out.v = xcalloc(1, sizeof *out.v);
	if (n != NULL)
		*n = out.n;
	return (out.v);

fail:
	words_free(tok.v);
	words_free(keys.v);
	words_free(out.v);
	return (NULL);
}
