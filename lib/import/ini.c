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
#include "ini-int.h"
#include "log.h"
#include "xmalloc.h"

#define INI_FILE_MAX (256 * 1024 * 1024)
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
