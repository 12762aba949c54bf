/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claude_bash.c: Claude Code's own reading of a Bash command, as measured
 * against the real CLI (issue 33; docs/policy.md, "Fidelity: Claude Code";
 * fixtures/policy/claude-diff-*.json):
 *
 *   - redirections it drops before matching rules and judging read-only
 *     commands (`> /dev/null`, `2>&1`, `< file` ...), while an output
 *     redirection to a file still asks;
 *   - the environment prefixes it looks through (`NODE_ENV=test`, its
 *     list of safe variables with plain values; `FOO=1 ...` still asks);
 *   - its read-only commands (the ones that run with no rule);
 *   - `cd` in a compound command: a directory outside the working
 *     directories, or reached through `x/..`, asks; so do git and, after a
 *     relative `cd`, file-changing commands.
 *
 * Pure functions of their arguments (claude_cd_check reads the evaluation's
 * segments), used by eval_shell.c. Every check here can only make a
 * command ask; none allows what docket's enforced verdict refuses
 * (enforce.c analyses the original script).
 */
#include <string.h>

#include "eval.h"

#include "util/error.h"

static bool in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* ---- environment prefixes ---- */

/* Claude Code 2.1.332's safe variables (the CLI's own list) */
static const char *const safe_env[] = {
	"GOEXPERIMENT", "GOOS", "GOARCH", "CGO_ENABLED", "GO111MODULE", "RUST_BACKTRACE", "RUST_LOG",
	"NODE_ENV", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
	"PYTEST_DEBUG", "ANTHROPIC_API_KEY", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_TIME", "CHARSET",
	"TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TZ", "LS_COLORS", "LSCOLORS", "GREP_COLOR",
	"GREP_COLORS", "GCC_COLORS", "TIME_STYLE", "BLOCK_SIZE", "BLOCKSIZE", "COLUMNS", "LINES", "CLICOLOR",
	"CLICOLOR_FORCE", "CI", "DEBIAN_FRONTEND", "GIT_TERMINAL_PROMPT", NULL
};

static bool plain_value_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("_.:@,+=/-", c));
}

/* The length of a safe NAME=VALUE word at s followed by a blank, else 0. */
size_t claude_safe_assignment(const char *s)
{
	char name[32];
	size_t n = 0, k;

	while ((s[n] >= 'A' && s[n] <= 'Z') || s[n] == '_' || (n > 0 && s[n] >= '0' && s[n] <= '9'))
		n++;
	if (n == 0 || n >= sizeof(name) || s[n] != '=')
		return 0;
	memcpy(name, s, n);
	name[n] = '\0';
	if (!in_list(name, safe_env))
		return 0;
	for (k = n + 1; plain_value_char(s[k]); k++)
		;
	return s[k] == ' ' || s[k] == '\t' ? k : 0;
}

/* ---- redirections ---- */

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool word_end(char c)
{
	return c == '\0' || blank(c) || c == '\n' || strchr(";&|()<>", c) != NULL;
}

/*
 * A redirection at s (s starts a word): its length when Claude Code drops
 * it, 0 when it is kept (a write to a file, a heredoc, anything unusual).
 * Dropped: to /dev/null (`>`, `>>`, `&>`, `2>` ...), a descriptor copy
 * (`2>&1`, `>&2`), and reading a relative file that does not climb (`<
 * src/a.txt`: the file is in the project, where reading needs no rule).
 */
static size_t droppable_redirection(const char *s)
{
	size_t i = 0, t, te;
	bool in = false, dup = false;

	while (s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0 && s[i] == '&' && s[i + 1] == '>') {
		i++;
	}
	if (s[i] == '<') {
		if (s[i + 1] == '<' || s[i + 1] == '>' || s[i + 1] == '(')
			return 0;
		in = true;
		i++;
		if (s[i] == '&')
			dup = true, i++;
	} else if (s[i] == '>') {
		i++;
		if (s[i] == '>')
			i++;
		else if (s[i] == '&')
			dup = true, i++;
		else if (s[i] == '|' || s[i] == '(')
			return 0;
	} else {
		return 0;
	}
	for (t = i; blank(s[t]); t++)
		;
	for (te = t; !word_end(s[te]); te++)
		if (s[te] == '\'' || s[te] == '"' || s[te] == '\\' || s[te] == '$' || s[te] == '`')
			return 0;
	if (te == t)
		return 0;
	if (dup) {
		for (size_t k = t; k < te; k++)
			if (s[k] < '0' || s[k] > '9')
				return 0;
		return te;
	}
	if (!in)
		return te - t == 9 && strncmp(s + t, "/dev/null", 9) == 0 ? te : 0;
	if (s[t] == '/' || s[t] == '~' || s[t] == '-')
		return 0;
	for (size_t k = t; k + 1 < te; k++)
		if (s[k] == '.' && s[k + 1] == '.')
			return 0;
	return te;
}

static void trim_blanks(docket_buf *out)
{
	while (out->len > 0 && blank(out->ptr[out->len - 1]))
		out->len--;
}

/*
 * `script` as Claude Code matches it: safe redirections dropped, safe
 * environment prefixes of each command dropped. *out is NUL-terminated;
 * quoted text, substitutions and anything after a heredoc or a comment
 * are copied unchanged.
 */
int claude_bash_normalize(docket_buf *out, const char *script)
{
	const char *s = script;
	bool cmd_start = true, word_start = true, sq = false, dq = false;
	int error = 0;

	docket_buf_clear(out);
	while (*s && error == 0) {
		char c = *s;
		size_t n;

		if (sq || dq) {
			if ((sq && c == '\'') || (dq && c == '"'))
				sq = dq = false;
			else if (dq && c == '\\' && s[1])
				error = docket_buf_putc(out, *s++);
			error = error ? error : docket_buf_putc(out, *s++);
			continue;
		}
		if (cmd_start && blank(c)) {
			error = docket_buf_putc(out, *s++);
			continue;
		}
		if (cmd_start && (n = claude_safe_assignment(s)) > 0) {
			for (s += n; blank(*s); s++)
				;
			continue;
		}
		cmd_start = false;
		if (word_start && (n = droppable_redirection(s)) > 0) {
			trim_blanks(out);
			s += n;
			continue;
		}
		if ((c == '<' && s[1] == '<') || (c == '#' && word_start)) {
			/* a heredoc or a comment: the rest as written */
			error = docket_buf_puts(out, s);
			break;
		}
		word_start = blank(c) || c == '\n' || strchr(";&|()", c) != NULL;
		cmd_start = c == '\n' || strchr(";&|(", c) != NULL;
		if (c == '\'')
			sq = true;
		else if (c == '"')
			dq = true;
		else if (c == '\\' && s[1])
			error = docket_buf_putc(out, *s++);
		if (error == 0)
			error = docket_buf_putc(out, *s++);
	}
	trim_blanks(out);
	if (error == 0)
		error = docket_buf_putc(out, '\0');
	if (error == 0)
		out->len--;
	return error;
}

/* ---- read-only commands ---- */

/* any arguments */
static const char *const ro_any[] = {
	"cal", "uptime", "cat", "head", "tail", "wc", "stat", "strings", "hexdump", "od", "nl", "id",
	"uname", "free", "df", "du", "locale", "groups", "nproc", "basename", "dirname", "realpath", "cut",
	"paste", "tr", "column", "tac", "rev", "fold", "expand", "unexpand", "fmt", "comm", "cmp", "numfmt",
	"readlink", "diff", "true", "false", "sleep", "type", "expr", "seq", "tsort", "pr", "echo", "ls",
	"file", "man", "help", "netstat", "ps", "base64", "grep", "egrep", "fgrep", "sha256sum", "sha1sum",
	"md5sum", "which", "lsof", "pgrep", "ss", "test", "[", "[[", NULL
};
/* only with no arguments */
static const char *const ro_bare[] = { "pwd", "whoami", "alias", NULL };
/* git subcommands that only read (one word, or two: "stash list") */
static const char *const ro_git[] = {
	"diff", "log", "show", "shortlog", "reflog", "ls-remote", "status", "blame", "ls-files",
	"merge-base", "rev-parse", "rev-list", "describe", "cat-file", "for-each-ref", "grep", "tag",
	"branch", "remote", NULL
};
/* options that make a listed command write or run something */
static const char *const unsafe_opts[] = {
	"sed:-i", "sed:--in-place", "sort:-o", "sort:--output", "date:-s", "date:--set", "tree:-o",
	"rg:--files", "rg:--pre", "fd:-x", "fd:--exec", "fd:-X", "fd:--exec-batch", "fdfind:-x",
	"fdfind:--exec", "fdfind:-X", "fdfind:--exec-batch", "jq:-f", "jq:--from-file", "jq:-L",
	"jq:--rawfile", "jq:--slurpfile", NULL
};

static bool unsafe_option(const char *prog, const char *opt)
{
	size_t pl = strlen(prog);

	for (size_t i = 0; unsafe_opts[i]; i++) {
		const char *u = unsafe_opts[i];
		size_t ol;

		if (strncmp(u, prog, pl) != 0 || u[pl] != ':')
			continue;
		u += pl + 1;
		ol = strlen(u);
		/* -i and -i.bak, --output and --output=f */
		if (strncmp(opt, u, ol) == 0 && (opt[ol] == '\0' || opt[ol] == '=' || (u[1] != '-' && ol == 2)))
			return true;
	}
	return false;
}

static bool find_read_only(const char *const *argv, size_t argc)
{
	static const char *const acts[] = {
		"-delete", "-rm", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fls",
		"-fprintf", "-files0-from", NULL
	};

	for (size_t i = 1; i < argc; i++)
		if (in_list(argv[i], acts))
			return false;
	return true;
}

static bool git_read_only(const char *const *argv, size_t argc)
{
	const char *sub;

	if (argc < 2)
		return false;
	for (size_t i = 1; i < argc; i++)
		if (strcmp(argv[i], "-c") == 0 || strncmp(argv[i], "--exec-path", 11) == 0 ||
		    strncmp(argv[i], "--config-env", 12) == 0 || strncmp(argv[i], "--output", 8) == 0)
			return false;
	sub = argv[1];
	if (strcmp(sub, "stash") == 0 || strcmp(sub, "worktree") == 0)
		return argc >= 3 && (strcmp(argv[2], "list") == 0 || strcmp(argv[2], "show") == 0);
	if (strcmp(sub, "config") == 0)
		return argc >= 3 && strcmp(argv[2], "--get") == 0;
	if (!in_list(sub, ro_git))
		return false;
	if (strcmp(sub, "branch") == 0 || strcmp(sub, "tag") == 0 || strcmp(sub, "remote") == 0) {
		/* listing only: no operand, no option that changes something */
		static const char *const list_opts[] = {
			"-v", "-vv", "--verbose", "-a", "--all", "-r", "--remotes", "-l", "--list",
			"--show-current", "--merged", "--no-merged", "--contains", "-n", NULL
		};

		for (size_t i = 2; i < argc; i++)
			if (!in_list(argv[i], list_opts) && !(strcmp(sub, "remote") == 0 && strcmp(argv[i], "show") == 0))
				return false;
	}
	return true;
}

static bool xargs_read_only(const char *const *argv, size_t argc)
{
	static const char *const targets[] = { "echo", "printf", "wc", "grep", "egrep", "fgrep", "head", "tail", NULL };

	for (size_t i = 1; i < argc; i++)
		if (argv[i][0] != '-')
			return in_list(argv[i], targets);
	return false;
}

bool claude_read_only(const char *const *argv, size_t argc)
{
	const char *prog;

	if (argc == 0)
		return false;
	prog = argv[0];
	if (in_list(prog, ro_bare))
		return argc == 1;
	if ((strcmp(prog, "node") == 0 || strcmp(prog, "python") == 0 || strcmp(prog, "python3") == 0) && argc == 2)
		return strcmp(argv[1], "--version") == 0 || (strcmp(prog, "node") == 0 && strcmp(argv[1], "-v") == 0);
	if (strcmp(prog, "docker") == 0)
		return argc >= 2 && (strcmp(argv[1], "ps") == 0 || strcmp(argv[1], "images") == 0 ||
				     strcmp(argv[1], "logs") == 0 || strcmp(argv[1], "inspect") == 0);
	if (strcmp(prog, "git") == 0)
		return git_read_only(argv, argc);
	if (strcmp(prog, "find") == 0)
		return find_read_only(argv, argc);
	if (strcmp(prog, "xargs") == 0)
		return xargs_read_only(argv, argc);
	if (strcmp(prog, "cd") == 0)
		return argc <= 2;
	if (strcmp(prog, "uniq") == 0) {
		for (size_t i = 1; i < argc; i++)
			if (argv[i][0] != '-')
				return false;
		return true;
	}
	if (strcmp(prog, "hostname") == 0) {
		for (size_t i = 1; i < argc; i++)
			if (argv[i][0] != '-')
				return false;
		return true;
	}
	if (strcmp(prog, "printf") == 0)
		return argc >= 2 && argv[1][0] != '-';
	if (!in_list(prog, ro_any) && strcmp(prog, "sed") != 0 && strcmp(prog, "sort") != 0 &&
	    strcmp(prog, "date") != 0 && strcmp(prog, "tree") != 0 && strcmp(prog, "rg") != 0 &&
	    strcmp(prog, "fd") != 0 && strcmp(prog, "fdfind") != 0 && strcmp(prog, "jq") != 0)
		return false;
	for (size_t i = 1; i < argc; i++)
		if (argv[i][0] == '-' && unsafe_option(prog, argv[i]))
			return false;
	if (strcmp(prog, "date") == 0)
		for (size_t i = 1; i < argc; i++)
			if (argv[i][0] != '-' && argv[i][0] != '+')
				return false;
	return true;
}

/* ---- cd in a compound command ---- */

/* "x/.." anywhere: a directory segment, then a climb */
bool claude_path_climbs(const char *p)
{
	bool seg = false;

	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (seg)
				return true;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			seg = true;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	return false;
}

static bool git_or_write(const char *const *w, size_t n, bool relative_cd, const char **why)
{
	static const char *const writers[] = {
		"touch", "mkdir", "rm", "rmdir", "mv", "cp", "ln", "chmod", "chown", "tee", "truncate", NULL
	};

	if (strcmp(w[0], "git") == 0) {
		*why = "cd_git";
		return true;
	}
	if (relative_cd && (in_list(w[0], writers) || (strcmp(w[0], "sed") == 0 && n > 1 && !claude_read_only(w, n)))) {
		*why = "cd_write";
		return true;
	}
	return false;
}

int claude_cd_check(ev *e, const char **why)
{
	docket_policy_result *r = e->res;
	bool after_cd = false, relative_cd = false;

	for (size_t g = 0; g < r->nsegs; g++) {
		const pol_segment *s = &r->segs[g];
		const char *const *w = r->wv + s->word_off;
		const char *target;

		if (s->nwords == 0)
			continue;
		if (strcmp(w[0], "cd") != 0) {
			if (after_cd && git_or_write(w, s->nwords, relative_cd, why))
				return POL_ASK;
			continue;
		}
		target = s->nwords > 1 ? w[1] : "~";
		if (claude_path_climbs(target)) {
			*why = "cd_climbs";
			return POL_ASK;
		}
		if (path_normalize(&r->tmp3, target, e->cwd, e->home) < 0) {
			docket_error_clear();
			*why = "cd_outside";
			return POL_ASK;
		}
		if (!ev_in_workspace(e, r->tmp3.ptr)) {
			*why = "cd_outside";
			return POL_ASK;
		}
		after_cd = true;
		relative_cd = relative_cd || target[0] != '/';
	}
	return -1;
}
