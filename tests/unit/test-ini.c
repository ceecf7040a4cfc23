/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Unit tests for lib/ini.c: configparser's line rules, includes, %(here)s,
 * Python's "%" formatting and os.path.abspath(), pathological input, and
 * two differential tests against /usr/bin/python3 (skipped without it).
 */

#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ini.h"
#include "test.h"
#include "xmalloc.h"

#define PYTHON "/usr/bin/python3"
#define DIFF_CASES 2000

static char tmpdir[256];

/* Write text to tmpdir/name (directories must exist); 0 or -1. */
static int
put_file(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;
	int ok;

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	if ((f = fopen(path, "w")) == NULL)
		return (-1);
	ok = fputs(text, f) >= 0;
	return (fclose(f) == 0 && ok ? 0 : -1);
}

/* tmpdir/name, in a static buffer. */
static const char *
tpath(const char *name)
{
	static char path[512];

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	return (path);
}

/* Parse text as file "t.conf"; 0 or -1 with *cause set. */
static int
parse(struct ini *ini, const char *text, char **cause)
{
	memset(ini, 0, sizeof *ini);
	return (ini_parse_buffer(ini, "t.conf", text, strlen(text), cause));
}

/* The value of section.key (with [DEFAULT] fallback), or NULL. */
static const char *
val(const struct ini *ini, const char *section, const char *key)
{
	const struct ini_section *s;
	const struct ini_entry *e;

	s = ini_section(ini, section);
	if (s == NULL && strcmp(section, "DEFAULT") != 0)
		return (NULL);
	e = ini_get(ini, s, key);
	return (e == NULL ? NULL : e->value);
}

/* Does text fail to parse with exactly the message want? */
static int
fails_with(const char *text, const char *want)
{
	struct ini ini;
	char *cause = NULL;
	int ok;

	if (parse(&ini, text, &cause) == 0) {
		fprintf(stderr, "  parsed: %s\n", text);
		ini_clear(&ini);
		return (0);
	}
	ok = cause != NULL && strcmp(cause, want) == 0;
	if (!ok)
		fprintf(stderr, "  cause \"%s\", want \"%s\"\n",
		    cause ? cause : "(null)", want);
	free(cause);
	/* The failed parse left nothing behind. */
	return (ok && ini.nsections == 0 && ini.nfiles == 0);
}

static const struct ini_var test_vars[] = {
	{ "s", INI_VAR_STRING, "hello", 0 },
	{ "n", INI_VAR_NUMBER, NULL, 66 },
	{ "m", INI_VAR_NUMBER, NULL, -255 },
	{ "z", INI_VAR_NUMBER, NULL, 0 },
	{ "c", INI_VAR_STRING, "Z", 0 },
	{ "q", INI_VAR_STRING, "it's \"q\"\n\\\x01", 0 },
	{ "u", INI_VAR_STRING, "h\xc3\xa9llo", 0 },
	{ "e", INI_VAR_STRING, "", 0 },
	{ "a(b)", INI_VAR_STRING, "paren", 0 },
	{ "process_num", INI_VAR_MARK, NULL, 0 },
};
#define NVARS (sizeof test_vars / sizeof test_vars[0])

/* Does ini_expand(fmt) give want (or fail with cause want, if bad)? */
static int
expands(const char *fmt, const char *want, int bad)
{
	char *r, *cause = NULL;
	int ok;

	r = ini_expand(fmt, test_vars, NVARS, &cause);
	if (bad)
		ok = r == NULL && cause != NULL && strcmp(cause, want) == 0;
	else
		ok = r != NULL && strcmp(r, want) == 0;
	if (!ok)
		fprintf(stderr, "  expand \"%s\": \"%s\" (%s), want \"%s\"\n",
		    fmt, r ? r : "", cause ? cause : "ok", want);
	free(r);
	free(cause);
	return (ok);
}

TEST(basic)
{
	struct ini ini;
	char *cause = NULL;

	ASSERT_EQ(
	    parse(&ini,
	        "[program:web]\ncommand = /bin/sleep 10\n"
	        "Priority:5\n  cont  =  v  x  \nKey\tWith Space  =  v  x  \n"
	        "url = http://h:80/?a=b\n[other]\nx=\n",
	        &cause),
	    0);
	ASSERT_EQ(ini.nsections, 2);
	ASSERT_EQ(ini.nfiles, 1);
	ASSERT_STREQ(ini.files[0], "t.conf");
	ASSERT_STREQ(ini.sections[0].name, "program:web");
	ASSERT_EQ(ini.sections[0].line, 1);
	ASSERT_EQ(ini.sections[0].n, 4);
	/* An indented line continues the value, '=' or not. */
	ASSERT_STREQ(ini.sections[0].entries[1].key, "priority");
	ASSERT_EQ(ini.sections[0].entries[1].line, 3);
	ASSERT_STREQ(ini.sections[0].entries[1].file, "t.conf");
	ASSERT_STREQ(val(&ini, "program:web", "command"), "/bin/sleep 10");
	ASSERT_STREQ(val(&ini, "program:web", "priority"), "5\ncont  =  v  x");
	ASSERT_STREQ(val(&ini, "program:web", "key\twith space"), "v  x");
	/* The first '=' or ':' splits. */
	ASSERT_STREQ(val(&ini, "program:web", "url"), "http://h:80/?a=b");
	ASSERT_STREQ(val(&ini, "other", "x"), "");
	ASSERT_OK(val(&ini, "program:web", "Priority") == NULL);
	ASSERT_OK(val(&ini, "nosuch", "x") == NULL);
	ASSERT_OK(ini_section(&ini, "Other") == NULL);
	ini_clear(&ini);
	ini_clear(&ini);
	ASSERT_EQ(parse(&ini, "", &cause), 0);
	ASSERT_EQ(ini.nsections, 0);
	ini_clear(&ini);
	return (0);
}

TEST(comments)
{
	struct ini ini;
	char *cause = NULL;

	ASSERT_EQ(parse(&ini,
	              "; top\n# top\n[s]\n  ; indented\na = 1 ; c\n"
	              "b = 2# kept\nc = x;y\nd = p\t#tab\ne = ;all\n"
	              "f = x#1#2 #3 ;c\ng = v ;\n[t] ; c\n[u]#c\n",
	              &cause),
	    0);
	ASSERT_STREQ(val(&ini, "s", "a"), "1");
	ASSERT_STREQ(val(&ini, "s", "b"), "2# kept");
	ASSERT_STREQ(val(&ini, "s", "c"), "x;y");
	ASSERT_STREQ(val(&ini, "s", "d"), "p");
	ASSERT_STREQ(val(&ini, "s", "e"), "");
	/* Python's rounds: the ';' of round 1 beats the '#' of round 3. */
	ASSERT_STREQ(val(&ini, "s", "f"), "x#1#2 #3");
	ASSERT_STREQ(val(&ini, "s", "g"), "v");
	ASSERT_OK(ini_section(&ini, "t") != NULL);
	/* "[u]#c": the header ends at the last ']'. */
	ASSERT_OK(ini_section(&ini, "u") != NULL);
	ASSERT_EQ(ini.sections[0].n, 7);
	ini_clear(&ini);
	return (0);
}

TEST(continuation)
{
	struct ini ini;
	char *cause = NULL;

	ASSERT_EQ(parse(&ini,
	              "[s]\na = 1\n  two\n\n\tthree ; c\n  ; only a comment\n"
	              "\n\n  four\n\n\nb =\n  x\nc = y\n\n\n"
	              "  d = not an option\n e\n[t]\n  k = v\n  [u]\n",
	              &cause),
	    0);
	ASSERT_STREQ(val(&ini, "s", "a"), "1\ntwo\n\nthree\n\n\nfour");
	/* An empty first line stays; trailing empty lines go. */
	ASSERT_STREQ(val(&ini, "s", "b"), "\nx");
	ASSERT_STREQ(val(&ini, "s", "c"), "y\n\n\nd = not an option\ne");
	ASSERT_OK(val(&ini, "s", "d") == NULL);
	/* An indented header after an option at that indent is a header. */
	ASSERT_STREQ(val(&ini, "t", "k"), "v");
	ASSERT_OK(ini_section(&ini, "u") != NULL);
	ASSERT_OK(val(&ini, "u", "more") == NULL);
	ini_clear(&ini);
	/* After a header nothing continues: an indented line is an error. */
	ASSERT_EQ(parse(&ini, "[t]\n  k = v\n  [u]\n    more\n", &cause), -1);
	ASSERT_OK(cause != NULL && strncmp(cause, "t.conf:4: ", 10) == 0);
	free(cause);
	cause = NULL;
	return (0);
}

TEST(continuation_edges)
{
	struct ini ini;
	char *cause = NULL;

	/* Deeper than the option line counts, not deeper than column 0. */
	ASSERT_EQ(parse(&ini,
	              "[s]\n  a = 1\n  b = 2\n   c\n [t]\n  x = 1\n"
	              "    [not a header]\n",
	              &cause),
	    0);
	ASSERT_STREQ(val(&ini, "s", "a"), "1");
	ASSERT_STREQ(val(&ini, "s", "b"), "2\nc");
	ASSERT_STREQ(val(&ini, "t", "x"), "1\n[not a header]");
	ini_clear(&ini);
	/* After a header, an indented line is not a continuation. */
	ASSERT_OK(fails_with("[s]\n  junk\n",
	    "t.conf:2: not a section header or option: 'junk'"));
	return (0);
}

TEST(headers)
{
	struct ini ini;
	char *cause = NULL;

	ASSERT_EQ(parse(&ini, "[a]]\nk=1\n[b] = c\n[ sp ]\n[x=y]\n[]]\n[[n]\n",
	              &cause),
	    0);
	ASSERT_EQ(ini.nsections, 6);
	ASSERT_STREQ(ini.sections[0].name, "a]");
	ASSERT_STREQ(ini.sections[1].name, "b");
	ASSERT_STREQ(ini.sections[2].name, " sp ");
	ASSERT_STREQ(ini.sections[3].name, "x=y");
	ASSERT_STREQ(ini.sections[4].name, "]");
	ASSERT_STREQ(ini.sections[5].name, "[n");
	ini_clear(&ini);
	/* "[]" and "[x" are options or nothing. */
	ASSERT_OK(fails_with(
	    "[s]\n[]\n", "t.conf:2: not a section header or option: '[]'"));
	ASSERT_EQ(parse(&ini, "[s]\n[x = 1\n", &cause), 0);
	ASSERT_STREQ(val(&ini, "s", "[x"), "1");
	ini_clear(&ini);
	return (0);
}

TEST(merge)
{
	struct ini ini;
	char *cause = NULL;
	const struct ini_section *s;

	ASSERT_EQ(parse(&ini,
	              "[a]\nx = 1\ny = 2\n[b]\nz = 3\n[a]\nX = 10\nw = 4\n"
	              "x = 11\n  more\n",
	              &cause),
	    0);
	ASSERT_EQ(ini.nsections, 2);
	s = ini_section(&ini, "a");
	ASSERT_OK(s == &ini.sections[0]);
	ASSERT_EQ(s->line, 1);
	ASSERT_EQ(s->n, 3);
	/* The later value wins, in the first one's place. */
	ASSERT_STREQ(s->entries[0].key, "x");
	ASSERT_STREQ(s->entries[0].value, "11\nmore");
	ASSERT_EQ(s->entries[0].line, 9);
	ASSERT_STREQ(s->entries[2].key, "w");
	ini_clear(&ini);
	/* A second file merges into the same sections. */
	ASSERT_EQ(parse(&ini, "[a]\nx = 1\n", &cause), 0);
	ASSERT_EQ(ini_parse_buffer(
	              &ini, "u.conf", "[a]\nx=2\ny=3\n[c]\n", 16, &cause),
	    0);
	ASSERT_EQ(ini.nfiles, 2);
	ASSERT_STREQ(val(&ini, "a", "x"), "2");
	ASSERT_STREQ(ini_section(&ini, "a")->entries[0].file, "u.conf");
	ASSERT_STREQ(ini_section(&ini, "c")->file, "u.conf");
	ini_clear(&ini);
	return (0);
}

TEST(defaults)
{
	struct ini ini;
	char *cause = NULL;

	ASSERT_EQ(parse(&ini,
	              "[DEFAULT]\nd = 1\nboth = def\n[s]\nboth = mine\n"
	              "[default]\n[DEFAULT]\ne = 2\n",
	              &cause),
	    0);
	ASSERT_EQ(ini.nsections, 2);
	ASSERT_OK(ini_section(&ini, "DEFAULT") == NULL);
	ASSERT_OK(ini_section(&ini, "default") != NULL);
	ASSERT_STREQ(ini.defaults.name, "DEFAULT");
	ASSERT_EQ(ini.defaults.n, 3);
	ASSERT_STREQ(val(&ini, "s", "d"), "1");
	ASSERT_STREQ(val(&ini, "s", "e"), "2");
	ASSERT_STREQ(val(&ini, "s", "both"), "mine");
	ASSERT_STREQ(val(&ini, "default", "both"), "def");
	ASSERT_STREQ(ini_get(&ini, NULL, "both")->value, "def");
	ASSERT_STREQ(ini_get(&ini, &ini.defaults, "d")->value, "1");
	ASSERT_OK(ini_get(&ini, NULL, "nosuch") == NULL);
	ini_clear(&ini);
	return (0);
}

TEST(errors)
{
	ASSERT_OK(fails_with("x = 1\n[s]\n",
	    "t.conf:1: option before the first section header"));
	ASSERT_OK(fails_with("\n; c\n  junk\n",
	    "t.conf:3: option before the first section header"));
	ASSERT_OK(fails_with("[s]\na=1\nxyz ; c\n",
	    "t.conf:3: not a section header or option: 'xyz'"));
	ASSERT_OK(fails_with(
	    "[s]\n = v\n", "t.conf:2: option without a name: '= v'"));
	ASSERT_OK(
	    fails_with("[s]\n:\n", "t.conf:2: option without a name: ':'"));
	ASSERT_OK(fails_with("[s]\n\x01\x7f\n",
	    "t.conf:2: not a section header or option: '\\x01\\x7f'"));
	/* The second error is not reached. */
	ASSERT_OK(fails_with("[s]\nbad\nworse\n",
	    "t.conf:2: not a section header or option: 'bad'"));
	return (0);
}

TEST(bad_bytes)
{
	struct ini ini;
	char *cause = NULL;

	memset(&ini, 0, sizeof ini);
	ASSERT_EQ(
	    ini_parse_buffer(&ini, "t.conf", "[s]\na=1\n\0\n", 10, &cause), -1);
	ASSERT_STREQ(cause, "t.conf:3: NUL byte");
	free(cause);
	ASSERT_OK(fails_with("[s]\n\xff\n", "t.conf:2: invalid UTF-8"));
	ASSERT_OK(fails_with("[s]\na=\xc0\xaf\n", "t.conf:2: invalid UTF-8"));
	ASSERT_OK(
	    fails_with("[s]\na=\xed\xa0\x80\n", "t.conf:2: invalid UTF-8"));
	ASSERT_OK(
	    fails_with("[s]\na=\xf4\x90\x80\x80\n", "t.conf:2: invalid UTF-8"));
	ASSERT_OK(fails_with("[s]\na=\xe2\x82\n", "t.conf:2: invalid UTF-8"));
	ASSERT_OK(fails_with("\xef\xbb\xbf[s]\n",
	    "t.conf:1: option before the first section header"));
	ASSERT_EQ(
	    parse(&ini, "[s]\na=\xf0\x9f\x98\x80 \xe2\x82\xac\n", &cause), 0);
	ASSERT_STREQ(val(&ini, "s", "a"), "\xf0\x9f\x98\x80 \xe2\x82\xac");
	ini_clear(&ini);
	return (0);
}

TEST(newlines)
{
	struct ini ini;
	char *cause = NULL;

	ASSERT_EQ(
	    parse(&ini, "[s]\r\na = 1\r\n  2\r\n\r\n  3\rb = x\r[t]", &cause),
	    0);
	ASSERT_STREQ(val(&ini, "s", "a"), "1\n2\n\n3");
	ASSERT_STREQ(val(&ini, "s", "b"), "x");
	ASSERT_EQ(ini.sections[0].entries[1].line, 6);
	ASSERT_EQ(ini.sections[1].line, 7);
	ini_clear(&ini);
	ASSERT_OK(fails_with("[s]\r\n\r\rbad\n",
	    "t.conf:4: not a section header or option: 'bad'"));
	return (0);
}

TEST(unicode_space)
{
	struct ini ini;
	char *cause = NULL;

	/* U+00A0 and U+3000 are Python whitespace; U+3000 indents by one. */
	ASSERT_EQ(parse(&ini,
	              "[s]\n\xc2\xa0k\xc2\xa0=\xe3\x80\x80v\xe2\x80\x89\n"
	              "\xe3\x80\x80\xe3\x80\x80w\n\x1c\x1d x\x0b;c\n"
	              "t = a\xc2\xa0;c\n",
	              &cause),
	    0);
	ASSERT_STREQ(val(&ini, "s", "k"), "v\nw\nx");
	ASSERT_STREQ(val(&ini, "s", "t"), "a");
	ini_clear(&ini);
	return (0);
}

/* A tree of files for the include tests. */
static int
make_tree(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s/inc", tmpdir);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		return (-1);
	snprintf(path, sizeof path, "%s/inc/conf.d", tmpdir);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		return (-1);
	snprintf(path, sizeof path, "%s/inc/conf.d/dir.conf", tmpdir);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		return (-1);
	snprintf(path, sizeof path, "%s/inc/other", tmpdir);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		return (-1);
	return (put_file("inc/main.conf",
	            "[supervisord]\nlogfile = %(here)s/log\n"
	            "[DEFAULT]\ndir = %(here)s/d\n"
	            "[include]\nfiles = conf.d/*.conf other/%(ENV_X)s.ini "
	            "nomatch/*.conf\n  %(here)s/abs.conf\n") |
	    put_file("inc/conf.d/b.conf",
	        "[program:b]\ncommand = %(here)s/b\n"
	        "[include]\nfiles = nested.ini\n") |
	    put_file("inc/conf.d/a.conf",
	        "[program:a]\ncommand = %(here)s/a\n[supervisord]\n"
	        "logfile = %(here)s/override\n") |
	    put_file("inc/conf.d/.hidden.conf", "[hidden]\n") |
	    put_file("inc/conf.d/nested.ini", "[nested]\n") |
	    put_file("inc/conf.d/c.conf.off", "[off]\n") |
	    put_file("inc/other/x.ini", "[x]\nk = %(here)s\n") |
	    put_file("inc/abs.conf", "[abs]\nk = 1\n"));
}

TEST(include)
{
	struct ini_var vars[] = {
		{ "ENV_X", INI_VAR_STRING, "x", 0 },
		{ "here", INI_VAR_STRING, "unused", 0 },
	};
	struct ini ini;
	char *cause = NULL, want[PATH_MAX];

	ASSERT_EQ(make_tree(), 0);
	memset(&ini, 0, sizeof ini);
	ASSERT_EQ(ini_load(&ini, tpath("inc/main.conf"), vars, 2, &cause), 0);
	/* Sorted within a pattern, patterns in order, dotfiles left out. */
	ASSERT_EQ(ini.nfiles, 5);
	ASSERT_STREQ(ini.files[0], tpath("inc/main.conf"));
	ASSERT_STREQ(ini.files[1], tpath("inc/conf.d/a.conf"));
	ASSERT_STREQ(ini.files[2], tpath("inc/conf.d/b.conf"));
	ASSERT_STREQ(ini.files[3], tpath("inc/other/x.ini"));
	ASSERT_STREQ(ini.files[4], tpath("inc/abs.conf"));
	ASSERT_OK(ini_section(&ini, "hidden") == NULL);
	/* b.conf's own [include] merges but is not followed. */
	ASSERT_OK(ini_section(&ini, "nested") == NULL);
	ASSERT_STREQ(val(&ini, "include", "files"), "nested.ini");
	/* %(here)s: the directory of the file that set the value last. */
	snprintf(want, sizeof want, "%s/inc/conf.d/override", tmpdir);
	ASSERT_STREQ(val(&ini, "supervisord", "logfile"), want);
	ASSERT_OK(
	    strstr(val(&ini, "program:a", "command"), "/conf.d/a") != NULL);
	snprintf(want, sizeof want, "%s/inc/other", tmpdir);
	ASSERT_STREQ(val(&ini, "x", "k"), want);
	/* [DEFAULT] values are copied, with here, into each section. */
	snprintf(want, sizeof want, "%s/inc/d", tmpdir);
	ASSERT_STREQ(val(&ini, "supervisord", "dir"), want);
	snprintf(want, sizeof want, "%s/inc/conf.d/d", tmpdir);
	ASSERT_STREQ(val(&ini, "program:a", "dir"), want);
	ASSERT_STREQ(ini.defaults.entries[0].value, "%(here)s/d");
	/* The directory matched by *.conf was skipped with a note. */
	ASSERT_EQ(ini.nnotes, 2);
	snprintf(want, sizeof want, "%s/inc/conf.d/dir.conf: skipped: %s",
	    tmpdir, strerror(EISDIR));
	ASSERT_STREQ(ini.notes[0], want);
	snprintf(want, sizeof want,
	    "include %s/inc/nomatch/*.conf: no file "
	    "matches",
	    tmpdir);
	ASSERT_STREQ(ini.notes[1], want);
	ini_clear(&ini);
	return (0);
}

TEST(include_override_here)
{
	struct ini_var vars[] = { { "ENV_X", INI_VAR_STRING, "x", 0 } };
	struct ini ini;
	char *cause = NULL, want[PATH_MAX];

	ASSERT_EQ(make_tree(), 0);
	memset(&ini, 0, sizeof ini);
	ASSERT_EQ(put_file("inc/ov.conf",
	              "[supervisord]\nlogfile = %(here)s/log\n[include]\n"
	              "files = conf.d/a.conf\n"),
	    0);
	ASSERT_EQ(ini_load(&ini, tpath("inc/ov.conf"), vars, 1, &cause), 0);
	/* a.conf sets logfile again, with its own here. */
	snprintf(want, sizeof want, "%s/inc/conf.d/override", tmpdir);
	ASSERT_STREQ(val(&ini, "supervisord", "logfile"), want);
	ASSERT_EQ(ini_section(&ini, "supervisord")->entries[0].line, 4);
	ini_clear(&ini);
	return (0);
}

TEST(include_cycle)
{
	struct ini ini;
	char *cause = NULL;

	ASSERT_EQ(make_tree(), 0);
	ASSERT_EQ(put_file("inc/self.conf",
	              "[s]\nn = 1\n[include]\nfiles = self.conf loop.conf\n"),
	    0);
	ASSERT_EQ(
	    put_file("inc/loop.conf", "[t]\n[include]\nfiles = self.conf\n"),
	    0);
	memset(&ini, 0, sizeof ini);
	ASSERT_EQ(ini_load(&ini, tpath("inc/self.conf"), NULL, 0, &cause), 0);
	ASSERT_EQ(ini.nfiles, 3);
	ASSERT_STREQ(ini.files[1], tpath("inc/self.conf"));
	ASSERT_STREQ(ini.files[2], tpath("inc/loop.conf"));
	ASSERT_STREQ(val(&ini, "include", "files"), "self.conf");
	ini_clear(&ini);
	return (0);
}

TEST(include_unreadable)
{
	struct ini ini;
	char *cause = NULL, want[PATH_MAX];

	ASSERT_EQ(make_tree(), 0);
	ASSERT_EQ(put_file("inc/secret.ini", "[secret]\n"), 0);
	ASSERT_EQ(
	    put_file("inc/ur.conf", "[include]\nfiles = secret.ini\n"), 0);
	ASSERT_EQ(chmod(tpath("inc/secret.ini"), 0), 0);
	memset(&ini, 0, sizeof ini);
	ASSERT_EQ(ini_load(&ini, tpath("inc/ur.conf"), NULL, 0, &cause), 0);
	if (access(tpath("inc/secret.ini"), R_OK) == 0) {
		printf("# include_unreadable: root reads anything; skipped\n");
		ini_clear(&ini);
		return (0);
	}
	ASSERT_EQ(ini.nfiles, 1);
	ASSERT_OK(ini_section(&ini, "secret") == NULL);
	snprintf(want, sizeof want, "%s/inc/secret.ini: skipped: %s", tmpdir,
	    strerror(EACCES));
	ASSERT_EQ(ini.nnotes, 1);
	ASSERT_STREQ(ini.notes[0], want);
	ini_clear(&ini);
	return (0);
}

TEST(include_errors)
{
	struct ini ini;
	char *cause = NULL, want[PATH_MAX];

	ASSERT_EQ(make_tree(), 0);
	ASSERT_EQ(put_file("inc/e1.conf", "[s]\n\n[include]\nfile = x\n"), 0);
	memset(&ini, 0, sizeof ini);
	ASSERT_EQ(ini_load(&ini, tpath("inc/e1.conf"), NULL, 0, &cause), -1);
	snprintf(want, sizeof want,
	    "%s:3: [include] section has no files option",
	    tpath("inc/e1.conf"));
	ASSERT_STREQ(cause, want);
	free(cause);
	ASSERT_EQ(ini.nsections, 0);
	/* [DEFAULT] files counts, as has_option() says. */
	ASSERT_EQ(
	    put_file("inc/e2.conf", "[DEFAULT]\nfiles = e3.ini\n[include]\n"),
	    0);
	ASSERT_EQ(put_file("inc/e3.ini", "[ok]\nbad line\n"), 0);
	ASSERT_EQ(ini_load(&ini, tpath("inc/e2.conf"), NULL, 0, &cause), -1);
	snprintf(want, sizeof want,
	    "%s:2: not a section header or option: 'bad line'",
	    tpath("inc/e3.ini"));
	ASSERT_STREQ(cause, want);
	free(cause);
	ASSERT_EQ(ini.nfiles, 0);
	ASSERT_EQ(put_file("inc/e4.conf", "[include]\nfiles = %(ENV_Y)s\n"), 0);
	ASSERT_EQ(
	    ini_load(&ini, tpath("inc/e4.conf"), test_vars, 2, &cause), -1);
	snprintf(want, sizeof want,
	    "%s:2: [include] files: %%(ENV_Y)s: unknown name (known: n, s)",
	    tpath("inc/e4.conf"));
	ASSERT_STREQ(cause, want);
	free(cause);
	ASSERT_EQ(ini_load(&ini, tpath("inc/none.conf"), NULL, 0, &cause), -1);
	snprintf(want, sizeof want, "%s: %s", tpath("inc/none.conf"),
	    strerror(ENOENT));
	ASSERT_STREQ(cause, want);
	free(cause);
	ASSERT_EQ(ini_load(&ini, tpath("inc"), NULL, 0, &cause), -1);
	snprintf(want, sizeof want, "%s: %s", tpath("inc"), strerror(EISDIR));
	ASSERT_STREQ(cause, want);
	free(cause);
	/* No [include] in the main file: %(here)s stays for the caller. */
	ASSERT_EQ(
	    ini_load(&ini, tpath("inc/conf.d/a.conf"), NULL, 0, &cause), 0);
	ASSERT_STREQ(val(&ini, "program:a", "command"), "%(here)s/a");
	ini_clear(&ini);
	return (0);
}

TEST(include_relative)
{
	struct ini ini;
	char *cause = NULL, old[PATH_MAX], want[PATH_MAX];
	int rc;

	ASSERT_EQ(make_tree(), 0);
	ASSERT_OK(getcwd(old, sizeof old) != NULL);
	ASSERT_EQ(chdir(tmpdir), 0);
	memset(&ini, 0, sizeof ini);
	rc = ini_load(&ini, "inc/../inc/main.conf",
	    (const struct ini_var[]){ { "ENV_X", INI_VAR_STRING, "x", 0 } }, 1,
	    &cause);
	ASSERT_EQ(chdir(old), 0);
	ASSERT_EQ(rc, 0);
	ASSERT_STREQ(ini.files[0], "inc/../inc/main.conf");
	ASSERT_STREQ(ini.files[1], tpath("inc/conf.d/a.conf"));
	snprintf(want, sizeof want, "%s/inc/d", tmpdir);
	ASSERT_STREQ(val(&ini, "supervisord", "dir"), want);
	ini_clear(&ini);
	return (0);
}

TEST(expand_strings)
{
	ASSERT_OK(expands("", "", 0));
	ASSERT_OK(expands("plain", "plain", 0));
	ASSERT_OK(expands("100%%", "100%", 0));
	ASSERT_OK(expands("%(s)s/%(s)s", "hello/hello", 0));
	ASSERT_OK(expands("[%(s)8s]", "[   hello]", 0));
	ASSERT_OK(expands("[%(s)-8s]", "[hello   ]", 0));
	ASSERT_OK(expands("[%(s)08s]", "[   hello]", 0));
	ASSERT_OK(expands("[%(s).2s]", "[he]", 0));
	ASSERT_OK(expands("[%(s)5.1s]", "[    h]", 0));
	ASSERT_OK(expands("[%(s).s]", "[]", 0));
	ASSERT_OK(expands("[%(s)+ #s]", "[hello]", 0));
	ASSERT_OK(expands("[%(s)ls%(s)hs%(s)Ls]", "[hellohellohello]", 0));
	ASSERT_OK(expands("[%(u)6.2s]", "[    h\xc3\xa9]", 0));
	ASSERT_OK(expands("%(e)s", "", 0));
	ASSERT_OK(expands("%(a(b))s", "paren", 0));
	ASSERT_OK(expands("%(s)r", "'hello'", 0));
	ASSERT_OK(expands("%(q)r", "'it\\'s \"q\"\\n\\\\\\x01'", 0));
	ASSERT_OK(expands("%(u)r|%(u)a", "'h\xc3\xa9llo'|'h\\xe9llo'", 0));
	ASSERT_OK(expands("%(s)7.3r", "    'he", 0));
	ASSERT_OK(expands("%(c)c|%(c)3c|%(c)-3c|", "Z|  Z|Z  |", 0));
	ASSERT_OK(expands("%(s)s%%(s)s", "hello%(s)s", 0));
	return (0);
}

TEST(expand_numbers)
{
	ASSERT_OK(
	    expands("%(n)d %(n)i %(n)u %(n)s %(n)r", "66 66 66 66 66", 0));
	ASSERT_OK(expands("%(n)x %(n)X %(n)o", "42 42 102", 0));
	ASSERT_OK(expands("%(n)#x %(n)#X %(n)#o", "0x42 0X42 0o102", 0));
	ASSERT_OK(expands("%(m)d %(m)x %(m)#x", "-255 -ff -0xff", 0));
	ASSERT_OK(
	    expands("[%(n)5d][%(n)-5d][%(n)05d]", "[   66][66   ][00066]", 0));
	ASSERT_OK(expands("[%(m)05d][%(m)+#08x]", "[-0255][-0x000ff]", 0));
	ASSERT_OK(expands("[%(n)+d][%(n) d][%(n) 5d]", "[+66][ 66][   66]", 0));
	ASSERT_OK(
	    expands("[%(n)08.5d][%(n).0d][%(z).0d]", "[00000066][66][0]", 0));
	ASSERT_OK(expands("[%(n)-+8.3x][%(n)#5.3o]", "[+042    ][0o102]", 0));
	ASSERT_OK(expands("[%(n)-05d][%(n)#5d]", "[66   ][   66]", 0));
	ASSERT_OK(
	    expands("[%(n)c][%(n)5.2c][%(n)05c]", "[B][    B][    B]", 0));
	ASSERT_OK(expands("[%(n)f][%(n).2e][%(m)g][%(n)#g]",
	    "[66.000000][6.60e+01][-255][66.0000]", 0));
	ASSERT_OK(expands("[%(n)+09.2f][%(n)-8G]", "[+00066.00][66      ]", 0));
	ASSERT_OK(expands("[%(n)5s][%(n)-4r]", "[   66][66  ]", 0));
	ASSERT_OK(expands("%(n)hd%(n)ld", "6666", 0));
	return (0);
}

TEST(expand_marks)
{
	ASSERT_OK(expands("p%(process_num)02d",
	    "p" INI_MARK_OPEN "303264" INI_MARK_CLOSE, 0));
	ASSERT_OK(expands("%(process_num)s-%(process_num)-3ld",
	    INI_MARK_OPEN "73" INI_MARK_CLOSE "-" INI_MARK_OPEN
	                  "2d336c64" INI_MARK_CLOSE,
	    0));
	ASSERT_OK(expands("%(process_num)q",
	    "%(process_num)q: unsupported format "
	    "character 'q' (0x71)",
	    1));
	return (0);
}

/* A marker in a result is always one that ini_expand() put there. */
TEST(expand_forged_marks)
{
	const struct ini_var vars[] = {
		{ "x", INI_VAR_STRING, "a" INI_MARK_OPEN "73))", 0 },
		{ "p", INI_VAR_MARK, NULL, 0 },
		{ "y", INI_VAR_STRING, "((vigil", 0 },
	};
	char *r, *cause = NULL;

	r = ini_expand("-c " INI_MARK_OPEN "73))", vars, 3, &cause);
	ASSERT_OK(r == NULL);
	ASSERT_STREQ(cause,
	    "the text \"" INI_MARK_OPEN "\" is reserved for "
	    "vigil's markers");
	free(cause);
	cause = NULL;
	ASSERT_OK(ini_expand("%(x)s", vars, 3, &cause) == NULL);
	free(cause);
	cause = NULL;
	/* A real marker beside text that nearly forms one. */
	r = ini_expand("((%(p)d %(y)s%(p)s", vars, 3, &cause);
	ASSERT_STREQ(r,
	    "((" INI_MARK_OPEN "64" INI_MARK_CLOSE " ((vigil" INI_MARK_OPEN
	    "73" INI_MARK_CLOSE);
	free(r);
	return (0);
}

TEST(expand_errors)
{
	ASSERT_OK(expands("%(nope)s",
	    "%(nope)s: unknown name (known: a(b), c, e, m, n, process_num, "
	    "q, s, u, z)",
	    1));
	ASSERT_OK(expands("%(nope", "incomplete format key", 1));
	ASSERT_OK(expands("%(a(b)s", "incomplete format key", 1));
	ASSERT_OK(expands("%(", "incomplete format key", 1));
	ASSERT_OK(expands("100%", "incomplete format", 1));
	ASSERT_OK(expands("%(s)", "incomplete format", 1));
	ASSERT_OK(expands("%(s)-5.3l", "incomplete format", 1));
	ASSERT_OK(expands("%(s)5.", "incomplete format", 1));
	/* Python looks the name up first. */
	ASSERT_OK(expands("%(x)",
	    "%(x)s: unknown name (known: a(b), c, e, m, "
	    "n, process_num, q, s, u, z)",
	    1));
	ASSERT_OK(expands("%s",
	    "'%s' at offset 0: unsupported, only %(name) "
	    "and %% are",
	    1));
	ASSERT_OK(expands("a %5%",
	    "'%5' at offset 2: unsupported, only "
	    "%(name) and %% are",
	    1));
	ASSERT_OK(expands("%(s)%",
	    "%(s)%: unsupported format character '%' "
	    "(0x25)",
	    1));
	ASSERT_OK(expands("%(s)*s", "%(s)*: '*' is not supported", 1));
	ASSERT_OK(expands("%(s).*s", "%(s).*: '*' is not supported", 1));
	ASSERT_OK(expands("%(s)d", "%(s)d: format requires a number", 1));
	ASSERT_OK(expands("%(s)x", "%(s)x: format requires a number", 1));
	ASSERT_OK(expands("%(s)f", "%(s)f: format requires a number", 1));
	ASSERT_OK(expands("%(s)c",
	    "%(s)c: format requires a number or a "
	    "character",
	    1));
	ASSERT_OK(expands("%(z)c", "%(z)c: 0 is not a character", 1));
	ASSERT_OK(expands("%(m)c", "%(m)c: -255 is not a character", 1));
	ASSERT_OK(expands("%(n)lld",
	    "%(n)l: unsupported format character "
	    "'l' (0x6c)",
	    1));
	ASSERT_OK(expands("%(s)99999999s", "width too big (over 65536)", 1));
	ASSERT_OK(
	    expands("%(s).99999999s", "precision too big (over 65536)", 1));
	return (0);
}

TEST(expand_no_recursion)
{
	struct ini_var v[] = {
		{ "x", INI_VAR_STRING, "%(x)s", 0 },
		{ "y", INI_VAR_STRING, "%", 0 },
		{ "x", INI_VAR_STRING, "last %(x)s", 0 },
	};
	char *r, *cause = NULL;

	r = ini_expand("%(x)s|%(y)s%(y)s", v, 3, &cause);
	/* Inserted text is never expanded; the last of a name wins. */
	ASSERT_STREQ(r, "last %(x)s|%%");
	free(r);
	r = ini_expand("%(y)s", NULL, 0, &cause);
	ASSERT_OK(r == NULL);
	ASSERT_STREQ(cause, "%(y)s: unknown name (known: none)");
	free(cause);
	return (0);
}

/* The environment's many ENV_X are listed as one. */
TEST(expand_unknown_env)
{
	const struct ini_var v[] = {
		{ "ENV_HOME", INI_VAR_STRING, "/root", 0 },
		{ "here", INI_VAR_STRING, "/etc", 0 },
		{ "ENV_PATH", INI_VAR_STRING, "/bin", 0 },
		{ "ENV_A", INI_VAR_STRING, "a", 0 },
	};
	char *cause = NULL;

	ASSERT_OK(ini_expand("%(ENV_NOPE)s", v, 4, &cause) == NULL);
	ASSERT_STREQ(cause,
	    "%(ENV_NOPE)s: unknown name (known: ENV_X for each environment "
	    "variable X, here)");
	free(cause);
	return (0);
}

/* Does ini_here(path) give want? */
static int
here_is(const char *path, const char *want)
{
	char *h;
	int ok;

	h = ini_here(path);
	ok = h != NULL && strcmp(h, want) == 0;
	if (!ok)
		fprintf(stderr, "  here \"%s\": \"%s\", want \"%s\"\n", path,
		    h ? h : "(null)", want);
	free(h);
	return (ok);
}

TEST(here)
{
	char cwd[PATH_MAX], want[PATH_MAX + 32], *up;

	ASSERT_OK(here_is("/etc/supervisord.conf", "/etc"));
	ASSERT_OK(here_is("/supervisord.conf", "/"));
	ASSERT_OK(here_is("/a/b/../c/./d.conf", "/a/c"));
	ASSERT_OK(here_is("/a//b///c.conf", "/a/b"));
	ASSERT_OK(here_is("/a/b/", "/a/b"));
	ASSERT_OK(here_is("/../../x", "/"));
	ASSERT_OK(here_is("//a/b", "//a"));
	ASSERT_OK(here_is("///a/b", "/a"));
	ASSERT_OK(here_is("//x", "//"));
	ASSERT_OK(here_is("/", "/"));
	ASSERT_OK(getcwd(cwd, sizeof cwd) != NULL);
	ASSERT_OK(here_is("x.conf", cwd));
	ASSERT_OK(here_is("", cwd));
	ASSERT_OK(here_is("./x.conf", cwd));
	snprintf(want, sizeof want, "%s/sub", strcmp(cwd, "/") == 0 ? "" : cwd);
	ASSERT_OK(here_is("sub/x.conf", want));
	ASSERT_OK(here_is("sub//x.conf", want));
	up = xstrdup(cwd);
	if (strrchr(up, '/') != NULL)
		*(strrchr(up, '/') == up ? up + 1 : strrchr(up, '/')) = '\0';
	ASSERT_OK(here_is("../x.conf", up));
	free(up);
	return (0);
}

/*
 * CPU seconds this process used since t0.  CPU time, not the wall
 * clock: a busy machine must not fail the test, only work that grows
 * faster than the input does.
 */
static double
elapsed(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	return ((double)(t1.tv_sec - t0->tv_sec) +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e9);
}

/*
 * The CPU time allowed for 10 MB (a linear parse takes well under a
 * tenth of a second; a quadratic one, hours): more under valgrind.
 */
static double
time_limit(void)
{
	const char *p = getenv("LD_PRELOAD");

	return (p != NULL && strstr(p, "vgpreload") != NULL ? 300.0 : 10.0);
}

/* Parse n bytes, timed; 0 if it parsed, -1 if it failed. */
static int
timed_parse(const char *buf, size_t n, double *secs, char **cause)
{
	struct ini ini;
	struct timespec t0;
	int rc;

	memset(&ini, 0, sizeof ini);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	rc = ini_parse_buffer(&ini, "big.conf", buf, n, cause);
	*secs = elapsed(&t0);
	ini_clear(&ini);
	return (rc);
}

#define BIG (10 * 1024 * 1024)

TEST(big_files)
{
	/* A tenth under valgrind: still hours if quadratic. */
	size_t big = test_under_valgrind() ? BIG / 10 : BIG;
	char *buf, *cause = NULL;
	size_t n = 0, i;
	double secs;

	buf = xmalloc(big + 64);
	/* Many distinct sections and options, some continued. */
	for (i = 0; n < big; i++)
		n += (size_t)snprintf(
		    buf + n, 64, "[s%zu]\nk%zu = v ; c\n  w\n", i % 50000, i);
	ASSERT_EQ(timed_parse(buf, n, &secs, &cause), 0);
	ASSERT_OK(secs < time_limit());
	/* One 10 MB line, then one 10 MB continued value. */
	memcpy(buf, "[s]\nk = ", 8);
	memset(buf + 8, 'x', big - 8);
	ASSERT_EQ(timed_parse(buf, big, &secs, &cause), 0);
	ASSERT_OK(secs < time_limit());
	for (i = 8; i + 2 < big; i += 3)
		memcpy(buf + i, "\n y", 3);
	ASSERT_EQ(timed_parse(buf, i, &secs, &cause), 0);
	ASSERT_OK(secs < time_limit());
	/* 10 MB of "%(x)s" to expand, and of ';' and '#' to scan. */
	memset(buf + 8, ';', big - 8);
	ASSERT_EQ(timed_parse(buf, big, &secs, &cause), 0);
	ASSERT_OK(secs < time_limit());
	for (i = 8; i + 2 < big; i += 2)
		memcpy(buf + i, "x#", 2);
	ASSERT_EQ(timed_parse(buf, i, &secs, &cause), 0);
	ASSERT_OK(secs < time_limit());
	free(buf);
	return (0);
}

TEST(big_expand)
{
	/* A tenth under valgrind: still hours if quadratic. */
	size_t big = test_under_valgrind() ? BIG / 10 : BIG;
	struct ini_var v = { "x", INI_VAR_STRING, "%(x)s%(x)s", 0 };
	struct timespec t0;
	char *buf, *r, *cause = NULL;
	size_t i;

	buf = xmalloc(big + 1);
	for (i = 0; i + 5 <= big; i += 5)
		memcpy(buf + i, "%(x)s", 5);
	buf[i] = '\0';
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	r = ini_expand(buf, &v, 1, &cause);
	ASSERT_OK(elapsed(&t0) < time_limit());
	ASSERT_OK(r != NULL);
	ASSERT_EQ(strlen(r), 2 * i);
	free(r);
	/* An unterminated key at the end of 10 MB of "((((". */
	memset(buf, '(', big);
	buf[0] = '%';
	buf[big] = '\0';
	r = ini_expand(buf, &v, 1, &cause);
	ASSERT_OK(r == NULL);
	ASSERT_STREQ(cause, "incomplete format key");
	free(cause);
	free(buf);
	return (0);
}

TEST(garbage)
{
	struct ini ini;
	char buf[4096], *cause;
	uint32_t x = 12345;
	size_t i;
	int round, failed = 0;

	for (round = 0; round < 200; round++) {
		for (i = 0; i < sizeof buf; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[i] = (char)(x >> 24);
		}
		memset(&ini, 0, sizeof ini);
		cause = NULL;
		if (ini_parse_buffer(&ini, "g", buf, sizeof buf, &cause) != 0) {
			ASSERT_OK(
			    cause != NULL && strncmp(cause, "g:", 2) == 0);
			failed++;
		}
		free(cause);
		ini_clear(&ini);
	}
	ASSERT_EQ(failed, 200);
	return (0);
}

/* A small deterministic generator for the differential tests. */
static uint32_t
rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (*s);
}

#define PICK(s, a) ((a)[rnd(s) % (sizeof(a) / sizeof((a)[0]))])

/*
 * One random line of the INI grammar, appended to f; a clean line is
 * never one that configparser refuses by itself.
 */
static void
gen_line(FILE *f, uint32_t *s, int clean)
{
	static const char *clean_others[] = { "; x", "# y", "", "  ", "\t",
		"  more", "\tm2", "   ; c", "    x # y", "\343\200\200cont" };
	static const char *headers[] = { "[s1]", "[S1]", "[DEFAULT]", "[ s2 ]",
		"[a]]", "[b] junk", "[]", "[c", "  [s1]", "[s1] ; c", "[s#2]",
		"[x]#y" };
	static const char *keys[] = { "a", "A", "b c", "k1", "Key", "x;y",
		"p#q", "\xc2\xa0k", "[s" };
	static const char *spaces[] = { "", " ", "\t", "  ", "\xe3\x80\x80",
		"\x0b", "\x1c" };
	static const char *delims[] = { "=", ":", "=", " = ", ": ",
		"==", ":=" };
	static const char *values[] = { "v", "x y", "1;2", "p#q", "",
		"%(here)s", "a ;b", "c\t#d", "u:v=w", "; x", "#x", "e\xc2\xa0",
		"[z]" };
	static const char *tails[] = { "", "", "", " ; c", "\t# c", ";c", " #",
		" ;", "#c ;d" };
	static const char *others[] = { "; x", "# y", "  ; z", "", "  ", "\t",
		"junk", "=v", " : v", "\xc2\xa0", "  more", "\tm2", "   ; c",
		"    x # y", "      deep", "\343\200\200cont" };
	static const char *ends[] = { "\n", "\n", "\n", "\n", "\r\n", "\r" };
	unsigned r = rnd(s) % 10;

	if (r < 2 && clean)
		fputs(headers[rnd(s) % 3], f);
	else if (r < 2)
		fputs(PICK(s, headers), f);
	else if (r < 6)
		fprintf(f, "%s%s%s%s%s%s%s", rnd(s) % 4 == 0 ? " " : "",
		    PICK(s, keys), PICK(s, spaces), PICK(s, delims),
		    PICK(s, spaces), PICK(s, values), PICK(s, tails));
	else if (clean)
		fputs(PICK(s, clean_others), f);
	else
		fputs(PICK(s, others), f);
	fputs(PICK(s, ends), f);
}

/* Append the hex of s to b. */
static void
hex_add(char **b, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s), i;

	while (*len + 2 * n + 8 > *cap) {
		*cap = *cap == 0 ? 256 : 2 * *cap;
		*b = xreallocarray(*b, 1, *cap);
	}
	for (i = 0; i < n; i++)
		*len +=
		    (size_t)snprintf(*b + *len, 3, "%02x", (unsigned char)s[i]);
	(*b)[*len] = '\0';
}

/* One case's canonical dump, as the Python script prints it. */
static char *
dump_case(int i, const char *path)
{
	struct ini ini;
	const struct ini_section *sec;
	char *b = NULL, *cause = NULL, head[32];
	size_t len = 0, cap = 0, j, k;

	memset(&ini, 0, sizeof ini);
	snprintf(head, sizeof head, "%d ", i);
	if (ini_load(&ini, path, NULL, 0, &cause) != 0) {
		free(cause);
		xasprintf(&b, "%dE", i);
		return (b);
	}
	xasprintf(&b, "%dD", i);
	len = strlen(b);
	cap = len + 1;
	for (j = 0; j <= ini.nsections; j++) {
		sec = j == 0 ? &ini.defaults : &ini.sections[j - 1];
		if (j > 0) {
			hex_add(&b, &len, &cap, " S");
			hex_add(&b, &len, &cap, sec->name);
		}
		for (k = 0; k < sec->n; k++) {
			hex_add(&b, &len, &cap, " ");
			hex_add(&b, &len, &cap, sec->entries[k].key);
			hex_add(&b, &len, &cap, "=");
			hex_add(&b, &len, &cap, sec->entries[k].value);
		}
	}
	ini_clear(&ini);
	return (b);
}

static const char diff_script[] =
    "import configparser, sys\n"
    "d, n = sys.argv[1], int(sys.argv[2])\n"
    "h = lambda s: s.encode().hex()\n"
    "for i in range(n):\n"
    "    p = configparser.RawConfigParser(\n"
    "        inline_comment_prefixes=(';', '#'), strict=False)\n"
    "    try:\n"
    "        with open('%s/c%d.ini' % (d, i), encoding='utf-8') as f:\n"
    "            p.read_file(f)\n"
    "    except Exception:\n"
    "        print('%dE' % i)\n"
    "        continue\n"
    "    o = ['%dD' % i]\n"
    "    o += [h(' ') + h(k) + h('=') + h(v) for k, v in "
    "p.defaults().items()]\n"
    "    for s in p.sections():\n"
    "        o.append(h(' S') + h(s))\n"
    "        o += [h(' ') + h(k) + h('=') + h(v) for k, v in "
    "p._sections[s].items()]\n"
    "    print(''.join(o))\n";

/* Make tmpdir/sub and write the python script there; 0 or -1. */
static int
diff_setup(const char *sub, const char *script)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s/%s", tmpdir, sub);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		return (-1);
	snprintf(path, sizeof path, "%s/script.py", sub);
	return (put_file(path, script));
}

/* Compare our dump with Python's line; print the case if they differ. */
static int
diff_line(const char *ours, const char *theirs, const char *what, int i)
{
	if (strcmp(ours, theirs) == 0)
		return (0);
	fprintf(stderr, "  %s case %d differs:\n    ours   %s\n    python %s\n",
	    what, i, ours, theirs);
	return (1);
}

TEST(differential_parse)
{
	char path[512], cmd[1200], line[65536], *ours;
	uint32_t seed = 20260101;
	FILE *f, *py;
	int i, k, nl, bad = 0, errors = 0;

	if (access(PYTHON, X_OK) != 0) {
		printf("# SKIP differential_parse: no %s\n", PYTHON);
		return (0);
	}
	ASSERT_EQ(diff_setup("dp", diff_script), 0);
	for (i = 0; i < DIFF_CASES; i++) {
		snprintf(path, sizeof path, "%s/dp/c%d.ini", tmpdir, i);
		ASSERT_OK((f = fopen(path, "w")) != NULL);
		nl = 1 + (int)(rnd(&seed) % 12);
		/* Every other file starts with a header and stays clean. */
		if (i % 2 == 1)
			fputs("[s1]\n", f);
		for (k = 0; k < nl; k++)
			gen_line(f, &seed, i % 2);
		ASSERT_EQ(fclose(f), 0);
	}
	snprintf(cmd, sizeof cmd, "%s %s/dp/script.py %s/dp %d", PYTHON, tmpdir,
	    tmpdir, DIFF_CASES);
	ASSERT_OK((py = popen(cmd, "r")) != NULL);
	for (i = 0; i < DIFF_CASES && fgets(line, sizeof line, py) != NULL;
	     i++) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof path, "%s/dp/c%d.ini", tmpdir, i);
		ours = dump_case(i, path);
		errors += line[strlen(line) - 1] == 'E';
		if (bad < 5)
			bad += diff_line(ours, line, "parse", i);
		else if (strcmp(ours, line) != 0)
			bad++;
		free(ours);
	}
	ASSERT_EQ(pclose(py), 0);
	ASSERT_EQ(i, DIFF_CASES);
	printf("# differential_parse: %d cases, %d errors in both, %d "
	       "differences\n",
	    i, errors, bad);
	ASSERT_EQ(bad, 0);
	/* The grammar must reach both outcomes often. */
	ASSERT_OK(errors > DIFF_CASES / 10 && errors < DIFF_CASES * 9 / 10);
	return (0);
}

/* One random format string for the expansion differential. */
static void
gen_format(char *buf, size_t size, uint32_t *s)
{
	static const char *text[] = { "a", " ", "x/y", "%%", "\xc3\xa9", "" };
	static const char *keys[] = { "s", "n", "m", "z", "c", "u", "e", "q",
		"big", "neg", "nope", "a(b)" };
	static const char *flags[] = { "", "", "-", "0", "+", " ", "#", "-0",
		"+#0", "- ", "#-" };
	static const char *widths[] = { "", "", "1", "5", "12", "0" };
	static const char *precs[] = { "", "", ".", ".0", ".2", ".10" };
	static const char *mods[] = { "", "", "", "h", "l", "L" };
	static const char convs[] = "sssdddiuxXoeEfFgGcrra%q*";
	size_t n = 0;
	int k, parts = 1 + (int)(rnd(s) % 4);

	buf[0] = '\0';
	for (k = 0; k < parts && n + 64 < size; k++) {
		if (rnd(s) % 3 == 0)
			n += (size_t)snprintf(
			    buf + n, size - n, "%s", PICK(s, text));
		else
			n += (size_t)snprintf(buf + n, size - n,
			    "%%(%s)%s%s%s%s%c", PICK(s, keys), PICK(s, flags),
			    PICK(s, widths), PICK(s, precs), PICK(s, mods),
			    convs[rnd(s) % (sizeof convs - 1)]);
	}
	if (rnd(s) % 20 == 0 && n + 3 < size)
		strcat(buf, rnd(s) % 2 ? "%" : "%(s");
}

static const char expand_script[] =
    "import sys\n"
    "m = {'s': 'hello', 'n': 66, 'm': -255, 'z': 0, 'c': 'Z',\n"
    "     'u': 'h\\xe9llo w\\xf6rld', 'e': '', 'q': 'it\\'s \"q\"\\n\\\\',\n"
    "     'big': 1234567890123456789, 'neg': -9223372036854775807,\n"
    "     'a(b)': 'paren'}\n"
    "for line in open(sys.argv[1]):\n"
    "    f = bytes.fromhex(line.strip()).decode()\n"
    "    try:\n"
    "        print((f % m).encode().hex())\n"
    "    except Exception:\n"
    "        print('E')\n";

TEST(differential_expand)
{
	struct ini_var vars[] = {
		{ "s", INI_VAR_STRING, "hello", 0 },
		{ "n", INI_VAR_NUMBER, NULL, 66 },
		{ "m", INI_VAR_NUMBER, NULL, -255 },
		{ "z", INI_VAR_NUMBER, NULL, 0 },
		{ "c", INI_VAR_STRING, "Z", 0 },
		{ "u", INI_VAR_STRING, "h\xc3\xa9llo w\xc3\xb6rld", 0 },
		{ "e", INI_VAR_STRING, "", 0 },
		{ "q", INI_VAR_STRING, "it's \"q\"\n\\", 0 },
		{ "big", INI_VAR_NUMBER, NULL, 1234567890123456789LL },
		{ "neg", INI_VAR_NUMBER, NULL, -9223372036854775807LL },
		{ "a(b)", INI_VAR_STRING, "paren", 0 },
	};
	char fmts[DIFF_CASES][160], path[512], cmd[1200];
	char line[4096], *hex, *r, *cause;
	size_t len, cap;
	uint32_t seed = 777;
	FILE *f, *py;
	int i, bad = 0, errors = 0, unsupported = 0;

	if (access(PYTHON, X_OK) != 0) {
		printf("# SKIP differential_expand: no %s\n", PYTHON);
		return (0);
	}
	ASSERT_EQ(diff_setup("de", expand_script), 0);
	snprintf(path, sizeof path, "%s/de/formats", tmpdir);
	ASSERT_OK((f = fopen(path, "w")) != NULL);
	for (i = 0; i < DIFF_CASES; i++) {
		gen_format(fmts[i], sizeof fmts[i], &seed);
		hex = NULL;
		len = cap = 0;
		hex_add(&hex, &len, &cap, fmts[i]);
		fprintf(f, "%s\n", hex);
		free(hex);
	}
	ASSERT_EQ(fclose(f), 0);
	snprintf(
	    cmd, sizeof cmd, "%s %s/de/script.py %s", PYTHON, tmpdir, path);
	ASSERT_OK((py = popen(cmd, "r")) != NULL);
	for (i = 0; i < DIFF_CASES && fgets(line, sizeof line, py) != NULL;
	     i++) {
		line[strcspn(line, "\n")] = '\0';
		cause = NULL;
		r = ini_expand(
		    fmts[i], vars, sizeof vars / sizeof vars[0], &cause);
		hex = NULL;
		len = cap = 0;
		/* Ours refuses on purpose: a value cannot hold a NUL. */
		if (r == NULL &&
		    (strstr(cause, "unsupported, only") != NULL ||
		        strstr(cause, "0 is not a character") != NULL))
			unsupported++;
		else if (r == NULL)
			hex = xstrdup("E");
		else
			hex_add(&hex, &len, &cap, r);
		errors += r == NULL;
		if (hex != NULL && strcmp(hex, line) != 0 && bad++ < 5)
			fprintf(stderr,
			    "  expand \"%s\": ours %s (%s), python %s\n",
			    fmts[i], hex, cause ? cause : "ok", line);
		free(hex);
		free(r);
		free(cause);
	}
	ASSERT_EQ(pclose(py), 0);
	ASSERT_EQ(i, DIFF_CASES);
	printf("# differential_expand: %d cases, %d errors, %d unsupported, "
	       "%d differences\n",
	    i, errors, unsupported, bad);
	ASSERT_EQ(bad, 0);
	ASSERT_OK(errors > DIFF_CASES / 10 && errors < DIFF_CASES * 9 / 10);
	return (0);
}

int
main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof tmpdir, "%s/test-ini.XXXXXX",
	    t != NULL && *t != '\0' ? t : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	RUN(basic);
	RUN(comments);
	RUN(continuation);
	RUN(continuation_edges);
	RUN(headers);
	RUN(merge);
	RUN(defaults);
	RUN(errors);
	RUN(bad_bytes);
	RUN(newlines);
	RUN(unicode_space);
	RUN(include);
	RUN(include_override_here);
	RUN(include_cycle);
	RUN(include_unreadable);
	RUN(include_errors);
	RUN(include_relative);
	RUN(expand_strings);
	RUN(expand_numbers);
	RUN(expand_marks);
	RUN(expand_forged_marks);
	RUN(expand_errors);
	RUN(expand_no_recursion);
	RUN(expand_unknown_env);
	RUN(here);
	RUN(big_files);
	RUN(big_expand);
	RUN(garbage);
	RUN(differential_parse);
	RUN(differential_expand);
	test_rmtree(tmpdir);
	TEST_MAIN_END();
}
