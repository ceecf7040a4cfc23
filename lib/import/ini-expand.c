/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * ini_expand(): Python's "%" operator with a mapping, as supervisord
 * expands %(name)s in its values (see ini.c's top for where we differ).
 */

#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "ini-int.h"
#include "log.h"
#include "xmalloc.h"

#define INI_WIDTH_MAX 65536

/* One conversion of ini_expand(): "%(key)" flags width .prec conv. */
struct ini_spec {
	const char *key;
	size_t keylen;
	const char *start; /* after ')' */
	const char *end;   /* after the conversion character */
	int ljust, sign, blank, alt, zero;
	long width; /* -1: none */
	long prec;  /* -1: none */
	char conv;
};

/* The length of a UTF-8 sequence starting with byte c (1 if invalid). */
static size_t
ini_utf8_len(unsigned char c)
{
	if (c >= 0xc2 && c <= 0xdf)
		return (2);
	if (c >= 0xe0 && c <= 0xef)
		return (3);
	if (c >= 0xf0 && c <= 0xf4)
		return (4);
	return (1);
}

/*
 * Decode the character at s (NUL-terminated): its code point, or
 * 0xdc00 + byte for a byte that does not start a valid sequence (as
 * Python's surrogateescape).  *n is set to its length in bytes.
 */
static uint32_t
ini_utf8_decode(const char *s, size_t *n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t k = ini_utf8_len(p[0]);

	*n = 1;
	if (k == 1 || ini_check_line(s, k) != NULL)
		return (p[0] < 0x80 ? p[0] : 0xdc00U + p[0]);
	*n = k;
	if (k == 2)
		return (((p[0] & 0x1fU) << 6) | (p[1] & 0x3fU));
	if (k == 3)
		return (((p[0] & 0x0fU) << 12) | ((p[1] & 0x3fU) << 6) |
		    (p[2] & 0x3fU));
	return (((p[0] & 0x07U) << 18) | ((p[1] & 0x3fU) << 12) |
	    ((p[2] & 0x3fU) << 6) | (p[3] & 0x3fU));
}

/* Is code point c one that Python's repr() escapes? */
static int
ini_unprintable(uint32_t c)
{
	return (c < 0x20 || (c >= 0x7f && c <= 0xa0) || c == 0xad ||
	    c == 0x1680 || (c >= 0x2000 && c <= 0x200f) ||
	    (c >= 0x2028 && c <= 0x202f) || (c >= 0x205f && c <= 0x206f) ||
	    c == 0x3000 || (c >= 0xd800 && c <= 0xf8ff) || c == 0xfeff ||
	    (c >= 0xfff9 && c <= 0xfffb) || c == 0xfffe || c == 0xffff ||
	    c >= 0xf0000);
}

/* Append Python's repr() (or ascii(), if ascii) of the string s. */
static void
ini_repr(struct ini_buf *b, const char *s, int ascii)
{
	char quote, tmp[16];
	uint32_t c;
	size_t n;

	quote = strchr(s, '\'') != NULL && strchr(s, '"') == NULL ? '"' : '\'';
	ini_buf_add(b, &quote, 1);
	for (; *s != '\0'; s += n) {
		c = ini_utf8_decode(s, &n);
		if (c == '\\' || c == (uint32_t)quote)
			snprintf(tmp, sizeof tmp, "\\%c", (char)c);
		else if (c == '\t' || c == '\n' || c == '\r')
			snprintf(tmp, sizeof tmp, "\\%c",
			    c == '\t' ? 't' : (c == '\n' ? 'n' : 'r'));
		else if (!ini_unprintable(c) && (c < 0x80 || !ascii)) {
			ini_buf_add(b, s, n);
			continue;
		} else if (c < 0x100)
			snprintf(tmp, sizeof tmp, "\\x%02x", (unsigned)c);
		else if (c < 0x10000)
			snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)c);
		else
			snprintf(tmp, sizeof tmp, "\\U%08x", (unsigned)c);
		ini_buf_add(b, tmp, strlen(tmp));
	}
	ini_buf_add(b, &quote, 1);
}

/* The number of characters of s, counted as ini_utf8_decode() does. */
static size_t
ini_chars(const char *s, size_t len, size_t max, size_t *bytes)
{
	size_t n = 0, k, i = 0;

	while (i < len && n < max) {
		(void)ini_utf8_decode(s + i, &k);
		i += k;
		n++;
	}
	*bytes = i;
	return (n);
}

/* Append s, cut to the precision (s, r, a) and padded to the width. */
static void
ini_put_text(struct ini_buf *out, const struct ini_spec *sp, const char *s)
{
	size_t len, n, max = SIZE_MAX;

	if (sp->prec >= 0 && sp->conv != 'c')
		max = (size_t)sp->prec;
	n = ini_chars(s, strlen(s), max, &len);
	if (sp->width > 0 && (size_t)sp->width > n && !sp->ljust)
		ini_buf_fill(out, ' ', (size_t)sp->width - n);
	ini_buf_add(out, s, len);
	if (sp->width > 0 && (size_t)sp->width > n && sp->ljust)
		ini_buf_fill(out, ' ', (size_t)sp->width - n);
}

/* Python's integer formatting: %d %i %u %o %x %X with all the flags. */
static void
ini_put_int(struct ini_buf *out, const struct ini_spec *sp, long long v)
{
	const char *digits =
	    sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[72], *d = tmp + sizeof tmp, sign[2] = { 0, 0 }, prefix[3];
	unsigned long long u;
	unsigned base;
	size_t nd, total, zeros = 0, width;

	base = sp->conv == 'o'                   ? 8 :
	    (sp->conv == 'x' || sp->conv == 'X') ? 16 :
	                                           10;
	u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		*--d = digits[u % base];
		u /= base;
	} while (u != 0);
	nd = (size_t)(tmp + sizeof tmp - d);
	if (sp->prec > 0 && (size_t)sp->prec > nd)
		zeros = (size_t)sp->prec - nd;
	if (v < 0 || sp->sign || sp->blank)
		sign[0] = v < 0 ? '-' : (sp->sign ? '+' : ' ');
	prefix[0] = '\0';
	if (sp->alt && base != 10)
		snprintf(
		    prefix, sizeof prefix, "0%c", base == 8 ? 'o' : sp->conv);
	total = strlen(sign) + strlen(prefix) + zeros + nd;
	width = sp->width > 0 && (size_t)sp->width > total ?
	    (size_t)sp->width - total :
	    0;
	if (!sp->ljust && !sp->zero)
		ini_buf_fill(out, ' ', width);
	ini_buf_add(out, sign, strlen(sign));
	ini_buf_add(out, prefix, strlen(prefix));
	if (!sp->ljust && sp->zero)
		zeros += width;
	ini_buf_fill(out, '0', zeros);
	ini_buf_add(out, d, nd);
	if (sp->ljust)
		ini_buf_fill(out, ' ', width);
}

/*
 * The format is built from the flags checked by ini_spec_parse(), so the
 * compiler cannot check it.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
/* %e %E %f %F %g %G of a number: Python's float(v), formatted as C does. */
static void
ini_put_float(struct ini_buf *out, const struct ini_spec *sp, long long v)
{
	char fmt[32], *s;
	int n;

	snprintf(fmt, sizeof fmt, "%%%s%s%s%s%s*.*%c", sp->ljust ? "-" : "",
	    sp->sign ? "+" : "", sp->blank ? " " : "", sp->alt ? "#" : "",
	    sp->zero ? "0" : "", sp->conv);
	n = snprintf(NULL, 0, fmt, (int)(sp->width < 0 ? 0 : sp->width),
	    (int)(sp->prec < 0 ? 6 : sp->prec), (double)v);
	if (n < 0)
		fatalx("%s: snprintf", __func__);
	s = xmalloc((size_t)n + 1);
	snprintf(s, (size_t)n + 1, fmt, (int)(sp->width < 0 ? 0 : sp->width),
	    (int)(sp->prec < 0 ? 6 : sp->prec), (double)v);
	ini_buf_add(out, s, (size_t)n);
	free(s);
}

#pragma GCC diagnostic pop

/* Append chr(v) for %c of a number, or fail. */
static int
ini_put_char(
    struct ini_buf *out, const struct ini_spec *sp, long long v, char **cause)
{
	char s[5];
	uint32_t c;

	if (v <= 0 || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return (ini_fail(cause, "%%(%.*s)c: %lld is not a character",
		    (int)sp->keylen, sp->key, v));
	c = (uint32_t)v;
	if (c < 0x80) {
		s[0] = (char)c;
		s[1] = '\0';
	} else if (c < 0x800) {
		s[0] = (char)(0xc0 | (c >> 6));
		s[1] = (char)(0x80 | (c & 0x3f));
		s[2] = '\0';
	} else if (c < 0x10000) {
		s[0] = (char)(0xe0 | (c >> 12));
		s[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		s[2] = (char)(0x80 | (c & 0x3f));
		s[3] = '\0';
	} else {
		s[0] = (char)(0xf0 | (c >> 18));
		s[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		s[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		s[3] = (char)(0x80 | (c & 0x3f));
		s[4] = '\0';
	}
	ini_put_text(out, sp, s);
	return (0);
}

/* Append the marker of an INI_VAR_MARK: the conversion in hex. */
static void
ini_put_mark(struct ini_buf *out, const struct ini_spec *sp)
{
	const char *p;
	char hex[3];

	ini_buf_add(out, INI_MARK_OPEN, strlen(INI_MARK_OPEN));
	for (p = sp->start; p < sp->end; p++) {
		snprintf(hex, sizeof hex, "%02x", (unsigned char)*p);
		ini_buf_add(out, hex, 2);
	}
	ini_buf_add(out, INI_MARK_CLOSE, strlen(INI_MARK_CLOSE));
}

/* Format a string variable. */
static int
ini_put_string(
    struct ini_buf *out, const struct ini_spec *sp, const char *s, char **cause)
{
	struct ini_buf r = { NULL, 0, 0 };
	size_t k;

	if (s == NULL)
		s = "";
	switch (sp->conv) {
	case 's':
		ini_put_text(out, sp, s);
		return (0);
	case 'r':
	case 'a':
		ini_repr(&r, s, sp->conv == 'a');
		ini_put_text(out, sp, r.p);
		free(r.p);
		return (0);
	case 'c':
		if (*s != '\0')
			(void)ini_utf8_decode(s, &k);
		if (*s == '\0' || s[k] != '\0')
			return (ini_fail(cause,
			    "%%(%.*s)c: format requires a number or a "
			    "character",
			    (int)sp->keylen, sp->key));
		ini_put_text(out, sp, s);
		return (0);
	default:
		return (ini_fail(cause, "%%(%.*s)%c: format requires a number",
		    (int)sp->keylen, sp->key, sp->conv));
	}
}

/* Format a number variable. */
static int
ini_put_number(
    struct ini_buf *out, const struct ini_spec *sp, long long v, char **cause)
{
	char s[32];

	switch (sp->conv) {
	case 'd':
	case 'i':
	case 'u':
	case 'o':
	case 'x':
	case 'X':
		ini_put_int(out, sp, v);
		return (0);
	case 'e':
	case 'E':
	case 'f':
	case 'F':
	case 'g':
	case 'G':
		ini_put_float(out, sp, v);
		return (0);
	case 'c':
		return (ini_put_char(out, sp, v, cause));
	default:
		snprintf(s, sizeof s, "%lld", v);
		ini_put_text(out, sp, s);
		return (0);
	}
}

/* Read decimal digits into *v; fail with what if over INI_WIDTH_MAX. */
static int
ini_spec_number(const char **pp, long *v, const char *what, char **cause)
{
	const char *p = *pp;

	*v = 0;
	while (*p >= '0' && *p <= '9') {
		*v = *v * 10 + (*p++ - '0');
		if (*v > INI_WIDTH_MAX)
			return (ini_fail(cause, "%s too big (over %d)", what,
			    INI_WIDTH_MAX));
	}
	*pp = p;
	return (0);
}

/* Parse what follows "%(key)": flags, width, precision, conversion. */
static int
ini_spec_parse(struct ini_spec *sp, const char *p, char **cause)
{
	sp->start = p;
	for (;; p++) {
		if (*p == '-')
			sp->ljust = 1;
		else if (*p == '+')
			sp->sign = 1;
		else if (*p == ' ')
			sp->blank = 1;
		else if (*p == '#')
			sp->alt = 1;
		else if (*p == '0')
			sp->zero = 1;
		else
			break;
	}
	sp->width = sp->prec = -1;
	if (*p == '*')
		return (ini_fail(cause, "%%(%.*s)*: '*' is not supported",
		    (int)sp->keylen, sp->key));
	if (*p >= '0' && *p <= '9' &&
	    ini_spec_number(&p, &sp->width, "width", cause) != 0)
		return (-1);
	if (*p == '.') {
		p++;
		if (*p == '*')
			return (
			    ini_fail(cause, "%%(%.*s).*: '*' is not supported",
			        (int)sp->keylen, sp->key));
		if (ini_spec_number(&p, &sp->prec, "precision", cause) != 0)
			return (-1);
	}
	if (*p == 'h' || *p == 'l' || *p == 'L')
		p++;
	if (*p == '\0')
		return (ini_fail(cause, "incomplete format"));
	sp->conv = *p++;
	sp->end = p;
	return (0);
}

/* Sort variables by name, then by position (the last one wins). */
static int
ini_cmp_var(const void *a, const void *b)
{
	const struct ini_var *x = *(const struct ini_var *const *)a;
	const struct ini_var *y = *(const struct ini_var *const *)b;
	int c;

	if ((c = strcmp(x->name, y->name)) != 0)
		return (c);
	return (x < y ? -1 : x > y);
}

/* The variable called key (keylen bytes) in sorted, or NULL. */
static const struct ini_var *
ini_var_find(
    const struct ini_var **sorted, size_t n, const char *key, size_t keylen)
{
	size_t lo = 0, hi = n, mid;
	int c;

	/* The first name greater than key; the one before may match. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strncmp(sorted[mid]->name, key, keylen);
		if (c < 0 || (c == 0 && sorted[mid]->name[keylen] == '\0'))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && strncmp(sorted[lo - 1]->name, key, keylen) == 0 &&
	    sorted[lo - 1]->name[keylen] == '\0')
		return (sorted[lo - 1]);
	return (NULL);
}

/*
 * The error for an unknown name, with the known ones listed; the ENV_X of
 * the environment, which can be hundreds, as one entry.
 */
static int
ini_unknown(const char *key, size_t keylen, const struct ini_var **sorted,
    size_t n, char **cause)
{
	static const char env[] = "ENV_X for each environment variable X";
	struct ini_buf b = { NULL, 0, 0 };
	size_t i;
	int rc, nenv = 0;

	for (i = 0; i < n; i++) {
		if (i + 1 < n &&
		    strcmp(sorted[i]->name, sorted[i + 1]->name) == 0)
			continue;
		if (strncmp(sorted[i]->name, "ENV_", 4) == 0 && nenv++ > 0)
			continue;
		if (b.len > 0)
			ini_buf_add(&b, ", ", 2);
		if (strncmp(sorted[i]->name, "ENV_", 4) == 0)
			ini_buf_add(&b, env, sizeof env - 1);
		else
			ini_buf_add(
			    &b, sorted[i]->name, strlen(sorted[i]->name));
	}
	rc = ini_fail(cause, "%%(%.*s)s: unknown name (known: %s)", (int)keylen,
	    key, b.len > 0 ? b.p : "none");
	free(b.p);
	return (rc);
}

/*
 * One "%(key)..." at p: append its expansion, move *pp past it and count
 * a marker in *marks.
 */
static int
ini_expand_one(struct ini_buf *out, const char **pp,
    const struct ini_var **sorted, size_t n, int *marks, char **cause)
{
	struct ini_spec sp;
	const struct ini_var *var;
	const char *p = *pp + 2;
	int depth = 1;

	memset(&sp, 0, sizeof sp);
	sp.key = p;
	/* Python skips over balanced parentheses in the key. */
	for (; *p != '\0' && depth > 0; p++)
		depth += *p == '(' ? 1 : (*p == ')' ? -1 : 0);
	if (depth > 0)
		return (ini_fail(cause, "incomplete format key"));
	sp.keylen = (size_t)(p - 1 - sp.key);
	if ((var = ini_var_find(sorted, n, sp.key, sp.keylen)) == NULL)
		return (ini_unknown(sp.key, sp.keylen, sorted, n, cause));
	if (ini_spec_parse(&sp, p, cause) != 0)
		return (-1);
	*pp = sp.end;
	if (strchr("diuoxXeEfFgGcsra", sp.conv) == NULL)
		return (ini_fail(cause,
		    "%%(%.*s)%c: unsupported format character '%c' (0x%x)",
		    (int)sp.keylen, sp.key, sp.conv, sp.conv,
		    (unsigned char)sp.conv));
	switch (var->kind) {
	case INI_VAR_MARK:
		ini_put_mark(out, &sp);
		(*marks)++;
		return (0);
	case INI_VAR_NUMBER:
		return (ini_put_number(out, &sp, var->number, cause));
	default:
		return (ini_put_string(out, &sp, var->string, cause));
	}
}

/* The variables with a name, sorted for ini_var_find(). */
static const struct ini_var **
ini_vars_sort(const struct ini_var *vars, size_t nvars, size_t *n)
{
	const struct ini_var **sorted;
	size_t i;

	sorted = xreallocarray(NULL, nvars + 1, sizeof *sorted);
	*n = 0;
	for (i = 0; i < nvars; i++) {
		if (vars[i].name != NULL)
			sorted[(*n)++] = &vars[i];
	}
	qsort(sorted, *n, sizeof *sorted, ini_cmp_var);
	return (sorted);
}

/*
 * Python's value % vars; see ini.h.  Each '%' is looked at once and
 * inserted values are never scanned again, so this is linear.  The
 * caller frees the result, or *cause on failure.
 */
char *
ini_expand(
    const char *value, const struct ini_var *vars, size_t nvars, char **cause)
{
	struct ini_buf out = { NULL, 0, 0 };
	const struct ini_var **sorted;
	const char *p = value, *q;
	size_t n;
	int rc = 0, marks = 0;

	sorted = ini_vars_sort(vars, nvars, &n);
	ini_buf_add(&out, "", 0);
	while (rc == 0 && (q = strchr(p, '%')) != NULL) {
		ini_buf_add(&out, p, (size_t)(q - p));
		if (q[1] == '%') {
			ini_buf_add(&out, "%", 1);
			p = q + 2;
		} else if (q[1] == '\0')
			rc = ini_fail(cause, "incomplete format");
		else if (q[1] != '(')
			rc = ini_fail(cause,
			    "'%%%c' at offset %zu: unsupported, only %%(name) "
			    "and %%%% are",
			    q[1], (size_t)(q - value));
		else {
			p = q;
			rc = ini_expand_one(&out, &p, sorted, n, &marks, cause);
		}
	}
	free(sorted);
	if (rc != 0) {
		free(out.p);
		return (NULL);
	}
	ini_buf_add(&out, p, strlen(p));
	/* Every marker in the result must be one we put there. */
	for (q = out.p; (q = strstr(q, INI_MARK_OPEN)) != NULL; q++)
		marks--;
	if (marks < 0) {
		free(out.p);
		ini_fail(cause,
		    "the text \"%s\" is reserved for vigil's markers",
		    INI_MARK_OPEN);
		return (NULL);
	}
	return (out.p);
}
