/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Unit tests for lib/pyshlex.c: one fixed case or more per rule of
 * shlex.split() and dict_of_key_value_pairs(), then a differential test
 * against the real thing when /usr/bin/python3 has supervisor.
 */

#include "config.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pyshlex.h"
#include "test.h"
#include "words.h"

typedef char **(*lex_fn)(const char *, size_t *, char **);

/* The Python side of the differential test. */
#define PYTHON "/usr/bin/python3"
#define DIFF_COUNT 3000

static const char diff_script[] =
    "import sys\n"
    "try:\n"
    "    import shlex\n"
    "    import supervisor.datatypes as d\n"
    "except Exception as e:\n"
    "    print('skip: %s' % e)\n"
    "    sys.exit(0)\n"
    "def enc(f, s):\n"
    "    try:\n"
    "        r = f(s)\n"
    "    except ValueError as e:\n"
    "        return 'E' + str(e).encode('utf-8', 'surrogateescape').hex()\n"
    "    return 'O' + ''.join('.' + w.encode('utf-8',\n"
    "        'surrogateescape').hex() for w in r)\n"
    "def pairs(s):\n"
    "    return ['%s=%s' % kv for kv in "
    "d.dict_of_key_value_pairs(s).items()]\n"
    "print('ready')\n"
    "for line in open(sys.argv[1]):\n"
    "    s = bytes.fromhex(line.strip()).decode('utf-8', 'surrogateescape')\n"
    "    print(enc(shlex.split, s) + '|' + enc(pairs, s))\n";

/*
 * Run fn on s and compare with the expected strings (a NULL-terminated
 * list); returns 1 if they match.
 */
static int
lex_is(lex_fn fn, const char *s, ...)
{
	va_list ap;
	char **argv, *cause = NULL;
	const char *want;
	size_t n, i = 0;
	int ok = 1;

	if ((argv = fn(s, &n, &cause)) == NULL) {
		fprintf(stderr, "  \"%s\": %s\n", s, cause);
		free(cause);
		return (0);
	}
	va_start(ap, s);
	while ((want = va_arg(ap, const char *)) != NULL) {
		if (i >= n || strcmp(argv[i], want) != 0) {
			fprintf(stderr, "  \"%s\": word %zu \"%s\" != \"%s\"\n",
			    s, i, i < n ? argv[i] : "(none)", want);
			ok = 0;
			break;
		}
		i++;
	}
	va_end(ap);
	if (ok && (i != n || argv[n] != NULL)) {
		fprintf(stderr, "  \"%s\": %zu words, want %zu\n", s, n, i);
		ok = 0;
	}
	words_free(argv);
	return (ok);
}

/* Run fn on s, which must fail with cause want. */
static int
lex_fails(lex_fn fn, const char *s, const char *want)
{
	char **argv, *cause = NULL;
	size_t n = 99;
	int ok;

	if ((argv = fn(s, &n, &cause)) != NULL) {
		fprintf(stderr, "  \"%s\": no error\n", s);
		words_free(argv);
		return (0);
	}
	ok = cause != NULL && strcmp(cause, want) == 0 && n == 99;
	if (!ok)
		fprintf(stderr, "  \"%s\": \"%s\" != \"%s\"\n", s,
		    cause == NULL ? "(null)" : cause, want);
	free(cause);
	return (ok);
}

#define SPLIT_IS(...)                                                          \
	ASSERT_OK(lex_is(pyshlex_split, __VA_ARGS__, (char *)NULL))
#define PAIRS_IS(...)                                                          \
	ASSERT_OK(lex_is(pyshlex_pairs, __VA_ARGS__, (char *)NULL))
#define UNEXPECTED(s)                                                          \
	ASSERT_OK(lex_fails(pyshlex_pairs, (s),                                \
	    "Unexpected end of key/value pairs in value '" s "'"))

TEST(split_plain)
{
	SPLIT_IS("sleep 10", "sleep", "10");
	SPLIT_IS(" a\tb\rc\nd ", "a", "b", "c", "d");
	/* Only space, tab, CR and LF separate words. */
	SPLIT_IS("a\vb\fc", "a\vb\fc");
	/* No comments and no punctuation. */
	SPLIT_IS("a #b c#d", "a", "#b", "c#d");
	SPLIT_IS("a;b|c&&(d) $X=1", "a;b|c&&(d)", "$X=1");
	return (0);
}

TEST(split_empty)
{
	char **argv;
	size_t n = 99;

	argv = pyshlex_split("", &n, NULL);
	ASSERT_OK(argv != NULL && argv[0] == NULL);
	ASSERT_EQ(n, 0);
	words_free(argv);
	argv = pyshlex_split(" \t\r\n ", NULL, NULL);
	ASSERT_OK(argv != NULL && argv[0] == NULL);
	words_free(argv);
	argv = pyshlex_split(NULL, &n, NULL);
	ASSERT_OK(argv != NULL && argv[0] == NULL);
	words_free(argv);
	return (0);
}

TEST(split_single_quotes)
{
	SPLIT_IS("echo 'a b'", "echo", "a b");
	/* Nothing is special inside, not even a backslash. */
	SPLIT_IS("'a\\b' '\\' '\"' '#'", "a\\b", "\\", "\"", "#");
	SPLIT_IS("'a\nb'", "a\nb");
	return (0);
}

TEST(split_double_quotes)
{
	SPLIT_IS("echo \"a b\"", "echo", "a b");
	SPLIT_IS("\"it's\"", "it's");
	SPLIT_IS("\"a\nb\"", "a\nb");
	/* Backslash escapes only " and itself ... */
	SPLIT_IS("\"\\\"\" \"\\\\\"", "\"", "\\");
	/* ... and is kept before anything else, even $, ` and newline. */
	SPLIT_IS("\"\\$\\`\\n\\'\"", "\\$\\`\\n\\'");
	SPLIT_IS("\"a\\\nb\"", "a\\\nb");
	return (0);
}

TEST(split_empty_words)
{
	SPLIT_IS("\"\"", "");
	SPLIT_IS("''", "");
	SPLIT_IS("a '' \"\" b", "a", "", "", "b");
	SPLIT_IS("''\"\"", "");
	SPLIT_IS("x ''", "x", "");
	return (0);
}

TEST(split_joined)
{
	/* Quoted and unquoted parts make one word. */
	SPLIT_IS("a'b c'\"d e\"f", "ab cd ef");
	SPLIT_IS("x'y'z \"\"w", "xyz", "w");
	return (0);
}

TEST(split_backslash)
{
	SPLIT_IS("a\\ b", "a b");
	SPLIT_IS("\\'x\\\" \\#", "'x\"", "#");
	SPLIT_IS("\\\\", "\\");
	/* Backslash-newline is a newline, not a line join. */
	SPLIT_IS("a\\\nb", "a\nb");
	SPLIT_IS("\\\n", "\n");
	SPLIT_IS("\\a\\b", "ab");
	return (0);
}

TEST(split_errors)
{
	ASSERT_OK(
	    lex_fails(pyshlex_split, "echo 'abc", "No closing quotation"));
	ASSERT_OK(lex_fails(pyshlex_split, "\"abc", "No closing quotation"));
	ASSERT_OK(lex_fails(pyshlex_split, "\"a\\\"", "No closing quotation"));
	ASSERT_OK(lex_fails(pyshlex_split, "'", "No closing quotation"));
	ASSERT_OK(lex_fails(pyshlex_split, "abc\\", "No escaped character"));
	ASSERT_OK(lex_fails(pyshlex_split, "\\", "No escaped character"));
	ASSERT_OK(lex_fails(pyshlex_split, "\"ab\\", "No escaped character"));
	ASSERT_OK(pyshlex_split("'", NULL, NULL) == NULL);
	return (0);
}

TEST(split_utf8)
{
	/* Bytes pass through, valid UTF-8 or not. */
	SPLIT_IS(
	    "caf\xc3\xa9 '\xe2\x82\xac 1'", "caf\xc3\xa9", "\xe2\x82\xac 1");
	SPLIT_IS("\xff\\\xfe \"\xc3\"", "\xff\xfe", "\xc3");
	return (0);
}

TEST(pairs_plain)
{
	PAIRS_IS("A=1,B=2", "A=1", "B=2");
	PAIRS_IS(" A = 1 ,\tB\n=\r2 ", "A=1", "B=2");
	PAIRS_IS("A=1,", "A=1");
	return (0);
}

TEST(pairs_empty)
{
	char **argv;
	size_t n = 99;

	argv = pyshlex_pairs("", &n, NULL);
	ASSERT_OK(argv != NULL && argv[0] == NULL);
	ASSERT_EQ(n, 0);
	words_free(argv);
	argv = pyshlex_pairs(" \n # only a comment", NULL, NULL);
	ASSERT_OK(argv != NULL && argv[0] == NULL);
	words_free(argv);
	argv = pyshlex_pairs(NULL, &n, NULL);
	ASSERT_OK(argv != NULL && argv[0] == NULL);
	words_free(argv);
	return (0);
}

TEST(pairs_wordchars)
{
	PAIRS_IS("PATH=/usr/bin:/bin,V=1.2+x-(y)", "PATH=/usr/bin:/bin",
	    "V=1.2+x-(y)");
	PAIRS_IS("a_b=C_d9", "a_b=C_d9");
	/* Anything else ends a word and is a token by itself. */
	PAIRS_IS("A=x;B=y", "A=x", "B=y");
	PAIRS_IS("A=x%B=y", "A=x", "B=y");
	PAIRS_IS("A=%", "A=%");
	PAIRS_IS("A=a\\b=c", "A=a", "b=c");
	PAIRS_IS("A=\\", "A=\\");
	PAIRS_IS("===", "===");
	/* \v is not whitespace. */
	PAIRS_IS("A=\v", "A=\v");
	return (0);
}

TEST(pairs_fourth_token)
{
	/* Whatever follows KEY = VALUE is skipped, comma or not. */
	PAIRS_IS("A=1 B", "A=1");
	PAIRS_IS("A=1 x B=2", "A=1", "B=2");
	PAIRS_IS("A=1=B=2", "A=1", "B=2");
	return (0);
}

TEST(pairs_quotes)
{
	PAIRS_IS("A=\"x,y\",B='a b'", "A=x,y", "B=a b");
	PAIRS_IS("A=\"\",B=''", "A=", "B=");
	PAIRS_IS("A='#x\\'", "A=#x\\");
	/* All quotes at either end are stripped ... */
	PAIRS_IS("A='\"x\"'", "A=x");
	PAIRS_IS("A=\"''\"", "A=");
	/* ... but the key keeps its quotes. */
	PAIRS_IS("'K'=v", "'K'=v");
	PAIRS_IS("\"a b\"=c", "\"a b\"=c");
	return (0);
}

TEST(pairs_quote_ends_token)
{
	/* A quoted token ends at its closing quote. */
	PAIRS_IS("A=\"x\"y B=1", "A=x", "B=1");
	PAIRS_IS("A='x'\"y\"", "A=x");
	return (0);
}

TEST(pairs_quote_in_word)
{
	/* Inside a word, quotes are ordinary characters. */
	PAIRS_IS("A=x'y'", "A=x'y");
	PAIRS_IS("A=a\"b c\"", "A=a\"b");
	PAIRS_IS("A=a\"b,B=c\"d", "A=a\"b", "B=c\"d");
	return (0);
}

TEST(pairs_comments)
{
	PAIRS_IS("A=1 # B=2", "A=1");
	PAIRS_IS("A=1 # B=2\n,B=3", "A=1", "B=3");
	PAIRS_IS("#x\nA=1", "A=1");
	/* A comment inside a word does not end the word. */
	PAIRS_IS("A=ab#c\rd\nef,B=2", "A=abef", "B=2");
	PAIRS_IS("A=ab#c", "A=ab");
	/* In quotes, # is an ordinary character. */
	PAIRS_IS("A=\"a#b\"", "A=a#b");
	return (0);
}

TEST(pairs_repeated)
{
	PAIRS_IS("A=1,B=2,A=3", "A=3", "B=2");
	PAIRS_IS("A=1,A=2,A=3", "A=3");
	return (0);
}

TEST(pairs_utf8)
{
	/* A code point outside wordchars is one token, however long. */
	PAIRS_IS("A=\xc3\xa9", "A=\xc3\xa9");
	PAIRS_IS("A=\xc3\xa9\xc3\xa9", "A=\xc3\xa9");
	PAIRS_IS("A=\xe2\x82\xac\xe2\x82\xac", "A=\xe2\x82\xac");
	PAIRS_IS("A=\xf0\x9f\x98\x80x", "A=\xf0\x9f\x98\x80");
	PAIRS_IS("A=x\xc3\xa9"
	         "B=1",
	    "A=x", "B=1");
	PAIRS_IS("A='\xc3\xa9 \xe2\x82\xac'", "A=\xc3\xa9 \xe2\x82\xac");
	/* Each byte of invalid UTF-8 is one token. */
	PAIRS_IS("A=\xff\xfe", "A=\xff");
	PAIRS_IS("A=\xe2\x82", "A=\xe2");
	PAIRS_IS("A=\xc0\x80", "A=\xc0");
	/* Overlong, surrogate and too-large sequences are invalid. */
	PAIRS_IS("\xf4\x8f\xbf\xbf=1", "\xf4\x8f\xbf\xbf=1");
	UNEXPECTED("\xf4\x90\x80\x80=1");
	PAIRS_IS("\xed\x9f\xbf=1", "\xed\x9f\xbf=1");
	UNEXPECTED("\xed\xa0\x80=1");
	PAIRS_IS("\xe0\xa0\x80=1", "\xe0\xa0\x80=1");
	UNEXPECTED("\xe0\x9f\xbf=1");
	PAIRS_IS("\xf0\x90\x80\x80=1", "\xf0\x90\x80\x80=1");
	UNEXPECTED("\xf0\x8f\xbf\xbf=1");
	PAIRS_IS("\xc2\x80=1", "\xc2\x80=1");
	UNEXPECTED("\xc1\xbf=1");
	UNEXPECTED("\xf5\x80\x80\x80=1");
	return (0);
}

TEST(pairs_errors)
{
	UNEXPECTED("A");
	UNEXPECTED("A=");
	UNEXPECTED("A=1,B");
	UNEXPECTED("A:1");
	UNEXPECTED("A 1");
	UNEXPECTED("A=1 B=2");
	UNEXPECTED("A=x%y");
	ASSERT_OK(lex_fails(pyshlex_pairs, "A='x", "No closing quotation"));
	ASSERT_OK(lex_fails(pyshlex_pairs, "A=\"x'", "No closing quotation"));
	/* The lexer runs first: its error wins. */
	ASSERT_OK(lex_fails(pyshlex_pairs, "A 'x", "No closing quotation"));
	ASSERT_OK(pyshlex_pairs("A", NULL, NULL) == NULL);
	return (0);
}

/* A small fixed-seed generator, the same on every libc. */
static uint32_t
diff_rand(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return (*state);
}

/* Append a random input of the tricky characters to fp, in hex. */
static void
diff_input(FILE *fp, uint32_t *state, char *buf, size_t size)
{
	static const char *const alpha[] = { " ", "\t", "\n", "\r", "'", "\"",
		"\\", "=", ",", "#", "/", ".", "+", "-", "(", ")", ":", "a",
		"b", "K", "z", "0", "9", "_", "%", "\xc3\xa9", "\xe2\x82\xac",
		"\xf0\x9f\x98\x80", "\xff", "\xe2\x82", "\v", ";" };
	static const char *const pair[] = { "A=", "B=", "K_1=", ",", "=", "'",
		"\"", "x", "/p:q", "#" };
	size_t len, i, used = 0, nalpha = sizeof alpha / sizeof alpha[0];
	const char *piece;
	int structured = diff_rand(state) % 2;

	*buf = '\0';
	len = diff_rand(state) % 16;
	for (i = 0; i < len; i++) {
		if (structured && diff_rand(state) % 2)
			piece = pair[diff_rand(state) %
			    (sizeof pair / sizeof pair[0])];
		else
			piece = alpha[diff_rand(state) % nalpha];
		if (used + strlen(piece) < size) {
			memcpy(buf + used, piece, strlen(piece) + 1);
			used += strlen(piece);
		}
	}
	for (i = 0; buf[i] != '\0'; i++)
		fprintf(fp, "%02x", (unsigned char)buf[i]);
	fputc('\n', fp);
}

/* Encode fn(s) as the Python script does into out (an open memstream). */
static int
diff_encode(FILE *out, lex_fn fn, const char *s)
{
	char **argv, *cause = NULL;
	const char *p;
	size_t i;

	if ((argv = fn(s, NULL, &cause)) == NULL) {
		fputc('E', out);
		for (p = cause; *p != '\0'; p++)
			fprintf(out, "%02x", (unsigned char)*p);
		free(cause);
		return (0);
	}
	fputc('O', out);
	for (i = 0; argv[i] != NULL; i++) {
		fputc('.', out);
		for (p = argv[i]; *p != '\0'; p++)
			fprintf(out, "%02x", (unsigned char)*p);
	}
	words_free(argv);
	return (1);
}

/* Decode one hex line into buf (at least strlen(line) / 2 + 1 bytes). */
static void
diff_unhex(const char *line, char *buf)
{
	unsigned int c;

	while (sscanf(line, "%2x", &c) == 1) {
		*buf++ = (char)c;
		line += 2;
	}
	*buf = '\0';
}

/*
 * Compare each Python answer from py with ours; returns the number of
 * mismatches and adds to the ok counts.
 */
static int
diff_compare(FILE *in, FILE *py, int *nsplit, int *npairs, int *seen)
{
	char *line = NULL, *want = NULL, *got = NULL, buf[256];
	size_t linesize = 0, wantsize = 0, gotsize;
	int bad = 0;
	FILE *out;

	while (getline(&line, &linesize, in) != -1) {
		if (getline(&want, &wantsize, py) == -1)
			break;
		want[strcspn(want, "\n")] = '\0';
		line[strcspn(line, "\n")] = '\0';
		diff_unhex(line, buf);
		if ((out = open_memstream(&got, &gotsize)) == NULL)
			break;
		*nsplit += diff_encode(out, pyshlex_split, buf);
		fputc('|', out);
		*npairs += diff_encode(out, pyshlex_pairs, buf);
		fclose(out);
		if (strcmp(got, want) != 0 && bad++ < 5)
			fprintf(stderr,
			    "  input %s:\n    python %s\n    ours   %s\n", line,
			    want, got);
		free(got);
		(*seen)++;
	}
	free(line);
	free(want);
	return (bad);
}

/* Write the inputs and the script to dir; 0 or -1. */
static int
diff_write(const char *dir)
{
	char path[512], buf[256];
	uint32_t state = 20260101;
	FILE *fp;
	int i;

	snprintf(path, sizeof path, "%s/t.py", dir);
	if ((fp = fopen(path, "w")) == NULL)
		return (-1);
	fputs(diff_script, fp);
	fclose(fp);
	snprintf(path, sizeof path, "%s/in", dir);
	if ((fp = fopen(path, "w")) == NULL)
		return (-1);
	for (i = 0; i < DIFF_COUNT; i++)
		diff_input(fp, &state, buf, sizeof buf);
	return (fclose(fp) == 0 ? 0 : -1);
}

TEST(differential)
{
	char dir[] = "/tmp/test-pyshlex.XXXXXX", cmd[1200], path[512];
	char first[256] = "";
	int bad = -1, nsplit = 0, npairs = 0, seen = 0;
	FILE *py, *in;

	if (access(PYTHON, X_OK) != 0) {
		printf("# skip: no %s\n", PYTHON);
		return (0);
	}
	ASSERT_OK(mkdtemp(dir) != NULL);
	ASSERT_OK(diff_write(dir) == 0);
	snprintf(cmd, sizeof cmd, "%s %s/t.py %s/in", PYTHON, dir, dir);
	snprintf(path, sizeof path, "%s/in", dir);
	py = popen(cmd, "r");
	in = fopen(path, "r");
	if (py != NULL && in != NULL &&
	    fgets(first, sizeof first, py) != NULL &&
	    strcmp(first, "ready\n") == 0)
		bad = diff_compare(in, py, &nsplit, &npairs, &seen);
	if (in != NULL)
		fclose(in);
	if (py != NULL)
		pclose(py);
	test_rmtree(dir);
	if (strncmp(first, "skip: ", 6) == 0) {
		printf("# %s", first);
		return (0);
	}
	printf("# differential: %d inputs, %d mismatches; ok from split %d, "
	       "from pairs %d\n",
	    seen, bad, nsplit, npairs);
	ASSERT_EQ(bad, 0);
	ASSERT_EQ(seen, DIFF_COUNT);
	return (0);
}

int
main(void)
{
	RUN(split_plain);
	RUN(split_empty);
	RUN(split_single_quotes);
	RUN(split_double_quotes);
	RUN(split_empty_words);
	RUN(split_joined);
	RUN(split_backslash);
	RUN(split_errors);
	RUN(split_utf8);
	RUN(pairs_plain);
	RUN(pairs_empty);
	RUN(pairs_wordchars);
	RUN(pairs_fourth_token);
	RUN(pairs_quotes);
	RUN(pairs_quote_ends_token);
	RUN(pairs_quote_in_word);
	RUN(pairs_comments);
	RUN(pairs_repeated);
	RUN(pairs_utf8);
	RUN(pairs_errors);
	RUN(differential);
	TEST_MAIN_END();
}
