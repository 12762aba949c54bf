/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shell.c: a conservative splitter for `bash|zsh|sh -c|-lc SCRIPT`.
 *
 * A script is split into segments only when it is made of plain commands
 * (bare words and quoted strings) joined by `&&`, `||`, `;`, `|` or newlines.
 * Anything that could make a segment mean something other than its words
 * (parameter expansion, command or process substitution, globbing, tilde,
 * redirection, subshells, groups, control flow, assignments, background
 * jobs, comments) leaves the script unsplit (SHELL_COMPLEX with a reason), so
 * a rule that matches only a piece of it can never allow the whole.
 *
 * One exception exists for Codex conformance: a script that is exactly one
 * literal command fed by a heredoc (`python3 <<'PY' ... PY`) is reported as
 * SHELL_HEREDOC with that command; callers decide whether to trust it.
 */
#include <string.h>

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"

void shell_split_init(shell_split *s)
{
	memset(s, 0, sizeof(*s));
}

void shell_split_dispose(shell_split *s)
{
	docket_buf_dispose(&s->text);
	docket_free(s->word_off);
	docket_free(s->seg_start);
	docket_free(s->ops);
	shell_split_init(s);
}

static void split_reset(shell_split *s)
{
	docket_buf_clear(&s->text);
	s->nwords = 0;
	s->nsegs = 0;
	s->status = SHELL_PLAIN;
	s->reason = NULL;
}

static int grow(void **ptr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	if (ncap > SIZE_MAX / elem)
		return docket_error_set(DOCKET_ENOMEM, "shell split too large");
	np = docket_realloc(*ptr, ncap * elem);
	if (!np)
		return docket_error_set_oom();
	*ptr = np;
	*cap = ncap;
	return 0;
}

static int start_word(shell_split *s)
{
	int error;

	if ((error = grow((void **)&s->word_off, &s->capwords, s->nwords + 1, sizeof(size_t))) < 0)
		return error;
	s->word_off[s->nwords++] = s->text.len;
	return 0;
}

static int end_word(shell_split *s)
{
	return docket_buf_putc(&s->text, '\0');
}

static int start_segment(shell_split *s)
{
	int error;

	if ((error = grow((void **)&s->seg_start, &s->capsegs, s->nsegs + 2, sizeof(size_t))) < 0)
		return error;
	if ((error = grow((void **)&s->ops, &s->capops, s->nsegs + 2, 1)) < 0)
		return error;
	s->seg_start[s->nsegs] = s->nwords;
	s->ops[s->nsegs] = 0;
	s->nsegs++;
	s->seg_start[s->nsegs] = s->nwords;
	return 0;
}

static int complex(shell_split *s, const char *reason)
{
	s->status = SHELL_COMPLEX;
	s->reason = reason;
	return 1;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool is_meta(char c)
{
	switch (c) {
	case ' ': case '\t': case '\r': case '\n': case ';': case '&': case '|': case '(': case ')':
	case '<': case '>':
		return true;
	default:
		return false;
	}
}

/* Does c end a run of ordinary word characters (a metacharacter, a quote,
 * an escape, an expansion, a glob, a brace, `~ # =`, or NUL)? */
static bool ends_run(char c)
{
	switch (c) {
	case '\0': case '\'': case '"': case '\\': case '$': case '`': case '*': case '?': case '[':
	case '{': case '}': case '~': case '#': case '=':
		return true;
	default:
		return is_meta(c);
	}
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static const char *const reserved_words[] = {
	"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
	"case", "esac", "function", "select", "time", "coproc", "[[", "]]", "{", "}", "!",
	"in", NULL
};

static bool is_reserved(const char *w)
{
	/* every reserved word is short and starts with one of these */
	if (!strchr("ftedcswui[]{}!", w[0]) || strlen(w) > 8)
		return false;
	for (size_t i = 0; reserved_words[i]; i++)
		if (strcmp(w, reserved_words[i]) == 0)
			return true;
	return false;
}

/* Reserved words that tree-sitter-bash (Codex) parses as a plain command name
 * at the start of a segment (measured: `printf x; time ls` splits in codex-cli
 * 0.169.0 and 0.171.0). */
static bool is_codex_word(const char *w)
{
	static const char *const words[] = { "time", "coproc", "in", "then", "do", "fi", "done", "esac", NULL };

	for (size_t i = 0; words[i]; i++)
		if (strcmp(w, words[i]) == 0)
			return true;
	return false;
}

/*
 * Lex one word starting at *pos. Returns 0 with the word appended, 1 when
 * the script is complex (status set), <0 on ENOMEM. *quoted_any reports
 * whether any part was quoted or escaped (reserved words and assignments
 * only count when unquoted).
 */
static int lex_word(shell_split *s, const char *p, size_t len, size_t *pos, bool *quoted_any,
		    bool *assignment)
{
	size_t i = *pos;
	size_t start = i;
	int error;
	bool any_unquoted_eq_candidate = true;

	*quoted_any = false;
	*assignment = false;
	if ((error = start_word(s)) < 0)
		return error;
	while (i < len && !is_meta(p[i])) {
		char c = p[i];
		size_t run = i;

		/* copy a run of ordinary characters at once */
		while (run < len && !ends_run(p[run]))
			run++;
		if (run > i) {
			if ((error = docket_buf_put(&s->text, p + i, run - i)) < 0)
				return error;
			i = run;
			continue;
		}
		if (c == '\'') {
			size_t j = i + 1;

			while (j < len && p[j] != '\'')
				j++;
			if (j >= len)
				return complex(s, "syntax");
			if ((error = docket_buf_put(&s->text, p + i + 1, j - i - 1)) < 0)
				return error;
			*quoted_any = true;
			any_unquoted_eq_candidate = false;
			i = j + 1;
			continue;
		}
		if (c == '"') {
			size_t j = i + 1;

			for (;;) {
				if (j >= len)
					return complex(s, "syntax");
				if (p[j] == '"')
					break;
				if (p[j] == '$')
					return complex(s, "expansion");
				if (p[j] == '`')
					return complex(s, "substitution");
				if (p[j] == '\\' && j + 1 < len &&
				    (p[j + 1] == '"' || p[j + 1] == '\\' || p[j + 1] == '$' ||
				     p[j + 1] == '`' || p[j + 1] == '\n')) {
					if (p[j + 1] != '\n' &&
					    (error = docket_buf_putc(&s->text, p[j + 1])) < 0)
						return error;
					j += 2;
					continue;
				}
				if ((error = docket_buf_putc(&s->text, p[j])) < 0)
					return error;
				j++;
			}
			*quoted_any = true;
			any_unquoted_eq_candidate = false;
			i = j + 1;
			continue;
		}
		if (c == '\\') {
			if (i + 1 >= len)
				return complex(s, "syntax");
			if (p[i + 1] != '\n' && (error = docket_buf_putc(&s->text, p[i + 1])) < 0)
				return error;
			*quoted_any = true;
			any_unquoted_eq_candidate = false;
			i += 2;
			continue;
		}
		switch (c) {
		case '$':
			return complex(s, i + 1 < len && p[i + 1] == '(' ? "substitution" : "expansion");
		case '`':
			return complex(s, "substitution");
		case '*': case '?': case '[':
			return complex(s, "glob");
		case '{':
			if (i + 1 < len && p[i + 1] == '}') {
				if ((error = docket_buf_put(&s->text, "{}", 2)) < 0)
					return error;
				i += 2;
				continue;
			}
			return complex(s, "group");
		case '}':
			return complex(s, "group");
		case '~':
			if (i == start)
				return complex(s, "tilde");
			break;
		case '#':
			if (i == start)
				return complex(s, "comment");
			break;
		case '=':
			if (any_unquoted_eq_candidate && i > start && is_ident_start(p[start])) {
				bool ident = true;

				for (size_t k = start; k < i; k++)
					if (!is_ident(p[k]))
						ident = false;
				if (ident)
					*assignment = true;
			}
			any_unquoted_eq_candidate = false;
			break;
		default:
			break;
		}
		if ((error = docket_buf_putc(&s->text, c)) < 0)
			return error;
		i++;
	}
	if ((error = end_word(s)) < 0)
		return error;
	*pos = i;
	return 0;
}

/*
 * The heredoc tail: `<<[-] DELIM [> word]` NEWLINE body DELIM-line, then only
 * blanks. Called with *pos at the first '<'. Returns 0 when the script is a
 * single heredoc command, 1 (complex) otherwise.
 */
static int lex_heredoc(shell_split *s, const char *p, size_t len, size_t i)
{
	bool strip_tabs = false, quoted = false;
	char delim[256];
	size_t dlen = 0;

	i += 2;
	if (i < len && p[i] == '<')
		return complex(s, "redirection");
	if (i < len && p[i] == '-') {
		strip_tabs = true;
		i++;
	}
	while (i < len && is_blank(p[i]))
		i++;
	/* the delimiter: a word, possibly quoted */
	while (i < len && !is_meta(p[i])) {
		char c = p[i];

		if (c == '\'' || c == '"') {
			size_t j = i + 1;

			while (j < len && p[j] != c)
				j++;
			if (j >= len)
				return complex(s, "syntax");
			for (size_t k = i + 1; k < j; k++) {
				if (dlen + 1 >= sizeof(delim))
					return complex(s, "syntax");
				delim[dlen++] = p[k];
			}
			quoted = true;
			i = j + 1;
			continue;
		}
		if (c == '\\' || c == '$' || c == '`')
			return complex(s, "expansion");
		if (dlen + 1 >= sizeof(delim))
			return complex(s, "syntax");
		delim[dlen++] = c;
		i++;
	}
	if (dlen == 0)
		return complex(s, "syntax");
	delim[dlen] = '\0';
	/* rest of the line: blanks, or one output redirection to a literal word */
	while (i < len && is_blank(p[i]))
		i++;
	if (i < len && p[i] == '>') {
		i++;
		if (i < len && p[i] == '>')
			i++;
		while (i < len && is_blank(p[i]))
			i++;
		if (i >= len || is_meta(p[i]))
			return complex(s, "syntax");
		while (i < len && !is_meta(p[i])) {
			if (strchr("$`\\'\"*?[{~", p[i]))
				return complex(s, "redirection");
			i++;
		}
		while (i < len && is_blank(p[i]))
			i++;
	}
	if (i >= len || p[i] != '\n')
		return complex(s, "redirection");
	i++;
	/* body lines until the delimiter line */
	for (;;) {
		size_t ls = i, le;

		if (i >= len)
			return complex(s, "syntax");
		while (i < len && p[i] != '\n')
			i++;
		le = i;
		if (strip_tabs)
			while (ls < le && p[ls] == '\t')
				ls++;
		if (le - ls == dlen && memcmp(p + ls, delim, dlen) == 0) {
			if (i < len)
				i++;
			break;
		}
		if (!quoted)
			for (size_t k = ls; k < le; k++)
				if (p[k] == '$' || p[k] == '`' || p[k] == '\\')
					return complex(s, "expansion");
		if (i < len)
			i++;
	}
	while (i < len && (is_blank(p[i]) || p[i] == '\n'))
		i++;
	if (i < len)
		return complex(s, "heredoc");
	s->status = SHELL_HEREDOC;
	return 0;
}

int shell_split_script(shell_split *s, const char *p, size_t len)
{
	size_t i = 0;
	int error;
	bool in_segment = false;    /* words seen in the current segment */
	bool need_command = false;  /* after && || | : a command must follow */
	char last_op = 0;

	split_reset(s);
	if (memchr(p, '\0', len))
		return complex(s, "syntax"), 0;
	while (i < len) {
		char c = p[i];

		if (is_blank(c)) {
			i++;
			continue;
		}
		if (c == '\\' && i + 1 < len && p[i + 1] == '\n') {
			i += 2;
			continue;
		}
		if (c == '\n') {
			if (in_segment) {
				s->ops[s->nsegs - 1] = ';';
				in_segment = false;
				last_op = ';';
			}
			i++;
			continue;
		}
		if (c == ';') {
			if (!in_segment)
				return complex(s, "syntax"), 0;
			if (i + 1 < len && p[i + 1] == ';')
				return complex(s, "syntax"), 0;
			s->ops[s->nsegs - 1] = ';';
			in_segment = false;
			last_op = ';';
			i++;
			continue;
		}
		if (c == '&' || c == '|') {
			char op;

			if (c == '&' && i + 1 < len && p[i + 1] == '&')
				op = '&';
			else if (c == '|' && i + 1 < len && p[i + 1] == '|')
				op = '|';
			else if (c == '|' && i + 1 < len && p[i + 1] == '&')
				return complex(s, "redirection"), 0;
			else if (c == '|')
				op = 'p';
			else if (i + 1 < len && p[i + 1] == '>')
				return complex(s, "redirection"), 0;
			else
				return complex(s, "background"), 0;
			if (!in_segment)
				return complex(s, "syntax"), 0;
			s->ops[s->nsegs - 1] = op;
			in_segment = false;
			need_command = true;
			last_op = op;
			i += op == 'p' ? 1 : 2;
			continue;
		}
		if (c == '(' || c == ')')
			return complex(s, "subshell"), 0;
		if (c == '<' && i + 1 < len && p[i + 1] == '<' && !(i + 2 < len && p[i + 2] == '<')) {
			/* a heredoc: only as the whole script's single command */
			if (!in_segment || s->nsegs != 1 || last_op != 0) {
				return complex(s, "redirection"), 0;
			}
			if (lex_heredoc(s, p, len, i) != 0)
				return 0;
			return 0;
		}
		if (c == '<' || c == '>')
			return complex(s, "redirection"), 0;
		{
			bool quoted, assignment;
			size_t widx;
			int r;

			if (!in_segment) {
				if ((error = start_segment(s)) < 0)
					return error;
				in_segment = true;
				need_command = false;
			}
			widx = s->nwords;
			r = lex_word(s, p, len, &i, &quoted, &assignment);
			if (r < 0)
				return r;
			if (r > 0)
				return 0;
			if (widx == s->seg_start[s->nsegs - 1]) {
				const char *w = s->text.ptr + s->word_off[widx];

				if (!quoted && is_reserved(w) && !(s->codex_words && is_codex_word(w)))
					return complex(s, "control_flow"), 0;
				if (assignment)
					return complex(s, "assignment"), 0;
			}
			s->seg_start[s->nsegs] = s->nwords;
			/* a word directly followed by a digit-redirect like 2> is caught above */
		}
	}
	if (need_command)
		return complex(s, "syntax"), 0;
	if (s->nsegs == 0)
		s->status = SHELL_EMPTY;
	if (s->nsegs > 0)
		s->ops[s->nsegs - 1] = 0;
	return 0;
}

const char *shell_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

const char *shell_script_of(const char *const *argv, size_t argc, const char **flag)
{
	const char *base;

	if (argc != 3)
		return NULL;
	if (strcmp(argv[1], "-lc") != 0 && strcmp(argv[1], "-c") != 0)
		return NULL;
	base = shell_basename(argv[0]);
	if (strcmp(base, "bash") != 0 && strcmp(base, "zsh") != 0 && strcmp(base, "sh") != 0)
		return NULL;
	if (flag)
		*flag = argv[1];
	return argv[2];
}

int shell_shlex_split(shell_split *s, const char *str)
{
	size_t i = 0, len = strlen(str);
	int error;

	split_reset(s);
	if ((error = start_segment(s)) < 0)
		return error;
	while (i < len) {
		if (str[i] == ' ' || str[i] == '\t' || str[i] == '\n' || str[i] == '\r') {
			i++;
			continue;
		}
		if ((error = start_word(s)) < 0)
			return error;
		while (i < len && !(str[i] == ' ' || str[i] == '\t' || str[i] == '\n' || str[i] == '\r')) {
			char c = str[i];

			if (c == '\'') {
				size_t j = i + 1;

				while (j < len && str[j] != '\'')
					j++;
				if (j >= len)
					return -1;
				if ((error = docket_buf_put(&s->text, str + i + 1, j - i - 1)) < 0)
					return error;
				i = j + 1;
			} else if (c == '"') {
				size_t j = i + 1;

				for (;;) {
					if (j >= len)
						return -1;
					if (str[j] == '"')
						break;
					if (str[j] == '\\' && j + 1 < len &&
					    strchr("\"\\$`\n", str[j + 1])) {
						if ((error = docket_buf_putc(&s->text, str[j + 1])) < 0)
							return error;
						j += 2;
						continue;
					}
					if ((error = docket_buf_putc(&s->text, str[j])) < 0)
						return error;
					j++;
				}
				i = j + 1;
			} else if (c == '\\') {
				if (i + 1 >= len)
					return -1;
				if ((error = docket_buf_putc(&s->text, str[i + 1])) < 0)
					return error;
				i += 2;
			} else {
				if ((error = docket_buf_putc(&s->text, c)) < 0)
					return error;
				i++;
			}
		}
		if ((error = end_word(s)) < 0)
			return error;
	}
	s->seg_start[1] = s->nwords;
	return 0;
}

static bool needs_quote(const char *w)
{
	if (!*w)
		return true;
	for (; *w; w++) {
		char c = *w;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("@%+=:,./-_", c)))
			return true;
	}
	return false;
}

int shell_join(docket_buf *buf, const char *const *argv, size_t argc)
{
	int error = 0;

	for (size_t i = 0; i < argc && error == 0; i++) {
		const char *w = argv[i];

		if (i > 0 && (error = docket_buf_putc(buf, ' ')) < 0)
			break;
		if (!needs_quote(w)) {
			error = docket_buf_puts(buf, w);
			continue;
		}
		if ((error = docket_buf_putc(buf, '\'')) < 0)
			break;
		for (; *w && error == 0; w++) {
			if (*w == '\'')
				error = docket_buf_puts(buf, "'\"'\"'");
			else
				error = docket_buf_putc(buf, *w);
		}
		if (error == 0)
			error = docket_buf_putc(buf, '\'');
	}
	return error;
}
