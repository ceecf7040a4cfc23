/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * supervisord's configuration files, read as supervisord 4.2.5 reads them
 * with Python 3.11's configparser.RawConfigParser(inline_comment_prefixes=
 * (';', '#'), strict=False): files are UTF-8 with universal newlines,
 * comments and values follow configparser's _read() line by line, the
 * main file's [include] globs are read in sorted order with %(here)s
 * replaced after each file, and ini_expand() is Python's "%" operator
 * with a mapping.
 *
 * Where we differ from Python, on purpose:
 * - a NUL byte is an error (Python would keep it in a value);
 * - option names are lowercased in ASCII only (str.lower() also lowers
 *   other letters);
 * - a file over INI_FILE_MAX bytes, or a width or precision over
 *   INI_WIDTH_MAX in ini_expand(), is an error;
 * - include globs use glob(3), where "[^...]" negates and "[[:alpha:]]"
 *   is a class (Python's fnmatch takes both literally);
 * - in ini_expand(), '%' must start "%(name)" or "%%" (Python would
 *   format the mapping itself); %r shows non-ASCII code points as they
 *   are, except the C1 controls, U+00AD and a few blank and format
 *   characters, where Python also escapes unassigned and private ones;
 *   %c of the number 0 is refused.
 * Python's whitespace (str.strip(), str.isspace() and \s) is handled in
 * full: ASCII \t\n\v\f\r, \x1c-\x1f and space, and U+0085, U+00A0,
 * U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F and U+3000.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ini.h"
#include "log.h"
#include "xmalloc.h"

#define INI_FILE_MAX (256 * 1024 * 1024)
#define INI_WIDTH_MAX 65536
#define INI_QUOTE_MAX 80
#define INI_HERE "%(here)s"

#define INI_NONE SIZE_MAX              /* no section, no option */
#define INI_SEC_DEFAULT (SIZE_MAX - 1) /* [DEFAULT] */
#define INI_SEC_NAMES (SIZE_MAX - 2)   /* the index of section names */

/* One slot of the index: a section name, or an option of a section. */
struct ini_slot {
	size_t sec; /* INI_SEC_NAMES, INI_SEC_DEFAULT or a section */
	size_t idx; /* the section or the entry; INI_NONE: empty slot */
	uint32_t hash;
};

/* Open addressing, at most half full, so that 10,000 jobs stay cheap. */
struct ini_index {
	struct ini_slot *slots;
	size_t cap;
	size_t used;
};

/* A growing string, always NUL-terminated once anything was added. */
struct ini_buf {
	char *p;
	size_t len;
	size_t cap;
};

/* The state of _read() for one file. */
struct ini_parse {
	struct ini *ini;
	const char *file;
	int lineno;
	size_t sec;    /* current section, or INI_NONE */
	size_t opt;    /* current option's entry, or INI_NONE */
	size_t indent; /* indent_level */
	struct ini_buf val;
};

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

static int ini_fail(char **, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Set *cause (if cause is not NULL) and return -1. */
static int
ini_fail(char **cause, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		fatal("%s: vasprintf", __func__);
	va_end(ap);
	if (cause != NULL)
		*cause = s;
	else
		free(s);
	return (-1);
}

/* Make room for element n of an array that only ever grows by one. */
static void *
ini_grow(void *arr, size_t n, size_t size)
{
	if (n == 0)
		return (xreallocarray(arr, 4, size));
	if (n >= 4 && (n & (n - 1)) == 0)
		return (xreallocarray(arr, n, 2 * size));
	return (arr);
}

/* Append n bytes of s to b. */
static void
ini_buf_add(struct ini_buf *b, const char *s, size_t n)
{
	size_t cap;

	if (b->cap - b->len <= n) {
		cap = b->cap < 64 ? 64 : b->cap;
		while (cap - b->len <= n)
			cap *= 2;
		b->p = xreallocarray(b->p, 1, cap);
		b->cap = cap;
	}
	if (n > 0)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* Append n copies of c to b. */
static void
ini_buf_fill(struct ini_buf *b, char c, size_t n)
{
	char chunk[64];
	size_t k;

	memset(chunk, c, sizeof chunk);
	ini_buf_add(b, "", 0);
	while (n > 0) {
		k = n < sizeof chunk ? n : sizeof chunk;
		ini_buf_add(b, chunk, k);
		n -= k;
	}
}

/* Byte length of the Python whitespace character at s, or 0. */
static size_t
ini_space_at(const char *s, const char *end)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = (size_t)(end - s);

	if (n == 0)
		return (0);
	if ((p[0] >= 0x09 && p[0] <= 0x0d) || (p[0] >= 0x1c && p[0] <= 0x20))
		return (1);
	if (n >= 2 && p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0))
		return (2);
	if (n < 3)
		return (0);
	if (p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80)
		return (3);
	if (p[0] == 0xe2 && p[1] == 0x80 &&
	    ((p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 || p[2] == 0xa9 ||
	        p[2] == 0xaf))
		return (3);
	if (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f)
		return (3);
	if (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80)
		return (3);
	return (0);
}

/*
 * Byte length of the whitespace character that ends at end, or 0.  The
 * text is valid UTF-8, so a lead byte found 2 or 3 bytes back starts a
 * character.
 */
static size_t
ini_space_before(const char *start, const char *end)
{
	size_t k;

	for (k = 1; k <= 3 && k <= (size_t)(end - start); k++) {
		if (ini_space_at(end - k, end) == k)
			return (k);
	}
	return (0);
}

/* Skip leading whitespace. */
static const char *
ini_lstrip(const char *p, const char *end)
{
	size_t k;

	while ((k = ini_space_at(p, end)) > 0)
		p += k;
	return (p);
}

/* The end of [start, end) without trailing whitespace. */
static const char *
ini_rstrip(const char *start, const char *end)
{
	size_t k;

	while ((k = ini_space_before(start, end)) > 0)
		end -= k;
	return (end);
}

/* FNV-1a of s, mixed with the section. */
static uint32_t
ini_hash(size_t sec, const char *s)
{
	uint32_t h = 2166136261U;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619U;
	h ^= (uint32_t)sec * 2654435761U;
	return (h ^ (h >> 16));
}

/* Section sec of ini: one of the sections, or [DEFAULT]. */
static struct ini_section *
ini_sect(struct ini *ini, size_t sec)
{
	return (sec == INI_SEC_DEFAULT ? &ini->defaults : &ini->sections[sec]);
}

/* The name a slot stands for. */
static const char *
ini_slot_name(struct ini *ini, const struct ini_slot *sl)
{
	if (sl->sec == INI_SEC_NAMES)
		return (ini->sections[sl->idx].name);
	return (ini_sect(ini, sl->sec)->entries[sl->idx].key);
}

/* The index of section name (sec INI_SEC_NAMES) or option, or INI_NONE. */
static size_t
ini_index_find(struct ini *ini, size_t sec, const char *name)
{
	struct ini_index *x = ini->index;
	struct ini_slot *sl;
	uint32_t h;
	size_t i;

	if (x == NULL)
		return (INI_NONE);
	h = ini_hash(sec, name);
	for (i = h & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		sl = &x->slots[i];
		if (sl->idx == INI_NONE)
			return (INI_NONE);
		if (sl->hash == h && sl->sec == sec &&
		    strcmp(ini_slot_name(ini, sl), name) == 0)
			return (sl->idx);
	}
}

/* Put a slot in the first free place of its chain. */
static void
ini_index_put(struct ini_index *x, const struct ini_slot *new)
{
	size_t i;

	for (i = new->hash &(x->cap - 1); x->slots[i].idx != INI_NONE;
	     i = (i + 1) & (x->cap - 1))
		continue;
	x->slots[i] = *new;
}

/* Record that name (of sec) is at idx; name must not be there yet. */
static void
ini_index_add(struct ini *ini, size_t sec, size_t idx, const char *name)
{
	struct ini_index *x;
	struct ini_slot *old, new;
	size_t i, oldcap;

	if (ini->index == NULL)
		ini->index = xcalloc(1, sizeof *ini->index);
	x = ini->index;
	if (2 * (x->used + 1) > x->cap) {
		old = x->slots;
		oldcap = x->cap;
		x->cap = oldcap == 0 ? 64 : 2 * oldcap;
		x->slots = xreallocarray(NULL, x->cap, sizeof *x->slots);
		for (i = 0; i < x->cap; i++)
			x->slots[i].idx = INI_NONE;
		for (i = 0; i < oldcap; i++) {
			if (old[i].idx != INI_NONE)
				ini_index_put(x, &old[i]);
		}
		free(old);
	}
	new.sec = sec;
	new.idx = idx;
	new.hash = ini_hash(sec, name);
	ini_index_put(x, &new);
	x->used++;
}

/* The section called name (which is taken), created if new. */
static size_t
ini_section_add(struct ini *ini, char *name, const char *file, int line)
{
	struct ini_section *s;
	size_t idx;

	if ((idx = ini_index_find(ini, INI_SEC_NAMES, name)) != INI_NONE) {
		free(name);
		return (idx);
	}
	ini->sections =
	    ini_grow(ini->sections, ini->nsections, sizeof *ini->sections);
	s = &ini->sections[ini->nsections];
	memset(s, 0, sizeof *s);
	s->name = name;
	s->file = file;
	s->line = line;
	ini_index_add(ini, INI_SEC_NAMES, ini->nsections, name);
	return (ini->nsections++);
}

/*
 * Option key (which is taken) of section sec, set from file:line: an
 * existing option keeps its place.  Returns the entry's index; its value
 * is left for the caller to set.
 */
static size_t
ini_entry_set(
    struct ini *ini, size_t sec, char *key, const char *file, int line)
{
	struct ini_section *s = ini_sect(ini, sec);
	struct ini_entry *e;
	size_t idx;

	if ((idx = ini_index_find(ini, sec, key)) != INI_NONE) {
		free(key);
		e = &s->entries[idx];
	} else {
		s->entries = ini_grow(s->entries, s->n, sizeof *s->entries);
		idx = s->n++;
		e = &s->entries[idx];
		e->key = key;
		e->value = NULL;
		ini_index_add(ini, sec, idx, key);
	}
	e->file = file;
	e->line = line;
	return (idx);
}

/*
 * Check a line as Python's UTF-8 decoder would: no overlong forms, no
 * surrogates, nothing above U+10FFFF; and no NUL.  Returns NULL or what
 * is wrong.
 */
static const char *
ini_check_line(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	unsigned char lo, hi;
	size_t k, i;

	while (p < end) {
		if (*p == 0)
			return ("NUL byte");
		if (*p < 0x80) {
			p++;
			continue;
		}
		lo = 0x80;
		hi = 0xbf;
		if (*p >= 0xc2 && *p <= 0xdf)
			k = 1;
		else if (*p >= 0xe0 && *p <= 0xef) {
			k = 2;
			if (*p == 0xe0)
				lo = 0xa0;
			else if (*p == 0xed)
				hi = 0x9f;
		} else if (*p >= 0xf0 && *p <= 0xf4) {
			k = 3;
			if (*p == 0xf0)
				lo = 0x90;
			else if (*p == 0xf4)
				hi = 0x8f;
		} else
			return ("invalid UTF-8");
		if ((size_t)(end - p) <= k || p[1] < lo || p[1] > hi)
			return ("invalid UTF-8");
		for (i = 2; i <= k; i++) {
			if (p[i] < 0x80 || p[i] > 0xbf)
				return ("invalid UTF-8");
		}
		p += k + 1;
	}
	return (NULL);
}

/* Does the comment prefix at line[i] count: at 0 or after whitespace? */
static int
ini_comment_at(const char *line, size_t i)
{
	return (i == 0 || ini_space_before(line, line + i) > 0);
}

/*
 * Where the comment of a line starts, or INI_NONE.  This is _read()'s
 * loop: each round looks at the next ';' and the next '#', and the first
 * round where one of them starts a comment decides, so a later qualifying
 * '#' can win over an earlier one found in a later round.
 */
static size_t
ini_comment(const char *line, size_t n)
{
	const char *first, *q;
	size_t pos[2] = { 0, 0 }, best, i;
	int live[2] = { 1, 1 };
	const char prefix[2] = { ';', '#' };

	first = ini_lstrip(line, line + n);
	if (first < line + n && (*first == ';' || *first == '#'))
		return (0);
	while (live[0] || live[1]) {
		best = INI_NONE;
		for (i = 0; i < 2; i++) {
			if (!live[i])
				continue;
			q = memchr(line + pos[i], prefix[i], n - pos[i]);
			if (q == NULL) {
				live[i] = 0;
				continue;
			}
			pos[i] = (size_t)(q - line) + 1;
			if (ini_comment_at(line, pos[i] - 1) &&
			    pos[i] - 1 < best)
				best = pos[i] - 1;
		}
		if (best != INI_NONE)
			return (best);
	}
	return (INI_NONE);
}

/* The indentation of a line in characters, as NONSPACECRE finds it. */
static size_t
ini_indent(const char *p, const char *end)
{
	size_t k, n = 0;

	while ((k = ini_space_at(p, end)) > 0) {
		p += k;
		n++;
	}
	return (n);
}

/* Quote (part of) a line for a message; the caller frees. */
static char *
ini_quote(const char *s, size_t n)
{
	struct ini_buf b = { NULL, 0, 0 };
	char hex[8];
	size_t i;

	ini_buf_add(&b, "'", 1);
	for (i = 0; i < n; i++) {
		if (i >= INI_QUOTE_MAX &&
		    ((unsigned char)s[i] & 0xc0) != 0x80) {
			ini_buf_add(&b, "...", 3);
			break;
		}
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			snprintf(
			    hex, sizeof hex, "\\x%02x", (unsigned char)s[i]);
			ini_buf_add(&b, hex, strlen(hex));
		} else
			ini_buf_add(&b, s + i, 1);
	}
	ini_buf_add(&b, "'", 1);
	return (b.p);
}

/* The value of the current option is complete: join and rstrip it. */
static void
ini_finish(struct ini_parse *ps)
{
	struct ini_entry *e;
	size_t len;

	if (ps->opt == INI_NONE)
		return;
	e = &ini_sect(ps->ini, ps->sec)->entries[ps->opt];
	len = ps->val.len;
	while (len > 0 && ps->val.p[len - 1] == '\n')
		len--;
	free(e->value);
	e->value = xstrndup(len == 0 ? "" : ps->val.p, len);
	ps->opt = INI_NONE;
	ps->val.len = 0;
}

/* A section header "[name]" (up to the last ']'); 0 if v is not one. */
static int
ini_header(struct ini_parse *ps, const char *v, const char *ve)
{
	struct ini *ini = ps->ini;
	const char *close;
	char *name;

	if (*v != '[' || ve - v < 3 ||
	    (close = memrchr(v, ']', (size_t)(ve - v))) == NULL ||
	    close < v + 2)
		return (0);
	ini_finish(ps);
	name = xstrndup(v + 1, (size_t)(close - v - 1));
	if (strcmp(name, "DEFAULT") == 0) {
		if (ini->defaults.name == NULL) {
			ini->defaults.name = name;
			ini->defaults.file = ps->file;
			ini->defaults.line = ps->lineno;
		} else
			free(name);
		ps->sec = INI_SEC_DEFAULT;
	} else
		ps->sec = ini_section_add(ini, name, ps->file, ps->lineno);
	return (1);
}

/* An option line "key = value" or "key: value", split at the first. */
static int
ini_option(struct ini_parse *ps, const char *v, const char *ve, char **cause)
{
	const char *d, *ke;
	char *key, *q;
	int rc;
	size_t i;

	for (d = v; d < ve && *d != '=' && *d != ':'; d++)
		continue;
	if (d == ve || (ke = ini_rstrip(v, d)) == v) {
		q = ini_quote(v, (size_t)(ve - v));
		rc = ini_fail(cause, "%s:%d: %s: %s", ps->file, ps->lineno,
		    d == ve ? "not a section header or option" :
		              "option without a name",
		    q);
		free(q);
		return (rc);
	}
	key = xstrndup(v, (size_t)(ke - v));
	for (i = 0; key[i] != '\0'; i++) {
		if (key[i] >= 'A' && key[i] <= 'Z')
			key[i] = (char)(key[i] - 'A' + 'a');
	}
	ini_finish(ps);
	ps->opt = ini_entry_set(ps->ini, ps->sec, key, ps->file, ps->lineno);
	d = ini_lstrip(d + 1, ve);
	ini_buf_add(&ps->val, d, (size_t)(ve - d));
	return (0);
}

/* One line of _read(), without its line break. */
static int
ini_parse_line(struct ini_parse *ps, const char *line, size_t n, char **cause)
{
	const char *v, *ve, *end = line + n;
	size_t cs, indent;

	cs = ini_comment(line, n);
	v = ini_lstrip(line, cs == INI_NONE ? end : line + cs);
	ve = ini_rstrip(v, cs == INI_NONE ? end : line + cs);
	if (v == ve) {
		/* An empty line belongs to the value, a comment does not. */
		if (cs == INI_NONE && ps->opt != INI_NONE)
			ini_buf_add(&ps->val, "\n", 1);
		return (0);
	}
	indent = ini_indent(line, end);
	if (ps->opt != INI_NONE && indent > ps->indent) {
		ini_buf_add(&ps->val, "\n", 1);
		ini_buf_add(&ps->val, v, (size_t)(ve - v));
		return (0);
	}
	ps->indent = indent;
	if (ini_header(ps, v, ve))
		return (0);
	if (ps->sec == INI_NONE)
		return (ini_fail(cause,
		    "%s:%d: option before the first section header", ps->file,
		    ps->lineno));
	return (ini_option(ps, v, ve, cause));
}

/* Add a file name to ini->files; returns the stored (borrowable) copy. */
static const char *
ini_add_file(struct ini *ini, const char *name)
{
	ini->files = ini_grow(ini->files, ini->nfiles, sizeof *ini->files);
	ini->files[ini->nfiles] = xstrdup(name);
	return (ini->files[ini->nfiles++]);
}

/* Add a note. */
static void
ini_add_note(struct ini *ini, char *note)
{
	ini->notes = ini_grow(ini->notes, ini->nnotes, sizeof *ini->notes);
	ini->notes[ini->nnotes++] = note;
}

/*
 * Parse len bytes at buf, called name, into ini; see ini.h.  The lines
 * end at "\n", "\r\n" or "\r", as Python's universal newlines.
 */
int
ini_parse_buffer(struct ini *ini, const char *name, const char *buf, size_t len,
    char **cause)
{
	struct ini_parse ps;
	const char *p = buf, *q, *end = buf + len, *bad;
	int rc = 0;

	memset(&ps, 0, sizeof ps);
	ps.ini = ini;
	ps.file = ini_add_file(ini, name);
	ps.sec = ps.opt = INI_NONE;
	while (p < end) {
		ps.lineno++;
		for (q = p; q < end && *q != '\n' && *q != '\r'; q++)
			continue;
		if ((bad = ini_check_line(p, (size_t)(q - p))) != NULL) {
			rc = ini_fail(
			    cause, "%s:%d: %s", ps.file, ps.lineno, bad);
			break;
		}
		if ((rc = ini_parse_line(&ps, p, (size_t)(q - p), cause)) != 0)
			break;
		if (q + 1 < end && q[0] == '\r' && q[1] == '\n')
			q++;
		p = q < end ? q + 1 : end;
	}
	if (rc == 0)
		ini_finish(&ps);
	free(ps.val.p);
	if (rc != 0)
		ini_clear(ini);
	return (rc);
}

/*
 * Read a whole file; -1 with errno set if it cannot be read.  With
 * regular, anything but a regular file (a FIFO, a device an [include]
 * glob matched) is refused with ENOTSUP (EISDIR for a directory) before a
 * byte is read: opening a FIFO does not wait for a writer, a device is
 * never read.
 */
static int
ini_read_file(const char *path, int regular, char **bufp, size_t *lenp)
{
	struct ini_buf b = { NULL, 0, 0 };
	struct stat st;
	char chunk[65536];
	ssize_t r;
	int fd, saved;

	if ((fd = open(path,
	         O_RDONLY | O_CLOEXEC |
	             (regular ? O_NONBLOCK | O_NOCTTY : 0))) == -1)
		return (-1);
	if (regular && (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))) {
		saved = fstat(fd, &st) == -1 ? errno :
		    S_ISDIR(st.st_mode)      ? EISDIR :
		                               ENOTSUP;
		close(fd);
		errno = saved;
		return (-1);
	}
	for (;;) {
		r = read(fd, chunk, sizeof chunk);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1 || (r > 0 && b.len + (size_t)r > INI_FILE_MAX)) {
			saved = r == -1 ? errno : EFBIG;
			free(b.p);
			close(fd);
			errno = saved;
			return (-1);
		}
		if (r == 0)
			break;
		ini_buf_add(&b, chunk, (size_t)r);
	}
	close(fd);
	*bufp = b.p;
	*lenp = b.len;
	return (0);
}

/* s with every "%(here)s" replaced by here (str.replace); s is freed. */
static char *
ini_replace_here(char *s, const char *here)
{
	struct ini_buf b = { NULL, 0, 0 };
	const char *p = s, *q;

	while ((q = strstr(p, INI_HERE)) != NULL) {
		ini_buf_add(&b, p, (size_t)(q - p));
		ini_buf_add(&b, here, strlen(here));
		p = q + strlen(INI_HERE);
	}
	ini_buf_add(&b, p, strlen(p));
	free(s);
	return (b.p);
}

/*
 * UnhosedConfigParser.expand_here(): in every section (not [DEFAULT]),
 * replace "%(here)s" in each value, including the [DEFAULT] values the
 * section inherits, which Python's items() and set() then copy into it.
 */
static void
ini_expand_here(struct ini *ini, const char *here)
{
	struct ini_section *s;
	struct ini_entry *d, *e;
	size_t i, j, idx;

	for (i = 0; i < ini->nsections; i++) {
		s = &ini->sections[i];
		for (j = 0; j < s->n; j++) {
			e = &s->entries[j];
			if (strstr(e->value, INI_HERE) != NULL)
				e->value = ini_replace_here(e->value, here);
		}
		/* Inherited values, replaced once like the section's own. */
		for (j = 0; j < ini->defaults.n; j++) {
			d = &ini->defaults.entries[j];
			if (strstr(d->value, INI_HERE) == NULL ||
			    ini_index_find(ini, i, d->key) != INI_NONE)
				continue;
			idx = ini_entry_set(
			    ini, i, xstrdup(d->key), d->file, d->line);
			e = &ini->sections[i].entries[idx];
			e->value = ini_replace_here(xstrdup(d->value), here);
		}
	}
}

/* qsort(3) comparison of strings by strcmp, as Python's sorted(). */
static int
ini_cmp_str(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* Read one included file, or note why it was skipped. */
static int
ini_include_file(struct ini *ini, const char *path, char **cause)
{
	char *buf, *here, *note;
	size_t len;
	int rc;

	if (ini_read_file(path, 1, &buf, &len) == -1) {
		xasprintf(&note, "%s: skipped: %s", path,
		    errno == ENOTSUP ? "not a regular file" : strerror(errno));
		ini_add_note(ini, note);
	} else {
		rc = ini_parse_buffer(ini, path, buf, len, cause);
		free(buf);
		if (rc != 0)
			return (-1);
	}
	if ((here = ini_here(path)) == NULL)
		return (
		    ini_fail(cause, "%s: getcwd: %s", path, strerror(errno)));
	ini_expand_here(ini, here);
	free(here);
	return (0);
}

/* One pattern of [include] files, already joined to the main file's dir. */
static int
ini_include_glob(struct ini *ini, const char *pattern, char **cause)
{
	glob_t g;
	char *note;
	size_t i;
	int r;

	memset(&g, 0, sizeof g);
	r = glob(pattern, GLOB_NOESCAPE, NULL, &g);
	if (r != 0 || g.gl_pathc == 0) {
		xasprintf(&note, "include %s: %s", pattern,
		    r == GLOB_NOMATCH || r == 0 ? "no file matches" :
		                                  "glob failed");
		ini_add_note(ini, note);
		globfree(&g);
		return (0);
	}
	qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, ini_cmp_str);
	for (i = 0; i < g.gl_pathc; i++) {
		if (ini_include_file(ini, g.gl_pathv[i], cause) != 0) {
			globfree(&g);
			return (-1);
		}
	}
	globfree(&g);
	return (0);
}

/* Each word of files, joined to here (os.path.join), globbed and read. */
static int
ini_include_words(
    struct ini *ini, const char *here, const char *files, char **cause)
{
	const char *p = files, *end = files + strlen(files), *w;
	char *pattern;
	size_t hl = strlen(here);
	int rc;

	for (;;) {
		if ((w = ini_lstrip(p, end)) == end)
			return (0);
		for (p = w; p < end && ini_space_at(p, end) == 0; p++)
			continue;
		if (*w == '/')
			pattern = xstrndup(w, (size_t)(p - w));
		else
			xasprintf(&pattern, "%s%s%.*s", here,
			    hl > 0 && here[hl - 1] == '/' ? "" : "/",
			    (int)(p - w), w);
		rc = ini_include_glob(ini, pattern, cause);
		free(pattern);
		if (rc != 0)
			return (-1);
	}
}

/* The main file has an [include] section: do what read_config() does. */
static int
ini_include(struct ini *ini, const char *path, const struct ini_var *vars,
    size_t nvars, char **cause)
{
	const struct ini_section *inc;
	const struct ini_entry *e;
	char *here, *files, *why = NULL;
	int rc;

	if ((here = ini_here(path)) == NULL)
		return (
		    ini_fail(cause, "%s: getcwd: %s", path, strerror(errno)));
	ini_expand_here(ini, here);
	inc = ini_section(ini, "include");
	if ((e = ini_get(ini, inc, "files")) == NULL) {
		free(here);
		return (ini_fail(cause,
		    "%s:%d: [include] section has no files option", inc->file,
		    inc->line));
	}
	if ((files = ini_expand(e->value, vars, nvars, &why)) == NULL) {
		rc = ini_fail(
		    cause, "%s:%d: [include] files: %s", e->file, e->line, why);
		free(why);
		free(here);
		return (rc);
	}
	rc = ini_include_words(ini, here, files, cause);
	free(files);
	free(here);
	return (rc);
}

/*
 * Read path and what its [include] section names into ini; see ini.h.
 * The caller frees ini with ini_clear() and *cause with free().
 */
int
ini_load(struct ini *ini, const char *path, const struct ini_var *vars,
    size_t nvars, char **cause)
{
	char *buf;
	size_t len;
	int rc;

	if (ini_read_file(path, 0, &buf, &len) == -1) {
		rc = ini_fail(cause, "%s: %s", path, strerror(errno));
		ini_clear(ini);
		return (rc);
	}
	rc = ini_parse_buffer(ini, path, buf, len, cause);
	free(buf);
	if (rc != 0)
		return (-1);
	if (ini_section(ini, "include") == NULL)
		return (0);
	if (ini_include(ini, path, vars, nvars, cause) != 0) {
		ini_clear(ini);
		return (-1);
	}
	return (0);
}

/* Free one section's contents. */
static void
ini_section_clear(struct ini_section *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->entries[i].key);
		free(s->entries[i].value);
	}
	free(s->entries);
	free(s->name);
}

/* Free everything ini holds and zero it; ini may be zeroed already. */
void
ini_clear(struct ini *ini)
{
	size_t i;

	for (i = 0; i < ini->nsections; i++)
		ini_section_clear(&ini->sections[i]);
	free(ini->sections);
	ini_section_clear(&ini->defaults);
	for (i = 0; i < ini->nfiles; i++)
		free(ini->files[i]);
	free(ini->files);
	for (i = 0; i < ini->nnotes; i++)
		free(ini->notes[i]);
	free(ini->notes);
	if (ini->index != NULL)
		free(ini->index->slots);
	free(ini->index);
	memset(ini, 0, sizeof *ini);
}

/* The section called name, borrowed from ini, or NULL. */
const struct ini_section *
ini_section(const struct ini *ini, const char *name)
{
	size_t idx;

	idx = ini_index_find((struct ini *)ini, INI_SEC_NAMES, name);
	return (idx == INI_NONE ? NULL : &ini->sections[idx]);
}

/* Option key of section (or of [DEFAULT]), borrowed from ini, or NULL. */
const struct ini_entry *
ini_get(
    const struct ini *ini, const struct ini_section *section, const char *key)
{
	struct ini *x = (struct ini *)ini;
	size_t sec, idx;

	if (section != NULL && section != &ini->defaults &&
	    section->name != NULL &&
	    (sec = ini_index_find(x, INI_SEC_NAMES, section->name)) !=
	        INI_NONE &&
	    (idx = ini_index_find(x, sec, key)) != INI_NONE)
		return (&ini->sections[sec].entries[idx]);
	if ((idx = ini_index_find(x, INI_SEC_DEFAULT, key)) != INI_NONE)
		return (&ini->defaults.entries[idx]);
	return (NULL);
}

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

/* Python's posixpath.normpath() of p; the caller frees. */
static char *
ini_normpath(const char *p)
{
	struct ini_buf b = { NULL, 0, 0 };
	size_t *starts = NULL, n = 0, len, root;
	const char *c;

	if (*p == '\0')
		return (xstrdup("."));
	root = *p != '/' ? 0 : (p[1] == '/' && p[2] != '/' ? 2 : 1);
	ini_buf_add(&b, "//", root);
	starts = xreallocarray(NULL, strlen(p) / 2 + 2, sizeof *starts);
	while (*p != '\0') {
		for (c = p; *c != '\0' && *c != '/'; c++)
			continue;
		len = (size_t)(c - p);
		if (len == 0 || (len == 1 && *p == '.')) {
			/* Nothing. */
		} else if (len != 2 || p[0] != '.' || p[1] != '.' ||
		    (root == 0 && n == 0) ||
		    (n > 0 && strcmp(b.p + starts[n - 1], "..") == 0)) {
			if (n > 0)
				ini_buf_add(&b, "/", 1);
			starts[n++] = b.len;
			ini_buf_add(&b, p, len);
		} else if (n > 0) {
			n--;
			b.len = starts[n] - (n > 0 ? 1 : 0);
			b.p[b.len] = '\0';
		}
		p = *c == '/' ? c + 1 : c;
	}
	free(starts);
	if (b.len == 0)
		ini_buf_add(&b, ".", 1);
	return (b.p);
}

/*
 * os.path.abspath(os.path.dirname(path)); see ini.h.  The caller frees
 * the result; NULL (errno set) if getcwd(3) fails.
 */
char *
ini_here(const char *path)
{
	const char *slash;
	char *head, *cwd, *joined, *here;
	size_t hl, i;

	slash = strrchr(path, '/');
	hl = slash == NULL ? 0 : (size_t)(slash - path) + 1;
	/* dirname() keeps "/" and "//", and strips the slashes of "a/". */
	for (i = 0; i < hl && path[i] == '/'; i++)
		continue;
	if (i < hl)
		while (hl > 0 && path[hl - 1] == '/')
			hl--;
	head = xstrndup(path, hl);
	if (*head == '/')
		here = ini_normpath(head);
	else {
		if ((cwd = getcwd(NULL, 0)) == NULL) {
			free(head);
			return (NULL);
		}
		xasprintf(&joined, "%s%s%s", cwd,
		    cwd[0] != '\0' && cwd[strlen(cwd) - 1] == '/' ? "" : "/",
		    head);
		here = ini_normpath(joined);
		free(joined);
		free(cwd);
	}
	free(head);
	return (here);
}
