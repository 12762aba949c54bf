/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shvia.c: programs that run other programs through their options, their
 * configuration or the environment (docs/policy.md, "Commands run through
 * options, config and the environment"): `git -c core.pager=...`,
 * `GIT_SSH_COMMAND=...`, sed's `e`, awk's `system(`, `tar
 * --to-command`, `rsync -e`, `ssh host CMD`, `vim -c '!...'` ...
 *
 * Invariant (shparse.h invariant 1 extended): a command such a program
 * runs is analysed as a nested script when its text is statically known;
 * otherwise the command is flagged SHC_DYNAMIC_SCRIPT (the enforcement
 * asks), or, for an assignment with no command, the analysis is
 * incomplete. Nothing here allows: it only adds commands or flags.
 */
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "shparse.h"

#include "util/error.h"

typedef struct via {
	sh_analysis *a;
	unsigned depth;
	const size_t *w;
	size_t n, cmd;
} via;

static const char *vw(const via *v, size_t i)
{
	return sh_word(v->a, v->w[i]);
}

static bool vdyn(const via *v, size_t i)
{
	return (v->a->word_flags[v->w[i]] & SHW_DYNAMIC) != 0;
}

static int dynamic(const via *v)
{
	v->a->cmds[v->cmd].flags |= SHC_DYNAMIC_SCRIPT;
	return 0;
}

/* The command text s[0..len) (copied before anything grows), or unknown. */
static int run_text(const via *v, const char *s, size_t len, bool known)
{
	if (!known)
		return dynamic(v);
	return sh_nested_script(v->a, s, len, v->depth);
}

/* Word i (or its part after `skip` bytes) is a command. */
static int run_word(const via *v, size_t i, size_t skip)
{
	const char *s = vw(v, i);
	size_t len = strlen(s);

	return run_text(v, s + (skip < len ? skip : len), skip < len ? len - skip : 0, !vdyn(v, i));
}

/* Words i..n joined by spaces are a command (ssh host CMD ...). */
static int run_words(const via *v, size_t i)
{
	docket_buf b = DOCKET_BUF_INIT;
	bool known = true;
	int error = 0;

	for (size_t k = i; k < v->n && error == 0; k++) {
		known = known && !vdyn(v, k);
		if (k > i)
			error = docket_buf_putc(&b, ' ');
		if (error == 0)
			error = docket_buf_puts(&b, vw(v, k));
	}
	if (error == 0)
		error = run_text(v, b.ptr ? b.ptr : "", b.len, known);
	docket_buf_dispose(&b);
	return error;
}

/* The value of option `opt` at word *i: "--opt=V", "--opt V", "-oV", "-o V"; NULL when word *i is not it. */
static bool opt_value(const via *v, size_t *i, const char *opt, size_t *word, size_t *skip)
{
	const char *s = vw(v, *i);
	size_t ol = strlen(opt);

	if (strncmp(s, opt, ol) != 0)
		return false;
	if (s[ol] == '\0') {
		if (*i + 1 >= v->n)
			return false;
		*word = ++*i;
		*skip = 0;
		return true;
	}
	if (opt[1] == '-' ? s[ol] != '=' : false)
		return false;
	*word = *i;
	*skip = ol + (opt[1] == '-' ? 1 : 0);
	return true;
}

/* ---- git ---- */

static bool ieq(const char *a, size_t n, const char *b)
{
	if (strlen(b) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((a[i] | 0x20) != (b[i] | 0x20) && a[i] != b[i])
			return false;
	return true;
}

/*
 * Does config key k[0..n) hold a command (or a file of commands, or more
 * config) that git runs? By its first or last component, so every
 * `diff.<driver>.textconv`, `filter.<f>.clean` ... counts.
 */
static bool git_key_runs(const char *k, size_t n)
{
	static const char *const last[] = {
		"pager", "editor", "sshcommand", "fsmonitor", "askpass", "gitproxy", "hookspath", "command", "cmd",
		"textconv", "clean", "smudge", "process", "driver", "helper", "program", "external", "difffilter",
		"packobjectshook", "uploadpack", "receivepack", "path", "templatedir", "proxycommand",
		"alternaterefscommand", "procreceiverefs", "trustexitcode", "exec", "browser", "tool", NULL
	};
	static const char *const first[] = { "pager", "include", "includeif", "alias", NULL };
	const char *dot = memchr(k, '.', n), *ld = NULL;

	if (!dot)
		return true;   /* not a key git knows: cannot tell */
	for (const char *p = k; p < k + n; p++)
		if (*p == '.')
			ld = p;
	for (size_t i = 0; first[i]; i++)
		if (ieq(k, (size_t)(dot - k), first[i]))
			return true;
	for (size_t i = 0; last[i]; i++)
		if (ieq(ld + 1, (size_t)(k + n - ld - 1), last[i]))
			return true;
	return false;
}

/* KEY=VALUE given to git -c (or git config KEY VALUE). */
static int git_config_value(const via *v, const char *key, size_t klen, const char *val, bool known)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error;

	if (!git_key_runs(key, klen))
		return 0;
	if (!known)
		return dynamic(v);
	if (ieq(key, klen < 6 ? klen : 6, "alias.") && klen > 6) {
		if (val[0] == '!')
			return run_text(v, val + 1, strlen(val + 1), true);
		/* an alias of git options (-c ...): analysed as `git VALUE` */
		if ((error = docket_buf_puts(&b, "git ")) == 0 && (error = docket_buf_puts(&b, val)) == 0)
			error = run_text(v, b.ptr, b.len, true);
		docket_buf_dispose(&b);
		return error;
	}
	{
		const char *dot = strrchr(key, '.');
		size_t tail = dot && (size_t)(dot - key) < klen ? klen - (size_t)(dot - key) - 1 : 0;

		/* a path (hooks, includes, templates): files docket cannot read */
		if (dot && (ieq(dot + 1, tail, "hookspath") || ieq(dot + 1, tail, "path") ||
			    ieq(dot + 1, tail, "templatedir")))
			return dynamic(v);
		if (ieq(dot ? dot + 1 : key, tail, "helper") && val[0] != '!' && val[0] != '/')
			return 0;   /* credential.helper=store: `git credential-store` */
	}
	return run_text(v, val[0] == '!' ? val + 1 : val, strlen(val[0] == '!' ? val + 1 : val), true);
}

static int git_kv(const via *v, size_t i, size_t skip, bool from_env)
{
	const char *s = vw(v, i) + skip, *eq = strchr(s, '=');
	size_t klen = eq ? (size_t)(eq - s) : strlen(s);
	docket_buf key = DOCKET_BUF_INIT;
	int error;

	if (vdyn(v, i) && !eq)
		return dynamic(v);
	if ((error = docket_buf_put(&key, s, klen)) < 0)
		return error;
	/* --config-env=KEY=ENVVAR: the value is in the environment */
	error = git_config_value(v, key.ptr ? key.ptr : "", klen, eq ? eq + 1 : "", !from_env && !vdyn(v, i));
	docket_buf_dispose(&key);
	return error;
}

/* git subcommands that run a command given to them. */
static int git_subcommand(const via *v, size_t i)
{
	/* a copy: each command found is analysed at once, and that analysis
	 * appends words, which may move the buffer vw() points into */
	char sub[32];
	size_t word, skip;

	snprintf(sub, sizeof(sub), "%s", vw(v, i));

	if (strcmp(sub, "config") == 0) {
		/* git config [opts] KEY VALUE */
		size_t k = i + 1;

		while (k < v->n && vw(v, k)[0] == '-')
			k += (strcmp(vw(v, k), "--file") == 0 || strcmp(vw(v, k), "-f") == 0 ||
			      strcmp(vw(v, k), "--blob") == 0 || strcmp(vw(v, k), "--type") == 0) ? 2 : 1;
		if (k + 1 < v->n) {
			const char *key = vw(v, k);
			int error = 0;
			docket_buf kb = DOCKET_BUF_INIT;

			if ((error = docket_buf_puts(&kb, key)) == 0)
				error = git_config_value(v, kb.ptr, kb.len, vw(v, k + 1), !vdyn(v, k) && !vdyn(v, k + 1));
			docket_buf_dispose(&kb);
			return error;
		}
		return 0;
	}
	if (strcmp(sub, "bisect") == 0)
		return i + 2 < v->n && strcmp(vw(v, i + 1), "run") == 0 ? run_words(v, i + 2) : 0;
	if (strcmp(sub, "submodule") == 0) {
		size_t k = i + 1;

		while (k < v->n && vw(v, k)[0] == '-')
			k++;
		if (k < v->n && strcmp(vw(v, k), "foreach") == 0) {
			k++;
			while (k < v->n && vw(v, k)[0] == '-')
				k++;
			return k < v->n ? run_words(v, k) : 0;
		}
		return 0;
	}
	for (size_t k = i + 1; k < v->n; k++) {
		int error = 0;

		if (strcmp(sub, "rebase") == 0 && (opt_value(v, &k, "--exec", &word, &skip) ||
						   opt_value(v, &k, "-x", &word, &skip)))
			error = run_word(v, word, skip);
		else if (strcmp(sub, "difftool") == 0 && (opt_value(v, &k, "--extcmd", &word, &skip) ||
							  opt_value(v, &k, "-x", &word, &skip)))
			error = run_word(v, word, skip);
		else if (strcmp(sub, "filter-branch") == 0 && strncmp(vw(v, k), "--", 2) == 0 &&
			 strstr(vw(v, k), "-filter") && k + 1 < v->n)
			error = run_word(v, ++k, 0);
		if (error < 0)
			return error;
	}
	return 0;
}

static int via_git(const via *v)
{
	size_t i = 1, word, skip;
	int error;

	while (i < v->n && vw(v, i)[0] == '-') {
		const char *s = vw(v, i);

		if (strcmp(s, "-c") == 0 && i + 1 < v->n) {
			if ((error = git_kv(v, i + 1, 0, false)) < 0)
				return error;
			i += 2;
			continue;
		}
		if (opt_value(v, &i, "--config-env", &word, &skip)) {
			if ((error = git_kv(v, word, skip, true)) < 0)
				return error;
			i++;
			continue;
		}
		if (strcmp(s, "--exec-path") != 0 && strncmp(s, "--exec-path=", 12) == 0)
			return dynamic(v);   /* git-* programs from a directory docket cannot read */
		i += (strcmp(s, "-C") == 0 || strcmp(s, "--git-dir") == 0 || strcmp(s, "--work-tree") == 0 ||
		      strcmp(s, "--namespace") == 0) ? 2 : 1;
	}
	return i < v->n ? git_subcommand(v, i) : 0;
}

/* ---- sed ---- */

/* Skip a delimited part (regex or replacement) from s[*i]; false when unterminated. */
static bool sed_delimited(const char *s, size_t n, size_t *i, char delim)
{
	while (*i < n && s[*i] != delim) {
		if (s[*i] == '\\' && *i + 1 < n)
			(*i)++;
		else if (s[*i] == '\n')
			return false;
		(*i)++;
	}
	if (*i >= n)
		return false;
	(*i)++;
	return true;
}

static void sed_skip_line(const char *s, size_t n, size_t *i)
{
	while (*i < n && s[*i] != '\n') {
		if (s[*i] == '\\' && *i + 1 < n)
			(*i)++;
		(*i)++;
	}
}

static bool sed_address(const char *s, size_t n, size_t *i)
{
	if (*i < n && (s[*i] == '/' || s[*i] == '\\')) {
		char d = s[*i] == '\\' ? (*i + 1 < n ? s[*i + 1] : '\0') : '/';

		*i += s[*i] == '\\' ? 2 : 1;
		if (!d || !sed_delimited(s, n, i, d))
			return false;
		while (*i < n && (s[*i] == 'I' || s[*i] == 'M'))
			(*i)++;
		return true;
	}
	while (*i < n && ((s[*i] >= '0' && s[*i] <= '9') || s[*i] == '$' || s[*i] == '~' || s[*i] == '+'))
		(*i)++;
	return true;
}

/*
 * Scan a program held in a word (a sed script, an awk program) with `scan`,
 * from a copy: each command the scan finds is analysed at once, and that
 * analysis appends words, which may move the buffer the word is in.
 */
static int scan_copy(const via *v, const char *s, size_t n, int (*scan)(const via *, const char *, size_t))
{
	docket_buf copy = DOCKET_BUF_INIT;
	int error = docket_buf_put(&copy, s, n);

	if (error == 0)
		error = scan(v, copy.ptr ? copy.ptr : "", n);
	docket_buf_dispose(&copy);
	return error;
}

/*
 * Walk a sed script for what runs commands: the `e` command (its text, or
 * the pattern space when none) and the `e` flag of `s` (the pattern
 * space). Anything the walk does not know is unknown (fail closed).
 */
static int sed_scan(const via *v, const char *s, size_t n)
{
	size_t i = 0;
	int error;

	while (i < n) {
		char c;

		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ';' || s[i] == '{' ||
				 s[i] == '}'))
			i++;
		if (i >= n)
			break;
		if (!sed_address(s, n, &i))
			return dynamic(v);
		if (i < n && s[i] == ',') {
			i++;
			if (!sed_address(s, n, &i))
				return dynamic(v);
		}
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '!'))
			i++;
		if (i >= n)
			return dynamic(v);
		switch ((c = s[i++])) {
		case '{': case '}': case '=': case 'd': case 'D': case 'g': case 'G': case 'h': case 'H':
		case 'n': case 'N': case 'p': case 'P': case 'x': case 'z': case 'F':
			break;
		case 'q': case 'Q': case 'l': case 'L':
			while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == ' '))
				i++;
			break;
		case '#': case 'a': case 'i': case 'c': case 'r': case 'R': case 'w': case 'W':
			sed_skip_line(s, n, &i);
			break;
		case ':': case 'b': case 't': case 'T': case 'v':
			while (i < n && s[i] != ';' && s[i] != '\n')
				i++;
			break;
		case 'e': {
			size_t start;

			while (i < n && (s[i] == ' ' || s[i] == '\t'))
				i++;
			start = i;
			while (i < n && s[i] != '\n')
				i++;
			/* `e` alone runs the pattern space: input docket cannot see */
			if ((error = run_text(v, s + start, i - start, i > start)) < 0)
				return error;
			break;
		}
		case 's': case 'y': {
			char d = i < n ? s[i++] : '\0';

			if (!d || d == '\n' || d == '\\' || !sed_delimited(s, n, &i, d) || !sed_delimited(s, n, &i, d))
				return dynamic(v);
			while (c == 's' && i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}') {
				if (s[i] == 'e')
					return dynamic(v);   /* runs the pattern space */
				if (s[i] == 'w') {
					sed_skip_line(s, n, &i);
					break;
				}
				i++;
			}
			break;
		}
		default:
			return dynamic(v);
		}
	}
	return 0;
}

static int sed_word(const via *v, size_t i, size_t skip)
{
	const char *s;

	if (vdyn(v, i))
		return dynamic(v);
	s = vw(v, i) + skip;
	return scan_copy(v, s, strlen(s), sed_scan);
}

static int via_sed(const via *v)
{
	bool script = false;
	size_t word, skip;
	int error;

	for (size_t i = 1; i < v->n; i++) {
		const char *s = vw(v, i);

		if (strcmp(s, "--sandbox") == 0)
			return 0;   /* GNU sed refuses e, r and w */
		if (opt_value(v, &i, "--expression", &word, &skip) || opt_value(v, &i, "-e", &word, &skip)) {
			if ((error = sed_word(v, word, skip)) < 0)
				return error;
			script = true;
		} else if (strncmp(s, "--file", 6) == 0 || strcmp(s, "-f") == 0 ||
			   (s[0] == '-' && s[1] != '-' && strchr(s, 'f'))) {
			return dynamic(v);   /* a script file docket cannot read */
		} else if (s[0] == '-' && s[1] && s[1] != '-' && strchr(s + 1, 'e')) {
			/* -ne SCRIPT */
			if (i + 1 >= v->n)
				return dynamic(v);
			if ((error = sed_word(v, ++i, 0)) < 0)
				return error;
			script = true;
		} else if (s[0] != '-' && !script) {
			return sed_word(v, i, 0);
		} else if (strcmp(s, "-l") == 0 || strcmp(s, "--line-length") == 0) {
			i++;
		}
	}
	return 0;
}

/* ---- awk ---- */

/* A string literal at s[*i] ('"'): its text (escapes kept) into *b; false if none. */
static bool awk_literal(const char *s, size_t n, size_t *i, size_t *start, size_t *len)
{
	size_t j = *i;

	while (j < n && (s[j] == ' ' || s[j] == '\t'))
		j++;
	if (j >= n || s[j] != '"')
		return false;
	*start = ++j;
	while (j < n && s[j] != '"') {
		if (s[j] == '\\')
			return false;   /* escapes: let the caller treat it as unknown */
		j++;
	}
	if (j >= n)
		return false;
	*len = j - *start;
	*i = j + 1;
	return true;
}

/*
 * An awk program's commands: system(LITERAL), print | LITERAL,
 * LITERAL | getline; anything else that runs a command is unknown.
 */
static int awk_scan(const via *v, const char *s, size_t n)
{
	int error;

	for (size_t i = 0; i < n; i++) {
		size_t st, len, j;

		if (s[i] == '"') {
			/* a string: find its end, and a `| getline` after it */
			size_t k = i;

			if (!awk_literal(s, n, &k, &st, &len))
				continue;
			j = k;
			while (j < n && (s[j] == ' ' || s[j] == '\t'))
				j++;
			if (j < n && s[j] == '|' && (j + 1 >= n || s[j + 1] != '|')) {
				/* "cmd" | getline (or print "x" | "cmd": both analysed) */
				if ((error = run_text(v, s + st, len, true)) < 0)
					return error;
				i = j - 1;
				continue;
			}
			i = k - 1;
			continue;
		}
		if (s[i] == '|' && i + 1 < n && s[i + 1] == '|') {
			i++;
			continue;
		}
		if (s[i] == '|') {
			j = i + 1 + (i + 1 < n && s[i + 1] == '&');
			if (awk_literal(s, n, &j, &st, &len)) {
				if ((error = run_text(v, s + st, len, true)) < 0)
					return error;
				i = j - 1;
				continue;
			}
			return dynamic(v);
		}
		if (strncmp(s + i, "system", 6) == 0 && (i == 0 || !((s[i - 1] >= 'a' && s[i - 1] <= 'z') ||
								     (s[i - 1] >= 'A' && s[i - 1] <= 'Z') ||
								     s[i - 1] == '_'))) {
			j = i + 6;
			while (j < n && (s[j] == ' ' || s[j] == '\t'))
				j++;
			if (j >= n || s[j] != '(')
				continue;
			j++;
			if (!awk_literal(s, n, &j, &st, &len))
				return dynamic(v);
			while (j < n && (s[j] == ' ' || s[j] == '\t'))
				j++;
			if (j >= n || s[j] != ')')
				return dynamic(v);   /* system("a" x): built at run time */
			if ((error = run_text(v, s + st, len, true)) < 0)
				return error;
			i = j;
		}
	}
	return 0;
}

static int via_awk(const via *v)
{
	for (size_t i = 1; i < v->n; i++) {
		const char *s = vw(v, i);

		if (strcmp(s, "--") == 0) {
			i++;
			if (i < v->n)
				return vdyn(v, i) ? dynamic(v) : scan_copy(v, vw(v, i), strlen(vw(v, i)), awk_scan);
			return 0;
		}
		if (strcmp(s, "-f") == 0 || strncmp(s, "--file", 6) == 0 || strncmp(s, "-f", 2) == 0 ||
		    strcmp(s, "-E") == 0 || strncmp(s, "--exec", 6) == 0 || strncmp(s, "--source", 8) == 0 ||
		    strcmp(s, "-e") == 0 || strcmp(s, "-i") == 0 || strcmp(s, "-l") == 0)
			return dynamic(v);   /* program files, libraries, extensions */
		if (strcmp(s, "-F") == 0 || strcmp(s, "-v") == 0 || strcmp(s, "--assign") == 0 ||
		    strcmp(s, "--field-separator") == 0) {
			i++;
			continue;
		}
		if (s[0] == '-' && s[1])
			continue;
		return vdyn(v, i) ? dynamic(v) : scan_copy(v, s, strlen(s), awk_scan);
	}
	return 0;
}

/* ---- pagers, man, editors ---- */

/* less +CMD: `!` runs a shell command, `|` pipes to one. */
static int via_less(const via *v)
{
	for (size_t i = 1; i < v->n; i++) {
		const char *s = vw(v, i), *bang;

		if (strncmp(s, "--lesskey", 9) == 0 || strcmp(s, "-k") == 0)
			return dynamic(v);   /* key bindings from a file */
		if (s[0] != '+')
			continue;
		if (vdyn(v, i))
			return dynamic(v);
		if ((bang = strchr(s, '!')) != NULL) {
			int error;

			if ((error = run_text(v, bang + 1, strlen(bang + 1), true)) < 0)
				return error;
		} else if (strchr(s, '|') || strchr(s, '#')) {
			return dynamic(v);
		}
	}
	return 0;
}

/* man -P PAGER, --pager=PAGER, -H BROWSER, --html=BROWSER. */
static int via_man(const via *v)
{
	size_t word, skip;
	int error;

	for (size_t i = 1; i < v->n; i++)
		if (opt_value(v, &i, "--pager", &word, &skip) || opt_value(v, &i, "-P", &word, &skip) ||
		    opt_value(v, &i, "--html", &word, &skip) || opt_value(v, &i, "-H", &word, &skip))
			if ((error = run_word(v, word, skip)) < 0)
				return error;
	return 0;
}

/* An Ex command given to vim: `!CMD` runs CMD; only a few known-harmless ones pass. */
static int vim_ex(const via *v, size_t i, size_t skip)
{
	static const char *const harmless[] = { "q", "q!", "qa", "qa!", "wq", "wq!", "wqa", "x", "xa", "w", "wa",
						"noh", "", NULL };
	const char *s;

	if (vdyn(v, i))
		return dynamic(v);
	s = vw(v, i) + skip;
	while (*s == ':' || *s == ' ')
		s++;
	if (*s == '!')
		return run_text(v, s + 1, strlen(s + 1), true);
	if (*s == '/' || *s == '?' || (*s >= '0' && *s <= '9' && s[strspn(s, "0123456789")] == '\0'))
		return 0;
	for (size_t k = 0; harmless[k]; k++)
		if (strcmp(s, harmless[k]) == 0)
			return 0;
	return dynamic(v);   /* :r !x, :call system(), :py, :terminal ...: cannot tell */
}

static int via_vim(const via *v)
{
	size_t word, skip;
	int error;

	for (size_t i = 1; i < v->n; i++) {
		const char *s = vw(v, i);

		if (strcmp(s, "--") == 0)
			break;
		if (opt_value(v, &i, "--cmd", &word, &skip) || opt_value(v, &i, "-c", &word, &skip)) {
			if ((error = vim_ex(v, word, skip)) < 0)
				return error;
		} else if (s[0] == '+') {
			if ((error = vim_ex(v, i, 1)) < 0)
				return error;
		} else if (strcmp(s, "-S") == 0 || strcmp(s, "-s") == 0 || strcmp(s, "-u") == 0 ||
			   strcmp(s, "-U") == 0) {
			/* scripts and vimrc files docket cannot read; -u NONE/NORC/DEFAULTS load nothing */
			if (i + 1 < v->n && (strcmp(vw(v, i + 1), "NONE") == 0 || strcmp(vw(v, i + 1), "NORC") == 0 ||
					     strcmp(vw(v, i + 1), "DEFAULTS") == 0)) {
				i++;
				continue;
			}
			return dynamic(v);
		}
	}
	return 0;
}

/* ---- archivers, transfers, remote shells ---- */

static int via_tar(const via *v)
{
	static const char *const cmd_opts[] = { "--to-command", "--use-compress-program", "--rsh-command",
						"--rmt-command", "-I", NULL };
	static const char *const file_opts[] = { "--info-script", "--new-volume-script", "-F", NULL };
	size_t word, skip;
	int error;

	for (size_t i = 1; i < v->n; i++) {
		const char *s = vw(v, i);
		bool done = false;

		if (i == 1 && s[0] != '-' && (strchr(s, 'I') || strchr(s, 'F')))
			return dynamic(v);   /* old-style letters whose values follow: cannot tell */
		for (size_t k = 0; cmd_opts[k] && !done; k++)
			if (opt_value(v, &i, cmd_opts[k], &word, &skip)) {
				if ((error = run_word(v, word, skip)) < 0)
					return error;
				done = true;
			}
		for (size_t k = 0; file_opts[k] && !done; k++)
			if (opt_value(v, &i, file_opts[k], &word, &skip))
				return dynamic(v);
		if (!done && strncmp(s, "--checkpoint-action=", 20) == 0) {
			const char *a = s + 20;

			if (strncmp(a, "exec=", 5) == 0) {
				if ((error = run_word(v, i, 25)) < 0)
					return error;
			} else if (strstr(a, "exec")) {
				return dynamic(v);
			}
		} else if (!done && s[0] == '-' && s[1] != '-' && (strchr(s + 1, 'I') || strchr(s + 1, 'F'))) {
			/* -xIzstd, -xvI zstd: the value follows the letter */
			const char *l = strpbrk(s + 1, "IF");

			if (*l == 'F')
				return dynamic(v);
			if (l[1]) {
				if ((error = run_word(v, i, (size_t)(l + 1 - s))) < 0)
					return error;
			} else if (i + 1 < v->n) {
				if ((error = run_word(v, ++i, 0)) < 0)
					return error;
			}
		}
	}
	return 0;
}

static int via_rsync(const via *v)
{
	size_t word, skip;
	int error;

	for (size_t i = 1; i < v->n; i++) {
		const char *s = vw(v, i), *e;

		if (opt_value(v, &i, "--rsh", &word, &skip) || opt_value(v, &i, "--rsync-path", &word, &skip) ||
		    opt_value(v, &i, "-e", &word, &skip)) {
			if ((error = run_word(v, word, skip)) < 0)
				return error;
		} else if (s[0] == '-' && s[1] != '-' && (e = strchr(s + 1, 'e')) != NULL) {
			/* -avze CMD, -avzeCMD */
			if (e[1]) {
				if ((error = run_word(v, i, (size_t)(e + 1 - s))) < 0)
					return error;
			} else if (i + 1 < v->n && (error = run_word(v, ++i, 0)) < 0) {
				return error;
			}
		}
	}
	return 0;
}

/* ssh -o ProxyCommand=CMD / LocalCommand / KnownHostsCommand: CMD runs here. */
static int ssh_option(const via *v, size_t i, size_t skip)
{
	static const char *const keys[] = { "proxycommand", "localcommand", "knownhostscommand", NULL };
	const char *s = vw(v, i) + skip;
	size_t kl = strcspn(s, "= \t");

	for (size_t k = 0; keys[k]; k++)
		if (ieq(s, kl, keys[k])) {
			size_t at = skip + kl;

			at += strspn(vw(v, i) + at, "= \t");
			return run_word(v, i, at);
		}
	if (ieq(s, kl, "include") || ieq(s, kl, "match"))
		return dynamic(v);
	return 0;
}

static int via_ssh(const via *v)
{
	static const char *const with_arg = "BbcDEeFIiJLlmOopQRSWw";
	size_t i = 1;
	int error;

	while (i < v->n) {
		const char *s = vw(v, i);
		const char *o;

		if (strcmp(s, "--") == 0) {
			i++;
			break;
		}
		if (s[0] != '-' || !s[1])
			break;
		/* the last letter of a cluster may take a value: -vp 22, -oProxyCommand=x */
		for (o = s + 1; *o && !strchr(with_arg, *o); o++)
			;
		if (!*o) {
			i++;
			continue;
		}
		if (*o == 'F')
			return dynamic(v);   /* a config file may hold ProxyCommand */
		if (o[1]) {
			if (*o == 'o' && (error = ssh_option(v, i, (size_t)(o + 1 - s))) < 0)
				return error;
			i++;
		} else {
			if (*o == 'o' && i + 1 < v->n && (error = ssh_option(v, i + 1, 0)) < 0)
				return error;
			i += 2;
		}
	}
	/* HOST, then the remote command */
	return i + 1 < v->n ? run_words(v, i + 1) : 0;
}

/* ---- xargs -I / find -exec: the replaced words are input docket cannot see ---- */

static int via_xargs(const via *v)
{
	const char *repl = NULL;
	size_t i = 1;

	for (; i < v->n; i++) {
		const char *s = vw(v, i);

		if (strcmp(s, "-I") == 0 && i + 1 < v->n) {
			repl = vw(v, ++i);
		} else if (strncmp(s, "-I", 2) == 0 && s[2]) {
			repl = s + 2;
		} else if (strcmp(s, "-i") == 0 || strcmp(s, "--replace") == 0) {
			repl = "{}";
		} else if (strncmp(s, "-i", 2) == 0 && s[2] != '\0' && s[1] != '-') {
			repl = s + 2;
		} else if (strncmp(s, "--replace=", 10) == 0) {
			repl = s + 10;
		} else if (s[0] != '-') {
			break;
		}
	}
	if (!repl || !*repl)
		return 0;
	for (; i < v->n; i++)
		if (strstr(vw(v, i), repl))
			v->a->word_flags[v->w[i]] |= SHW_DYNAMIC;
	return 0;
}

/* ---- the table ---- */

typedef int (*via_fn)(const via *v);

static const struct {
	const char *name;
	via_fn fn;
} via_table[] = {
	{ "git", via_git },
	{ "sed", via_sed }, { "gsed", via_sed },
	{ "awk", via_awk }, { "gawk", via_awk }, { "mawk", via_awk }, { "nawk", via_awk },
	{ "less", via_less },
	{ "man", via_man },
	{ "vim", via_vim }, { "vi", via_vim }, { "nvim", via_vim }, { "view", via_vim }, { "ex", via_vim },
	{ "vimdiff", via_vim }, { "gvim", via_vim },
	{ "tar", via_tar }, { "gtar", via_tar }, { "bsdtar", via_tar },
	{ "rsync", via_rsync },
	{ "ssh", via_ssh },
	{ "xargs", via_xargs },
};

const char *sh_via_name(size_t i)
{
	return i < sizeof(via_table) / sizeof(via_table[0]) ? via_table[i].name : NULL;
}

int sh_via_command(sh_analysis *a, unsigned depth, const size_t *w, size_t n, size_t cmd)
{
	const char *base = shell_basename(sh_word(a, w[0]));
	via v = { a, depth, w, n, cmd };

	for (size_t i = 0; i < sizeof(via_table) / sizeof(via_table[0]); i++)
		if (via_table[i].name[0] == base[0] && strcmp(via_table[i].name, base) == 0)
			return via_table[i].fn(&v);
	return 0;
}

/* ---- the environment ---- */

/* Variables whose value a program runs as a shell command. */
static const char *const env_commands[] = {
	"GIT_PAGER", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "GIT_EDITOR", "EDITOR", "VISUAL", "GIT_SEQUENCE_EDITOR",
	"GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_EXTERNAL_DIFF",
	"GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "BROWSER", "RSYNC_RSH", "PROMPT_COMMAND", "FCEDIT",
	NULL
};

/* Variables that make a program load code or config docket cannot read. */
static const char *const env_loaders[] = {
	"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "ENV",
	"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
	"GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "PERL5OPT", "NODE_OPTIONS", "RUBYOPT", "PYTHONSTARTUP",
	"PYTHONPATH", "PYTHONHOME", "PERL5LIB", "NODE_PATH", "RUBYLIB", "LESSKEYIN", "VIMINIT", "EXINIT",
	"SHELLOPTS", "BASHOPTS", "PS4", NULL
};

const char *sh_via_env_name(size_t i)
{
	size_t nc = sizeof(env_commands) / sizeof(env_commands[0]) - 1;

	if (i < nc)
		return env_commands[i];
	i -= nc;
	return i < sizeof(env_loaders) / sizeof(env_loaders[0]) - 1 ? env_loaders[i] : NULL;
}

static bool name_in(const char *s, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == n && strncmp(s, *list, n) == 0)
			return true;
	return false;
}

int sh_via_assignment(sh_analysis *a, unsigned depth, size_t word, size_t cmd)
{
	const char *s = sh_word(a, word), *eq = strchr(s, '=');
	size_t n;

	if (!eq)
		return 0;
	n = (size_t)(eq - s);
	if (n > 0 && s[n - 1] == '+')
		n--;   /* NAME+=VALUE */
	if (name_in(s, n, env_loaders) || (n > 15 && strncmp(s, "GIT_CONFIG_KEY_", 15) == 0) ||
	    (n > 17 && strncmp(s, "GIT_CONFIG_VALUE_", 17) == 0) || (n > 10 && strncmp(s, "BASH_FUNC_", 10) == 0)) {
		if (cmd == (size_t)-1)
			return sh_incomplete(a, "environment");
		a->cmds[cmd].flags |= SHC_DYNAMIC_SCRIPT;
		return 0;
	}
	if (!name_in(s, n, env_commands))
		return 0;
	if (a->word_flags[word] & SHW_DYNAMIC) {
		if (cmd == (size_t)-1)
			return sh_incomplete(a, "environment");
		a->cmds[cmd].flags |= SHC_DYNAMIC_SCRIPT;
		return 0;
	}
	return sh_nested_script(a, eq + 1, strlen(eq + 1), depth);
}
