/* SPDX-License-Identifier: Apache-2.0 */
/*
 * path.c: lexical path normalisation and gitignore-style matching.
 *
 * Nothing here touches the file system: symlinks are not resolved (the
 * evaluator is pure), so ".." is removed lexically, as Claude Code and Codex
 * do when they compare a tool's path with a rule.
 */
#include <string.h>

#include "policy.h"

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

/* Match pattern[0..plen) against s[0..slen); '*' never crosses '/' unless `across`. */
static bool glob_at(const char *pat, size_t plen, const char *s, size_t slen, bool path_mode,
		    int depth)
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
				/* "**\/" matches zero or more whole components */
				if (glob_at(pat + np + 1, plen - np - 1, s + si, slen - si, path_mode, depth + 1))
					return true;
				for (size_t k = si; k < slen; k++)
					if (s[k] == '/' &&
					    glob_at(pat + np + 1, plen - np - 1, s + k + 1, slen - k - 1,
						    path_mode, depth + 1))
						return true;
				return false;
			}
			for (size_t k = si; k <= slen; k++) {
				if (glob_at(pat + np, plen - np, s + k, slen - k, path_mode, depth + 1))
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

bool str_glob_match(const char *pat, size_t plen, const char *s, size_t slen)
{
	return glob_at(pat, plen, s, slen, false, 0);
}

bool path_glob_match(const char *pattern, size_t plen, const char *path)
{
	size_t len = strlen(path);

	if (plen > 1 && pattern[plen - 1] == '/')
		plen--;
	/* the path itself, or any ancestor directory of it */
	if (glob_at(pattern, plen, path, len, true, 0))
		return true;
	for (size_t k = len; k > 0; k--)
		if (path[k - 1] == '/' && k - 1 > 0 && glob_at(pattern, plen, path, k - 1, true, 0))
			return true;
	return false;
}
