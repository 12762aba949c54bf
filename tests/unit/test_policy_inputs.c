/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_inputs.c: hostile policy inputs. The glob matcher against
 * the backtracking matcher it replaced (an oracle on every small pattern
 * and subject) and on star storms that made the old one exponential; YAML
 * inputs that hung libfyaml or over-read the buffer.
 */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docket/policy.h"
#include "policy/policy.h"
#include "util/alloc.h"
#include "util/error.h"

/*
 * The recursive matcher of policy/path.c up to 420496a, verbatim but for
 * its name: exponential in the number of stars, exact on small inputs.
 */
static bool oracle_at(const char *pat, size_t plen, const char *s, size_t slen, bool path_mode, int depth)
{
	size_t pi = 0, si = 0;

	if (depth > 64)
		return false;
	while (pi < plen) {
		char c = pat[pi];

		if (c == '*') {
			bool dbl = path_mode && pi + 1 < plen && pat[pi + 1] == '*';
			size_t np = pi + (dbl ? 2 : 1);

			if (dbl && np < plen && pat[np] == '/') {
				if (oracle_at(pat + np + 1, plen - np - 1, s + si, slen - si, path_mode, depth + 1))
					return true;
				for (size_t k = si; k < slen; k++)
					if (s[k] == '/' && oracle_at(pat + np + 1, plen - np - 1, s + k + 1, slen - k - 1,
								    path_mode, depth + 1))
						return true;
				return false;
			}
			for (size_t k = si; k <= slen; k++) {
				if (oracle_at(pat + np, plen - np, s + k, slen - k, path_mode, depth + 1))
					return true;
				if (k < slen && path_mode && !dbl && s[k] == '/')
					break;
			}
			return false;
		}
		if (si >= slen)
			return false;
		if (c == '?') {
			if (path_mode && s[si] == '/')
				return false;
		} else if (c != s[si]) {
			return false;
		}
		pi++;
		si++;
	}
	return si == slen;
}

static bool oracle_path(const char *pattern, size_t plen, const char *path)
{
	size_t len = strlen(path);

	if (plen > 1 && pattern[plen - 1] == '/')
		plen--;
	if (oracle_at(pattern, plen, path, len, true, 0))
		return true;
	for (size_t k = len; k > 0; k--)
		if (path[k - 1] == '/' && k - 1 > 0 && oracle_at(pattern, plen, path, k - 1, true, 0))
			return true;
	return false;
}

/* Fill buf with the n-th word over `alpha` (bijective base); returns its length. */
static size_t word(char *buf, size_t n, const char *alpha)
{
	size_t k = strlen(alpha), len = 0;

	while (n > 0) {
		n--;
		buf[len++] = alpha[n % k];
		n /= k;
	}
	buf[len] = '\0';
	return len;
}

/* Every pattern up to 5 characters over {a,/,*,?} against every subject up to 6 over {a,b,/}. */
static void test_glob_oracle(void **state)
{
	char pat[16], sub[16];
	size_t npat = 1 + 4 + 16 + 64 + 256 + 1024, nsub = 1 + 3 + 9 + 27 + 81 + 243 + 729;
	unsigned long checked = 0, matched = 0;

	(void)state;
	for (size_t i = 0; i < npat; i++) {
		size_t plen = word(pat, i, "a/*?");

		for (size_t j = 0; j < nsub; j++) {
			size_t slen = word(sub, j, "ab/");
			bool want = oracle_at(pat, plen, sub, slen, false, 0);

			if (str_glob_match(pat, plen, sub, slen) != want)
				fail_msg("str_glob_match(\"%s\", \"%s\") != %d", pat, sub, want);
			if (sub[0] == '/') {
				want = oracle_path(pat, plen, sub);
				if (path_glob_match(pat, plen, sub) != want)
					fail_msg("path_glob_match(\"%s\", \"%s\") != %d", pat, sub, want);
			}
			matched += want;
			checked++;
		}
	}
	/* the enumeration covered both outcomes */
	assert_true(matched > 1000 && matched < checked - 1000);
}

/* Some continuation of x (over {a,/}, up to 5 characters: enough for a
 * pattern of 5) makes the whole of it match pat: the matcher is alive after x. */
static bool oracle_alive(const char *pat, size_t plen, const char *x)
{
	char buf[32], tail[8];
	size_t xlen = strlen(x);

	for (size_t j = 0; j < 1 + 2 + 4 + 8 + 16 + 32; j++) {
		size_t tlen = word(tail, j, "a/");

		memcpy(buf, x, xlen);
		memcpy(buf + xlen, tail, tlen + 1);
		if (oracle_at(pat, plen, buf, xlen + tlen, true, 0))
			return true;
	}
	return false;
}

/*
 * path_glob_reaches against its definition: the directory (trailing '/'
 * dropped) matches the pattern, or something under it may ("dir/" is a
 * live prefix; "/" only needs itself alive). Every pattern up to 5
 * characters over {a,/,*,?} and every directory up to 5 over {a,b,/}.
 */
static void test_glob_reaches_oracle(void **state)
{
	char pat[16], dir[16], slash[20];
	size_t npat = 1 + 4 + 16 + 64 + 256 + 1024, ndir = 1 + 3 + 9 + 27 + 81 + 243;
	unsigned long checked = 0, reached = 0;

	(void)state;
	for (size_t i = 0; i < npat; i++) {
		size_t plen = word(pat, i, "a/*?"), tlen = plen > 1 && pat[plen - 1] == '/' ? plen - 1 : plen;

		for (size_t j = 0; j < ndir; j++) {
			size_t n = word(dir, j, "ab/");
			bool want;

			if (dir[0] != '/')
				continue;
			while (n > 1 && dir[n - 1] == '/')
				n--;
			memcpy(slash, dir, n);
			memcpy(slash + n, "/", 2);
			dir[n] = '\0';
			want = oracle_at(pat, tlen, dir, n, true, 0) || (n == 1 && oracle_alive(pat, tlen, "/")) ||
			       (n > 1 && oracle_alive(pat, tlen, slash));
			if (path_glob_reaches(pat, plen, dir) != want)
				fail_msg("path_glob_reaches(\"%s\", \"%s\") != %d", pat, dir, want);
			reached += want;
			checked++;
		}
	}
	assert_true(reached > 1000 && reached < checked - 1000);
}

/* "*" repeated n times, then `tail`. */
static char *stars(size_t n, const char *tail)
{
	size_t t = strlen(tail);
	char *p = malloc(n + t + 1);

	assert_non_null(p);
	memset(p, '*', n);
	memcpy(p + n, tail, t + 1);
	return p;
}

/*
 * Star storms (exponential for the old matcher: this test did not finish
 * within the suite's timeout before the fix). The expected values follow
 * from the semantics: any run of stars is "any run" (across '/' once two
 * of them pair up in path mode).
 */
static void test_glob_star_storm(void **state)
{
	const char *deep = "/w/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/src/x.c";
	char *p;

	(void)state;
	p = stars(40, "./src/**");
	assert_false(path_glob_match(p, strlen(p), deep)); /* no "./src" in it */
	assert_false(path_glob_match(p, strlen(p), "/w/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	free(p);
	p = stars(40, "/src/**");
	assert_true(path_glob_match(p, strlen(p), deep));
	assert_false(path_glob_match(p, strlen(p), "/w/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/srcx/y"));
	free(p);
	p = stars(101, "b"); /* odd: 50 "**" then one '*' ending in b */
	assert_true(path_glob_match(p, strlen(p), "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"));
	assert_false(path_glob_match(p, strlen(p), "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	assert_true(str_glob_match(p, strlen(p), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 39));
	assert_false(str_glob_match(p, strlen(p), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 39));
	free(p);
	/* "*a*a*a...*a*b" against a's: polynomial for an NFA, exponential by backtracking */
	{
		char pat[128], sub[128];
		size_t n = 0;

		for (int i = 0; i < 30; i++) {
			pat[n++] = '*';
			pat[n++] = 'a';
		}
		memcpy(pat + n, "*b", 3);
		memset(sub, 'a', 100);
		sub[100] = '\0';
		assert_false(str_glob_match(pat, strlen(pat), sub, 100));
		sub[99] = 'b';
		assert_true(str_glob_match(pat, strlen(pat), sub, 100));
		assert_true(path_glob_match("/**/**/**/**/**/**/**/**/**/**/**/**/**/**/x", 44, "/a/b/x"));
		assert_false(path_glob_match("/**/**/**/**/**/**/**/**/**/**/**/**/**/**/x", 44, "/a/b/y"));
	}
	/* a pattern longer than the matcher's stack state (heap state set) */
	p = stars(9000, "/secret");
	assert_true(path_glob_match(p, strlen(p), "/home/u/secret/key"));
	assert_false(path_glob_match(p, strlen(p), "/home/u/secrets"));
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob_oracle),
		cmocka_unit_test(test_glob_reaches_oracle),
		cmocka_unit_test(test_glob_star_storm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
