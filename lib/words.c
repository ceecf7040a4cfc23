/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Command lines to argument vectors and back.  Quoting follows the POSIX
 * shell ('single', "double", backslash) so that commands read as users
 * expect, but nothing is ever expanded: $VAR, globs and ~ stay literal, and
 * there is no shell unless the command asks for one with "sh -c".
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "words.h"
#include "xmalloc.h"

/* A word being built and the words done so far. */
struct words_state {
	char **argv;
	size_t argc;
	size_t argalloc;
	char *word;
	size_t len;
	size_t alloc;
	int inword; /* a word is started, even if empty ("") */
};

/* Append one character to the current word. */
static void
words_putc(struct words_state *ws, char c)
{
	if (ws->len + 1 >= ws->alloc) {
		ws->alloc = ws->alloc == 0 ? 32 : ws->alloc * 2;
		ws->word = xreallocarray(ws->word, ws->alloc, 1);
	}
	ws->word[ws->len++] = c;
	ws->inword = 1;
}

/* End the current word, if any, and add it to argv. */
static void
words_end(struct words_state *ws)
{
	if (!ws->inword)
		return;
	if (ws->argc + 2 > ws->argalloc) {
		ws->argalloc = ws->argalloc == 0 ? 8 : ws->argalloc * 2;
		ws->argv =
		    xreallocarray(ws->argv, ws->argalloc, sizeof *ws->argv);
	}
	ws->argv[ws->argc++] =
	    xstrndup(ws->word == NULL ? "" : ws->word, ws->len);
	ws->argv[ws->argc] = NULL;
	ws->len = 0;
	ws->inword = 0;
}

/*
 * Read a double-quoted string starting after the opening quote at s.
 * Returns a pointer to the closing quote, or NULL if there is none.
 */
static const char *
words_double(struct words_state *ws, const char *s)
{
	ws->inword = 1;
	for (; *s != '"'; s++) {
		if (*s == '\0')
			return (NULL);
		if (*s != '\\') {
			words_putc(ws, *s);
			continue;
		}
		/* Inside double quotes, backslash escapes only these. */
		if (s[1] == '\n')
			s++;
		else if (s[1] != '\0' && strchr("\"\\$`", s[1]) != NULL)
			words_putc(ws, *++s);
		else
			words_putc(ws, '\\');
	}
	return (s);
}

/* Split s into ws; returns 0, or -1 with *why set. */
static int
words_scan(struct words_state *ws, const char *s, const char **why)
{
	const char *end;

	for (; *s != '\0'; s++) {
		switch (*s) {
		case ' ':
		case '\t':
		case '\n':
		case '\r':
		case '\v':
		case '\f':
			words_end(ws);
			break;
		case '\'':
			ws->inword = 1;
			if ((end = strchr(s + 1, '\'')) == NULL) {
				*why = "unterminated single quote";
				return (-1);
			}
			while (++s != end)
				words_putc(ws, *s);
			break;
		case '"':
			if ((s = words_double(ws, s + 1)) == NULL) {
				*why = "unterminated double quote";
				return (-1);
			}
			break;
		case '\\':
			if (*++s == '\0') {
				*why = "trailing backslash";
				return (-1);
			}
			/* Backslash-newline joins lines, as in sh. */
			if (*s != '\n')
				words_putc(ws, *s);
			break;
		default:
			words_putc(ws, *s);
			break;
		}
	}
	words_end(ws);
	return (0);
}

/*
 * Split the command line s into words with shell-like quoting and no
 * expansion.  Returns an owned NULL-terminated array (free it with
 * words_free) and stores the number of words in *n if n is not NULL; an
 * empty or blank s gives zero words.  On an unterminated quote or a
 * trailing backslash, returns NULL and, if cause is not NULL, an owned
 * message in *cause.
 */
char **
words_split(const char *s, size_t *n, char **cause)
{
	struct words_state ws;
	const char *why = NULL;

	memset(&ws, 0, sizeof ws);
	if (s == NULL)
		s = "";
	if (words_scan(&ws, s, &why) != 0) {
		free(ws.word);
		words_free(ws.argv);
		if (cause != NULL)
			*cause = xstrdup(why);
		return (NULL);
	}
	free(ws.word);
	if (ws.argv == NULL)
		ws.argv = xcalloc(1, sizeof *ws.argv);
	if (n != NULL)
		*n = ws.argc;
	return (ws.argv);
}

/* Free a NULL-terminated array of owned strings; NULL is a no-op. */
void
words_free(char **argv)
{
	char **ap;

	if (argv == NULL)
		return;
	for (ap = argv; *ap != NULL; ap++)
		free(*ap);
	free(argv);
}

/* Does word need quoting to survive words_split (or a shell)? */
static int
words_needs_quotes(const char *word)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
	                           "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                           "0123456789@%+=:,./_-";

	return (*word == '\0' || word[strspn(word, safe)] != '\0');
}

/*
 * Join argv into one string for display and logs, single-quoting words that
 * need it so that words_split (and sh) would give argv back.  Returns an
 * owned string; NULL argv gives "".
 */
char *
words_join(char *const *argv)
{
	char *out, *p;
	const char *s;
	size_t i, len = 1;

	for (i = 0; argv != NULL && argv[i] != NULL; i++)
		len += 4 * strlen(argv[i]) + 3;
	p = out = xmalloc(len);
	for (i = 0; argv != NULL && argv[i] != NULL; i++) {
		if (i != 0)
			*p++ = ' ';
		if (!words_needs_quotes(argv[i])) {
			memcpy(p, argv[i], strlen(argv[i]));
			p += strlen(argv[i]);
			continue;
		}
		*p++ = '\'';
		for (s = argv[i]; *s != '\0'; s++) {
			/* A quote ends the quoted part: 'it'\''s'. */
			if (*s == '\'') {
				memcpy(p, "'\\''", 4);
				p += 4;
			} else
				*p++ = *s;
		}
		*p++ = '\'';
	}
	*p = '\0';
	return (out);
}
