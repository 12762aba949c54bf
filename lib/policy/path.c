/* SPDX-License-Identifier: Apache-2.0 */
/*
 * path.c: lexical path normalisation and gitignore-style matching.
 *
 * Nothing here touches the file system: symlinks are not resolved (the
 * evaluator is pure), so ".." is removed lexically, as Claude Code and Codex
 * do when they compare a tool's path with a rule.
 */
#include <stdint.h>
#include <string.h>

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"

int path_normalize(docket_buf *out, const char *path, const char *cwd, const char *home)
{
	size_t base, i, len;
	const char *rest = path;
	int error;

	docket_buf_clear(out);
	if (!path || !*path)
		return docket_error_set(DOCKET_EINVALID, "empty path");
	if (path[0] == '~' && (path[1] == '\0' || path[1] == '/')) {
		if (!home || home[0] != '/')
			return docket_error_set(DOCKET_EINVALID, "path %s needs a home directory", path);
		if ((error = docket_buf_puts(out, home)) < 0)
			return error;
		rest = path + 1;
	} else if (path[0] != '/') {
		if (!cwd || cwd[0] != '/')
			return docket_error_set(DOCKET_EINVALID, "relative path %s needs an absolute cwd", path);
		if ((error = docket_buf_puts(out, cwd)) < 0)
			return error;
	}
	if ((error = docket_buf_putc(out, '/')) < 0 || (error = docket_buf_puts(out, rest)) < 0)
		return error;

	/* collapse in place: components between slashes */
	len = out->len;
	base = 0;
	i = 0;
	{
		char *p = out->ptr;
		size_t w = 0;

		while (i < len) {
			size_t s, e;

			while (i < len && p[i] == '/')
				i++;
			s = i;
			while (i < len && p[i] != '/')
				i++;
			e = i;
			if (e == s)
				break;
			if (e - s == 1 && p[s] == '.')
				continue;
			if (e - s == 2 && p[s] == '.' && p[s + 1] == '.') {
				while (w > base && p[w - 1] != '/')
					w--;
				if (w > base)
					w--;
				continue;
			}
			p[w++] = '/';
			memmove(p + w, p + s, e - s);
			w += e - s;
		}
		if (w == 0)
			p[w++] = '/';
		p[w] = '\0';
		out->len = w;
	}
	return 0;
}

bool path_is_under(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return path[0] == '/';
	if (strncmp(path, root, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/';
}

/*
 * Glob matching by simulating the pattern as an NFA (Thompson): the state
 * set is a bitset over pattern offsets (the start of each token), advanced
 * one subject character at a time, so a match costs O(plen * slen) however
 * many stars the pattern holds (a backtracking matcher is exponential in
 * them: "****...x" stalled for seconds). Tokens, read left to right:
 *
 *   literal, '?'    one character ('?': not '/' in path mode)
 *   '*'             any run; in path mode a run without '/'
 *   '**'            (path mode) any run, '/' included
 *   '**' '/'        (path mode) zero or more whole components: "" or a run
 *                   ending in '/'
 *
 * Star tokens may match nothing: an epsilon edge to the next token, taken
 * by closure(). A '**' '/' token enters its run on any character and
 * leaves it after a '/'.
 */
enum { TOK_LIT, TOK_ONE, TOK_STAR, TOK_ANY, TOK_COMPONENTS };

typedef struct glob_nfa {
	const char *pat;
	size_t plen;
	bool path_mode;
	uint64_t *cur, *next; /* (plen + 1) bits each; bit plen: accepted */
	size_t words;
	size_t first;         /* no state below it is set (edges only go forward) */
} glob_nfa;

#define GLOB_STACK_WORDS 64 /* patterns up to 4095 bytes need no heap */

static int tok_at(const glob_nfa *g, size_t i, size_t *len)
{
	const char *p = g->pat;

	*len = 1;
	if (p[i] == '?')
		return TOK_ONE;
	if (p[i] != '*')
		return TOK_LIT;
	if (!g->path_mode)
		return TOK_ANY;
	if (i + 1 < g->plen && p[i + 1] == '*') {
		if (i + 2 < g->plen && p[i + 2] == '/') {
			*len = 3;
			return TOK_COMPONENTS;
		}
		*len = 2;
		return TOK_ANY;
	}
	return TOK_STAR;
}

static inline void bit_set(uint64_t *b, size_t i)
{
	b[i / 64] |= (uint64_t)1 << (i % 64);
}

static inline bool bit_get(const uint64_t *b, size_t i)
{
	return (b[i / 64] >> (i % 64)) & 1;
}

/*
 * Add what the epsilon edges (stars matching nothing) reach; they only go
 * forward, so one walk over the tokens is enough.
 */
static void closure(const glob_nfa *g, uint64_t *set)
{
	size_t len;

	for (size_t i = g->first; i < g->plen; i += len) {
		int t = tok_at(g, i, &len);

		if ((t == TOK_STAR || t == TOK_ANY || t == TOK_COMPONENTS) && bit_get(set, i))
			bit_set(set, i + len);
	}
}

/*
 * Advance the state set over one character; false once no state is left.
 * A "**" "/" token at i has a second state, i + 1 (inside the token, so no
 * other token uses it): within the run, which only a '/' may end, so no
 * epsilon edge leaves it.
 */
static bool step(glob_nfa *g, char ch)
{
	uint64_t *tmp, any = 0;
	size_t len;

	memset(g->next, 0, g->words * sizeof(*g->next));
	for (size_t i = g->first; i < g->plen; i += len) {
		int t = tok_at(g, i, &len);
		bool at = bit_get(g->cur, i), in_run = t == TOK_COMPONENTS && bit_get(g->cur, i + 1);

		if (!at && !in_run)
			continue;
		if ((t == TOK_LIT && g->pat[i] == ch) || (t == TOK_ONE && !(g->path_mode && ch == '/')))
			bit_set(g->next, i + 1);
		else if (t == TOK_ANY || (t == TOK_STAR && ch != '/'))
			bit_set(g->next, i);
		else if (t == TOK_COMPONENTS)
			bit_set(g->next, ch == '/' ? i + len : i + 1);
		if (t == TOK_COMPONENTS && ch == '/')
			bit_set(g->next, i + 1);
	}
	tmp = g->cur;
	g->cur = g->next;
	g->next = tmp;
	closure(g, g->cur);
	for (size_t w = 0; w < g->words; w++)
		any |= g->cur[w];
	return any != 0;
}

/*
 * Start g on pattern[0..plen) in state `at` (a token boundary: 0, or the end
 * of a literal run): the stack words, or heap ones for long patterns.
 * false: no memory.
 */
static bool glob_start(glob_nfa *g, const char *pat, size_t plen, bool path_mode, uint64_t *stack, uint64_t **heap,
		       size_t at)
{
	g->pat = pat;
	g->plen = plen;
	g->path_mode = path_mode;
	g->first = at;
	g->words = plen / 64 + 1;
	g->cur = stack;
	g->next = stack + GLOB_STACK_WORDS;
	*heap = NULL;
	if (g->words > GLOB_STACK_WORDS) {
		if (!(*heap = docket_calloc(2 * g->words, sizeof(**heap))))
			return false;
		g->cur = *heap;
		g->next = *heap + g->words;
	}
	memset(g->cur, 0, g->words * sizeof(*g->cur));
	bit_set(g->cur, at);
	closure(g, g->cur);
	return true;
}

/* pat[lit..plen) is "**" "/" then a literal tail (path mode): its length,
 * else 0. */
static size_t tail_components_literal(const char *pat, size_t lit, size_t plen, bool path_mode)
{
	if (!path_mode || plen - lit < 4 || memcmp(pat + lit, "**/", 3) != 0)
		return 0;
	for (size_t i = lit + 3; i < plen; i++)
		if (pat[i] == '*' || pat[i] == '?')
			return 0;
	return plen - lit - 3;
}

/*
 * "L" "**" "/" "T" with L matched and T literal ("./.env" in a Claude Code
 * rule is "ROOT" "**" "/" ".env"): s[lit..) ends in T (or, with `prefixes`,
 * a prefix of it ending before a '/' does) where T starts a component.
 */
static bool match_components_literal(const char *t, size_t tl, const char *s, size_t lit, size_t slen, bool prefixes)
{
	for (size_t e = slen; e >= lit + tl; e--) {
		size_t st = e - tl;   /* tl > 0: e never wraps */

		if ((e == slen || (prefixes && e > 0 && s[e] == '/')) && (st == lit || s[st - 1] == '/') &&
		    memcmp(s + st, t, tl) == 0)
			return true;
	}
	return false;
}

/*
 * Match pattern[0..plen) against s[0..slen); with `prefixes`, also every
 * prefix of s that ends just before a '/' (not the leading one): a path
 * pattern matches everything under a directory it matches.
 */
/*
 * The pattern's leading literals, short of its end: over them the state set
 * is the one position reached, and it cannot accept before the pattern's
 * end, so one comparison matches them.
 */
static size_t literal_run(const char *pat, size_t plen)
{
	size_t lit = 0;

	while (lit + 1 < plen && pat[lit] != '*' && pat[lit] != '?')
		lit++;
	return lit;
}

/* pat[lit..plen) is stars that match any run, '/' included: "**" in path
 * mode, any stars otherwise. */
static bool tail_is_any(const char *pat, size_t lit, size_t plen, bool path_mode)
{
	if (path_mode)
		return plen - lit == 2 && pat[lit] == '*' && pat[lit + 1] == '*';
	while (lit < plen && pat[lit] == '*')
		lit++;
	return lit == plen;
}

/*
 * Match pattern[0..plen) against s[0..slen); with `prefixes`, also every
 * prefix of s that ends just before a '/' (not the leading one): a path
 * pattern matches everything under a directory it matches.
 */
static bool glob_run(const char *pat, size_t plen, const char *s, size_t slen, bool path_mode, bool prefixes)
{
	uint64_t stack[2 * GLOB_STACK_WORDS];
	glob_nfa g;
	uint64_t *heap = NULL;
	bool matched = false;
	size_t lit = literal_run(pat, plen), tl;

	if (lit > slen || memcmp(pat, s, lit) != 0)
		return false;
	/* what most rules are, decided without the automaton: a directory and
	 * any run under it ... */
	if (lit < plen && tail_is_any(pat, lit, plen, path_mode))
		return true;
	/* ... a literal path (pat[lit] is its last character) ... */
	if (lit + 1 == plen && pat[lit] != '*' && pat[lit] != '?')
		return slen > lit && s[lit] == pat[lit] && (slen == plen || (prefixes && s[plen] == '/'));
	/* ... and a literal name at any depth under a directory */
	if ((tl = tail_components_literal(pat, lit, plen, path_mode)) > 0)
		return match_components_literal(pat + plen - tl, tl, s, lit, slen, prefixes);
	/* no memory: no match (a multi-kilobyte glob under memory pressure) */
	if (!glob_start(&g, pat, plen, path_mode, stack, &heap, lit))
		return false;
	for (size_t k = lit; k < slen && !matched; k++) {
		if (prefixes && k > 0 && s[k] == '/' && bit_get(g.cur, plen))
			matched = true;
		else if (!step(&g, s[k]))
			break;
	}
	/* a dead state set (the loop's early break) holds no accepting bit */
	if (!matched)
		matched = bit_get(g.cur, plen);
	docket_free(heap);
	return matched;
}

bool path_glob_reaches(const char *pattern, size_t plen, const char *dir)
{
	uint64_t stack[2 * GLOB_STACK_WORDS];
	glob_nfa g;
	uint64_t *heap = NULL;
	size_t n = strlen(dir);
	bool alive = true;
	size_t lit;

	if (plen > 1 && pattern[plen - 1] == '/')
		plen--;
	while (n > 1 && dir[n - 1] == '/')
		n--;
	/* over the pattern's literal run the automaton is one position: dir
	 * within it is alive when it is a prefix, and alive after "dir/" when
	 * a '/' follows (it cannot have matched: the run stops short of the
	 * end); dir past it starts the automaton at the run's end */
	lit = literal_run(pattern, plen);
	if (memcmp(dir, pattern, n < lit ? n : lit) != 0)
		return false;
	if (n < lit)
		return (n == 1 && dir[0] == '/') || pattern[n] == '/';
	if (!glob_start(&g, pattern, plen, true, stack, &heap, lit))
		return true;   /* no memory: cannot tell, so it may */
	for (size_t k = lit; k < n && alive; k++)
		alive = step(&g, dir[k]);
	/* dir itself matched (everything under it does), or a state is left after "dir/" */
	alive = alive && (bit_get(g.cur, plen) || (n == 1 && dir[0] == '/') || step(&g, '/'));
	docket_free(heap);
	return alive;
}

bool str_glob_match(const char *pat, size_t plen, const char *s, size_t slen)
{
	return glob_run(pat, plen, s, slen, false, false);
}

bool path_glob_match(const char *pattern, size_t plen, const char *path)
{
	if (plen > 1 && pattern[plen - 1] == '/')
		plen--;
	/* the path itself, or any ancestor directory of it */
	return glob_run(pattern, plen, path, strlen(path), true, true);
}
