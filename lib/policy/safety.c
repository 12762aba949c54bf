/* SPDX-License-Identifier: Apache-2.0 */
/*
 * safety.c: heuristics for shell segments no rule matched.
 *
 * "Known safe" commands only read (Codex's is_known_safe_command, including
 * its read-only git subset), and look inside `bash -lc` scripts only when the
 * script splits into plain segments. "Dangerous" is Codex's forced-rm check
 * (codex-cli 0.169.0 / 0.171.0, measured through the real runtime): it looks
 * at every literal command of a script that parses, at any depth (a small
 * scanner standing in for tree-sitter-bash: substitutions, control flow,
 * redirections and heredocs; a script it cannot read has no commands, as
 * Codex's parse error gives none).
 */
#include <string.h>

#include "policy.h"

static bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (s[0] == (*list)[0] && streq(s, *list))
			return true;
	return false;
}

static bool sed_n_arg_ok(const char *s)
{
	size_t len = strlen(s), digits = 0, parts = 1;

	if (len < 2 || s[len - 1] != 'p')
		return false;
	for (size_t i = 0; i + 1 < len; i++) {
		if (s[i] == ',') {
			if (digits == 0 || ++parts > 2)
				return false;
			digits = 0;
		} else if (s[i] >= '0' && s[i] <= '9') {
			digits++;
		} else {
			return false;
		}
	}
	return digits > 0;
}

/* git: a read-only subcommand with no option that writes or redirects git. */
static bool git_is_safe(const char *const *argv, size_t argc)
{
	static const char *const branch_ok[] = {
		"--show-current", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose",
		"--list", "-l", "--no-color", "--color", NULL
	};
	size_t i = 1;
	const char *sub;

	while (i < argc && argv[i][0] == '-') {
		/* only -C DIR moves git, and only within what the sandbox allows */
		if (streq(argv[i], "-C") && i + 1 < argc) {
			i += 2;
			continue;
		}
		return false;
	}
	if (i >= argc)
		return false;
	sub = argv[i++];
	if (streq(sub, "status"))
		return true;
	if (streq(sub, "log") || streq(sub, "diff") || streq(sub, "show")) {
		for (; i < argc; i++)
			if (starts(argv[i], "--output") || streq(argv[i], "--ext-diff") ||
			    starts(argv[i], "--textconv"))
				return false;
		return true;
	}
	if (streq(sub, "branch")) {
		for (; i < argc; i++)
			if (!in_list(argv[i], branch_ok))
				return false;
		return true;
	}
	return false;
}

static bool safe_to_exec(const char *const *argv, size_t argc, int platform)
{
	static const char *const plain[] = {
		"cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl",
		"paste", "pwd", "rev", "seq", "stat", "tail", "tr", "true", "uname", "uniq", "wc",
		"which", "whoami", NULL
	};
	static const char *const find_bad[] = {
		"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0",
		"-fprintf", NULL
	};
	const char *cmd;

	if (argc == 0)
		return false;
	cmd = shell_basename(argv[0]);
	if ((platform == PLAT_LINUX || platform == PLAT_ANY) && (streq(cmd, "numfmt") || streq(cmd, "tac")))
		return true;
	if (in_list(cmd, plain))
		return true;
	if (streq(cmd, "base64")) {
		for (size_t i = 1; i < argc; i++)
			if (streq(argv[i], "-o") || streq(argv[i], "--output") ||
			    starts(argv[i], "--output=") || starts(argv[i], "-o"))
				return false;
		return true;
	}
	if (streq(cmd, "find")) {
		for (size_t i = 0; i < argc; i++)
			if (in_list(argv[i], find_bad))
				return false;
		return true;
	}
	if (streq(cmd, "rg")) {
		for (size_t i = 0; i < argc; i++) {
			const char *a = argv[i];

			if (streq(a, "--search-zip") || streq(a, "-z") || streq(a, "--pre") ||
			    starts(a, "--pre=") || streq(a, "--hostname-bin") ||
			    starts(a, "--hostname-bin="))
				return false;
		}
		return true;
	}
	if (streq(cmd, "sed"))
		return argc <= 4 && argc >= 3 && streq(argv[1], "-n") && sed_n_arg_ok(argv[2]);
	if (streq(cmd, "git"))
		return git_is_safe(argv, argc);
	return false;
}

/* Run `pred` over the plain segments of a shell script; false if it does not split. */
static bool all_segments(const char *const *argv, size_t argc, shell_split *sp, int platform,
			 bool (*pred)(const char *const *, size_t, int), bool want_all)
{
	const char *script = shell_script_of(argv, argc, NULL);
	const char *words[256];

	if (!script || !sp)
		return false;
	if (shell_split_script(sp, script, strlen(script)) < 0 || sp->status != SHELL_PLAIN)
		return false;
	for (size_t g = 0; g < sp->nsegs; g++) {
		size_t a = sp->seg_start[g], b = sp->seg_start[g + 1], n = b - a;
		bool r;

		if (n > sizeof(words) / sizeof(words[0]))
			return false;
		for (size_t k = 0; k < n; k++)
			words[k] = sp->text.ptr + sp->word_off[a + k];
		r = pred(words, n, platform);
		if (want_all && !r)
			return false;
		if (!want_all && r)
			return true;
	}
	return want_all;
}

bool safety_is_known_safe(const char *const *argv, size_t argc, int platform, shell_split *scratch)
{
	const char *mapped[3];

	if (safe_to_exec(argv, argc, platform))
		return true;
	/* Codex reads "zsh" as "bash" */
	if (argc == 3) {
		for (size_t i = 0; i < 3; i++)
			mapped[i] = streq(argv[i], "zsh") ? "bash" : argv[i];
		return all_segments(mapped, 3, scratch, platform, safe_to_exec, true);
	}
	return false;
}

/*
 * Codex's forced-rm check (dangerous_command_match_for_exec, codex-cli 0.169
 * and 0.171): the program's last path component is `rm` and an argument
 * before `--` is `--force` or a one-dash cluster holding `f` (`-f`, `-rf`,
 * `-vf`: `rm x -f` too); `sudo` is looked through by dropping its first word
 * only (`sudo -n rm -rf` is not dangerous), `env` by dropping its options and
 * NAME=VALUE words. Nothing else is looked through (`command`, `nice`, `time`).
 */
static bool dangerous_exec(const char *const *argv, size_t argc, int platform)
{
	const char *base;

	(void)platform;
	for (;;) {
		if (argc == 0)
			return false;
		base = shell_basename(argv[0]);
		if (streq(base, "sudo")) {
			argv++;
			argc--;
			continue;
		}
		if (streq(base, "env")) {
			argv++;
			argc--;
			while (argc > 0 && (argv[0][0] == '-' || strchr(argv[0], '=') || !argv[0][0])) {
				argv++;
				argc--;
			}
			continue;
		}
		break;
	}
	if (!streq(base, "rm"))
		return false;
	for (size_t i = 1; i < argc && !streq(argv[i], "--"); i++)
		if (streq(argv[i], "--force") || (argv[i][0] == '-' && argv[i][1] != '-' && strchr(argv[i] + 1, 'f')))
			return true;
	return false;
}

/* ---- literal commands of a script (Codex's parse_shell_lc_literal_commands) ---- */

#define LIT_WORDS 128
#define LIT_DEPTH 8

typedef struct lit_scan {
	const char *s;
	size_t n, i;
	int depth;
	bool error, found;
	/* the command being read */
	char buf[4096];   /* per nesting level, on the stack: evaluation allocates nothing */
	size_t blen;
	const char *argv[LIT_WORDS + 1];
	size_t argc;
	bool at_cmd, have_name, name_literal, any_cmd;
	bool truncated;   /* words past the caps were not kept */
	/* control structures */
	int parens, case_depth;
	bool case_pattern, case_subject, skip_to_do, after_if, after_bang;
	bool last_op;     /* the last token was & ; | && || with no command since */
	/* pending heredocs */
	char delim[4][64];
	bool strip[4];
	int ndelim;
} lit_scan;

static void lit_script(const char *s, size_t n, int depth, bool *found, bool *error);

static bool lit_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool lit_meta(char c)
{
	return lit_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' ||
	       c == '<' || c == '>';
}

static void lit_put(lit_scan *ls, char c)
{
	if (ls->blen + 1 < sizeof(ls->buf))
		ls->buf[ls->blen++] = c;
	else
		ls->truncated = true;
}

/* The index just past the `)` closing the `(` at s[i] (quotes and nesting followed). */
static size_t lit_close_paren(const char *s, size_t n, size_t i)
{
	int level = 0;
	char q = 0;

	for (; i < n; i++) {
		char c = s[i];

		if (q) {
			if (c == '\\' && q == '"' && i + 1 < n)
				i++;
			else if (c == q)
				q = 0;
			continue;
		}
		if (c == '\\' && i + 1 < n)
			i++;
		else if (c == '\'' || c == '"')
			q = c;
		else if (c == '(')
			level++;
		else if (c == ')' && --level == 0)
			return i + 1;
	}
	return 0;
}

/* A $(...) or (...) body at s[i] == '(': scanned as its own script. */
static bool lit_subst(lit_scan *ls, size_t i, size_t *end)
{
	size_t e = lit_close_paren(ls->s, ls->n, i);

	if (e == 0 || ls->depth >= LIT_DEPTH) {
		ls->error = true;
		return false;
	}
	lit_script(ls->s + i + 1, e - i - 2, ls->depth + 1, &ls->found, &ls->error);
	*end = e;
	return true;
}

static bool lit_backtick(lit_scan *ls, size_t i, size_t *end)
{
	size_t e = i + 1;

	while (e < ls->n && ls->s[e] != '`')
		e += ls->s[e] == '\\' && e + 1 < ls->n ? 2 : 1;
	if (e >= ls->n || ls->depth >= LIT_DEPTH) {
		ls->error = true;
		return false;
	}
	lit_script(ls->s + i + 1, e - i - 1, ls->depth + 1, &ls->found, &ls->error);
	*end = e + 1;
	return true;
}

/* `$...` at s[i]: an expansion (never literal); substitutions are scanned. */
static void lit_dollar(lit_scan *ls)
{
	const char *s = ls->s;
	size_t i = ls->i, n = ls->n;

	if (i + 2 < n && s[i + 1] == '(' && s[i + 2] == '(') {
		/* $((...)): arithmetic, no command (`$((rm -rf x))` is not one) */
		size_t e = lit_close_paren(s, n, i + 1);

		ls->error = ls->error || e == 0;
		ls->i = e ? e : n;
		return;
	}
	if (i + 1 < n && s[i + 1] == '(') {
		if (!lit_subst(ls, i + 1, &ls->i))
			ls->i = n;
		return;
	}
	if (i + 1 < n && (s[i + 1] == '{' || s[i + 1] == '\'' || s[i + 1] == '"')) {
		char close = s[i + 1] == '{' ? '}' : s[i + 1];

		i += 2;
		while (i < n && s[i] != close)
			i += s[i] == '\\' && i + 1 < n ? 2 : 1;
		if (i >= n)
			ls->error = true;
		ls->i = i + 1;
		return;
	}
	i++;
	while (i < n && (s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
			 (s[i] >= '0' && s[i] <= '9')))
		i++;
	if (i == ls->i + 1 && i < n && strchr("?#@*!$-", s[i]))
		i++;
	ls->i = i;
}

/* One word from s[i]: its text (quotes removed, backslashes kept as Codex's
 * word nodes keep them) at buf[*off]; false when it is not literal. */
static bool lit_word(lit_scan *ls, size_t *off)
{
	const char *s = ls->s;
	bool literal = true;

	*off = ls->blen;
	while (ls->i < ls->n && !ls->error && !lit_meta(s[ls->i])) {
		char c = s[ls->i];

		if (c == '\'') {
			size_t e = ls->i + 1;

			while (e < ls->n && s[e] != '\'')
				lit_put(ls, s[e++]);
			if (e >= ls->n)
				ls->error = true;
			ls->i = e + 1;
		} else if (c == '"') {
			ls->i++;
			while (ls->i < ls->n && s[ls->i] != '"' && !ls->error) {
				if (s[ls->i] == '$') {
					literal = false;
					lit_dollar(ls);
				} else if (s[ls->i] == '`') {
					literal = false;
					if (!lit_backtick(ls, ls->i, &ls->i))
						ls->i = ls->n;
				} else {
					if (s[ls->i] == '\\') {
						literal = false;
						ls->i++;
					}
					if (ls->i < ls->n)
						lit_put(ls, s[ls->i++]);
				}
			}
			if (ls->i >= ls->n)
				ls->error = true;
			ls->i++;
		} else if (c == '\\') {
			if (ls->i + 1 < ls->n && s[ls->i + 1] == '\n') {
				ls->i += 2;
				continue;
			}
			lit_put(ls, c);
			if (ls->i + 1 < ls->n)
				lit_put(ls, s[ls->i + 1]);
			ls->i += 2;
		} else if (c == '$') {
			literal = false;
			lit_dollar(ls);
		} else if (c == '`') {
			literal = false;
			if (!lit_backtick(ls, ls->i, &ls->i))
				ls->i = ls->n;
		} else {
			lit_put(ls, c);
			ls->i++;
		}
	}
	lit_put(ls, '\0');
	return literal && ls->buf[*off] != '\0';
}

static void lit_end_command(lit_scan *ls)
{
	/* a command too long to keep whole counts as forced when its name is rm (fails closed) */
	if (ls->truncated && ls->argc > 0)
		ls->argv[ls->argc++] = "-f";
	if (ls->have_name && ls->name_literal && dangerous_exec(ls->argv, ls->argc, 0))
		ls->found = true;
	ls->argc = 0;
	ls->blen = 0;
	ls->have_name = ls->name_literal = ls->truncated = false;
}

static bool lit_is_assignment(const char *w)
{
	size_t i = 0;

	if (!(w[0] == '_' || (w[0] >= 'A' && w[0] <= 'Z') || (w[0] >= 'a' && w[0] <= 'z')))
		return false;
	while (w[i] == '_' || (w[i] >= 'A' && w[i] <= 'Z') || (w[i] >= 'a' && w[i] <= 'z') ||
	       (w[i] >= '0' && w[i] <= '9'))
		i++;
	return w[i] == '=' || (w[i] == '+' && w[i + 1] == '=');
}

/* A reserved word at a command position: true when it was one. */
static bool lit_keyword(lit_scan *ls, const char *w)
{
	static const char *const opens[] = { "then", "else", "elif", "do", "{", "!", "while", "until", NULL };
	static const char *const closes[] = { "fi", "done", "}", NULL };

	if (streq(w, "if")) {
		ls->after_if = true;
		return true;
	}
	if (streq(w, "then") && ls->after_if)
		ls->error = true;  /* `if then`: tree-sitter reports an error */
	if (streq(w, "{") && ls->after_bang)
		ls->error = true;  /* `! { ...; }`: so does this (measured) */
	ls->after_bang = streq(w, "!");
	if (in_list(w, opens) || in_list(w, closes)) {
		ls->after_if = false;
		return true;
	}
	if (streq(w, "for") || streq(w, "select")) {
		ls->skip_to_do = true;
		return true;
	}
	if (streq(w, "case")) {
		ls->case_depth++;
		ls->case_subject = true;
		return true;
	}
	if (streq(w, "esac") && ls->case_depth > 0) {
		ls->case_depth--;
		ls->case_pattern = false;
		return true;
	}
	return false;
}

static void lit_word_token(lit_scan *ls)
{
	size_t off;
	bool literal = lit_word(ls, &off);
	const char *w = ls->buf + off;

	ls->last_op = false;
	if (ls->skip_to_do || ls->case_subject || ls->case_pattern) {
		if (ls->skip_to_do && streq(w, "do"))
			ls->skip_to_do = false;
		else if (ls->case_subject && streq(w, "in"))
			ls->case_subject = false, ls->case_pattern = true;
		else if (ls->case_pattern && streq(w, "esac"))
			ls->case_depth--, ls->case_pattern = false;
		ls->blen = off;
		ls->at_cmd = true;
		return;
	}
	if (!ls->have_name && ls->at_cmd) {
		if (literal && lit_keyword(ls, w)) {
			ls->blen = off;
			return;
		}
		ls->after_if = ls->after_bang = false;
		ls->any_cmd = true;
		if (lit_is_assignment(w)) {
			ls->blen = off;
			return;
		}
		ls->have_name = true;
		ls->name_literal = literal;
	}
	if (literal && ls->argc < LIT_WORDS && !ls->truncated)
		ls->argv[ls->argc++] = w;
	else if (literal)
		ls->truncated = true;
	else
		ls->blen = off;
}

/* A redirection at s[i]: its operator and target are read and dropped. */
static void lit_redirect(lit_scan *ls)
{
	const char *s = ls->s;
	size_t off, save;
	bool heredoc = false, strip = false;

	while (ls->i < ls->n && s[ls->i] >= '0' && s[ls->i] <= '9')
		ls->i++;
	if (ls->i + 1 < ls->n && (s[ls->i] == '<' || s[ls->i] == '>') && s[ls->i + 1] == '(') {
		if (!lit_subst(ls, ls->i + 1, &ls->i))
			ls->i = ls->n;
		return;
	}
	if (strncmp(s + ls->i, "<<<", 3) == 0) {
		ls->i += 3;
	} else if (strncmp(s + ls->i, "<<", 2) == 0) {
		heredoc = true;
		ls->i += 2;
		if (ls->i < ls->n && s[ls->i] == '-')
			strip = true, ls->i++;
	} else {
		if (s[ls->i] == '&')
			ls->i++;
		ls->i++;
		if (ls->i < ls->n && (s[ls->i] == '>' || s[ls->i] == '&' || s[ls->i] == '|'))
			ls->i++;
	}
	while (ls->i < ls->n && lit_blank(s[ls->i]))
		ls->i++;
	if (ls->i >= ls->n || lit_meta(s[ls->i])) {
		ls->error = true;
		return;
	}
	save = ls->blen;
	(void)lit_word(ls, &off);
	if (heredoc && ls->ndelim < 4 && strlen(ls->buf + off) < sizeof(ls->delim[0])) {
		memcpy(ls->delim[ls->ndelim], ls->buf + off, strlen(ls->buf + off) + 1);
		ls->strip[ls->ndelim++] = strip;
	} else if (heredoc) {
		ls->error = true;
	}
	ls->blen = save;
}

/* After a newline: the bodies of the pending heredocs are skipped. */
static void lit_heredoc_bodies(lit_scan *ls)
{
	for (int k = 0; k < ls->ndelim; k++) {
		while (ls->i < ls->n) {
			size_t e = ls->i, b = ls->i;

			while (e < ls->n && ls->s[e] != '\n')
				e++;
			if (ls->strip[k])
				while (b < e && ls->s[b] == '\t')
					b++;
			ls->i = e < ls->n ? e + 1 : e;
			if (e - b == strlen(ls->delim[k]) && memcmp(ls->s + b, ls->delim[k], e - b) == 0)
				break;
		}
	}
	ls->ndelim = 0;
}

/* An operator at s[i] (; & | newline ( )): ends the command. */
static void lit_operator(lit_scan *ls)
{
	const char *s = ls->s;
	char c = s[ls->i];
	bool empty = !ls->have_name && ls->argc == 0;

	lit_end_command(ls);
	if (c != '\n' && c != ';' && c != '&' && c != '|')
		ls->last_op = false;
	if (c == '\n') {
		ls->i++;
		lit_heredoc_bodies(ls);
	} else if (c == ';' && ls->i + 1 < ls->n && (s[ls->i + 1] == ';' || s[ls->i + 1] == '&')) {
		if (ls->case_depth == 0)
			ls->error = true;
		ls->case_pattern = true;
		ls->i += 2 + (ls->i + 2 < ls->n && s[ls->i + 2] == '&');
	} else if (c == '(') {
		if (ls->i + 1 < ls->n && s[ls->i + 1] == '(') {  /* arithmetic: no commands but substitutions */
			size_t e = lit_close_paren(s, ls->n, ls->i);

			ls->i = e ? e : ls->n;
			ls->error = ls->error || e == 0;
		} else {
			ls->parens++;
			ls->i++;
		}
	} else if (c == ')') {
		if (ls->case_pattern)
			ls->case_pattern = false;
		else if (--ls->parens < 0)
			ls->error = true;
		ls->i++;
	} else {
		/* && || | |& & ; : an empty command before one does not parse (`a & &`, `&& b`) */
		if (empty && (ls->last_op || (!ls->any_cmd && (c == '|' || (c == '&' && ls->i + 1 < ls->n && s[ls->i + 1] == '&')))))
			ls->error = true;
		ls->last_op = true;
		ls->i += (ls->i + 1 < ls->n && (s[ls->i + 1] == c || (c == '|' && s[ls->i + 1] == '&'))) ? 2 : 1;
	}
	ls->at_cmd = true;
}

static void lit_script(const char *s, size_t n, int depth, bool *found, bool *error)
{
	lit_scan ls;

	memset(&ls, 0, sizeof(ls));
	ls.s = s;
	ls.n = n;
	ls.depth = depth;
	ls.at_cmd = true;
	while (ls.i < n && !ls.error) {
		char c = s[ls.i];

		if (lit_blank(c)) {
			ls.i++;
		} else if (c == '\\' && ls.i + 1 < n && s[ls.i + 1] == '\n') {
			ls.i += 2;
		} else if (c == '#') {
			while (ls.i < n && s[ls.i] != '\n')
				ls.i++;
		} else if (c == '<' || c == '>' || (c == '&' && ls.i + 1 < n && s[ls.i + 1] == '>') ||
			   (c >= '0' && c <= '9' && (strspn(s + ls.i, "0123456789") + ls.i < n) &&
			    strchr("<>", s[ls.i + strspn(s + ls.i, "0123456789")]) && (ls.have_name || ls.at_cmd))) {
			lit_redirect(&ls);
		} else if (lit_meta(c)) {
			lit_operator(&ls);
		} else {
			lit_word_token(&ls);
		}
	}
	lit_end_command(&ls);
	if (ls.parens != 0 || ls.case_depth != 0 || ls.skip_to_do || ls.case_subject)
		ls.error = true;
	*error = *error || ls.error;
	*found = *found || ls.found;
}

bool safety_is_dangerous(const char *const *argv, size_t argc, shell_split *scratch)
{
	const char *script = shell_script_of(argv, argc, NULL);
	bool found = false, error = false;

	(void)scratch;
	if (dangerous_exec(argv, argc, 0))
		return true;
	if (!script || argc != 3)
		return false;
	/* every literal command of a script that parses, at any depth */
	lit_script(script, strlen(script), 0, &found, &error);
	return found && !error;
}

bool safety_prefix_suggestion_banned(const char *const *argv, size_t argc)
{
	static const char *const banned[][3] = {
		{"python3"}, {"python3", "-"}, {"python3", "-c"}, {"python"}, {"python", "-"},
		{"python", "-c"}, {"py"}, {"py", "-3"}, {"pythonw"}, {"pyw"}, {"pypy"}, {"pypy3"},
		{"git"}, {"bash"}, {"bash", "-lc"}, {"sh"}, {"sh", "-c"}, {"sh", "-lc"}, {"zsh"},
		{"zsh", "-lc"}, {"/bin/zsh"}, {"/bin/zsh", "-lc"}, {"/bin/bash"}, {"/bin/bash", "-lc"},
		{"pwsh"}, {"pwsh", "-Command"}, {"pwsh", "-c"}, {"powershell"},
		{"powershell", "-Command"}, {"powershell", "-c"}, {"powershell.exe"},
		{"powershell.exe", "-Command"}, {"powershell.exe", "-c"}, {"env"}, {"sudo"},
		{"node"}, {"node", "-e"}, {"perl"}, {"perl", "-e"}, {"ruby"}, {"ruby", "-e"},
		{"php"}, {"php", "-r"}, {"lua"}, {"lua", "-e"}, {"osascript"},
	};

	if (argc == 0)
		return true;
	for (size_t b = 0; b < sizeof(banned) / sizeof(banned[0]); b++) {
		size_t n = banned[b][1] ? 2 : 1;

		if (n != argc)
			continue;
		if (streq(banned[b][0], argv[0]) && (n == 1 || streq(banned[b][1], argv[1])))
			return true;
	}
	return false;
}
