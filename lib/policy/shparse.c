/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shparse.c: the shell analysis (shparse.h has the invariants).
 *
 * One recursive-descent pass over the script:
 *
 *   parse_list ──> parse_command ──> lex_word ──> $( ) ` ` <( ) ${ } $(( ))
 *       ^               │                              │
 *       │               └──> emit (look-through) ──────┤ nested script:
 *       └──────────────────────────────────────────────┘ sh -c, eval, heredoc ...
 *
 * Every nesting (substitution, nested script) goes one level deeper;
 * each level has its own word buffer and source copy (wb[], src[]), so a
 * level never writes what a shallower level is still reading. A command's
 * words are collected per level (cmdw[]), so they stay contiguous although
 * nested commands are recorded in between.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "shparse.h"
#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"
#include "util/htab.h"

/* ---- the look-through table (docs/policy.md lists it) ---- */

static const char *const opt_env[] = { "-u", "--unset", "-C", "--chdir", NULL };
static const char *const opt_sudo[] = { "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user",
	"--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type", "--command-timeout",
	"--other-user", NULL };
static const char *const opt_doas[] = { "-u", "-C", NULL };
static const char *const opt_exec[] = { "-a", NULL };
static const char *const opt_nice[] = { "-n", "--adjustment", NULL };
static const char *const opt_timeout[] = { "-s", "--signal", "-k", "--kill-after", NULL };
static const char *const opt_time[] = { "-f", "--format", "-o", "--output", NULL };
static const char *const opt_stdbuf[] = { "-i", "-o", "-e", "--input", "--output", "--error", NULL };
static const char *const opt_xargs[] = { "-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-i",
	"-L", "-l", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var", NULL };
static const char *const opt_watch[] = { "-n", "--interval", "-d", "-q", "--equexit", NULL };
static const char *const opt_flock[] = { "-w", "--wait", "--timeout", "-E", "--conflict-exit-code", NULL };
static const char *const opt_setsid[] = { NULL };
static const char *const opt_chroot[] = { "--userspec", "--groups", NULL };
static const char *const opt_ionice[] = { "-c", "--class", "-n", "--classdata", NULL };
static const char *const opt_taskset[] = { NULL };
static const char *const opt_strace[] = { "-o", "-e", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-P", NULL };
static const char *const opt_su[] = { "-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w",
	"--whitelist-environment", NULL };
static const char *const opt_shell[] = { "-o", "+o", "-O", "+O", "--rcfile", "--init-file", NULL };
static const char *const opt_python[] = { "-W", "-X", "--check-hash-based-pycs", NULL };
static const char *const opt_node[] = { "-r", "--require", "--import", "--loader", "--input-type", NULL };
static const char *const opt_none[] = { NULL };
static const char *const opt_script[] = { "-E", "--echo", "-O", "--log-out", "-I", "--log-in", "-B",
	"--log-io", "-T", "--log-timing", "-m", "--logging-format", NULL };
static const char *const opt_git[] = { "-C", "-c", "--git-dir", "--work-tree", "--namespace", NULL };

static const sh_look look_table[] = {
	/* wrappers: the command after their options (and operands) runs */
	{ "env", SHL_WRAPPER, opt_env, 0, NULL, NULL },
	{ "sudo", SHL_WRAPPER, opt_sudo, 0, NULL, NULL },
	{ "doas", SHL_WRAPPER, opt_doas, 0, NULL, NULL },
	{ "command", SHL_WRAPPER, opt_none, 0, NULL, NULL },
	{ "builtin", SHL_WRAPPER, opt_none, 0, NULL, NULL },
	{ "exec", SHL_WRAPPER, opt_exec, 0, NULL, NULL },
	{ "nice", SHL_WRAPPER, opt_nice, 0, NULL, NULL },
	{ "nohup", SHL_WRAPPER, opt_none, 0, NULL, NULL },
	{ "time", SHL_WRAPPER, opt_time, 0, NULL, NULL },
	{ "timeout", SHL_WRAPPER, opt_timeout, 1, NULL, NULL },
	{ "stdbuf", SHL_WRAPPER, opt_stdbuf, 0, NULL, NULL },
	{ "setsid", SHL_WRAPPER, opt_setsid, 0, NULL, NULL },
	{ "chroot", SHL_WRAPPER, opt_chroot, 1, NULL, NULL },
	{ "ionice", SHL_WRAPPER, opt_ionice, 0, NULL, NULL },
	{ "chrt", SHL_WRAPPER, opt_none, 1, NULL, NULL },
	{ "taskset", SHL_WRAPPER, opt_taskset, 1, NULL, NULL },
	{ "unbuffer", SHL_WRAPPER, opt_none, 0, NULL, NULL },
	{ "caffeinate", SHL_WRAPPER, opt_none, 0, NULL, NULL },
	{ "strace", SHL_WRAPPER, opt_strace, 0, NULL, NULL },
	{ "ltrace", SHL_WRAPPER, opt_strace, 0, NULL, NULL },
	{ "busybox", SHL_WRAPPER, opt_none, 0, NULL, NULL },
	{ "coproc", SHL_WRAPPER, opt_none, 0, NULL, NULL },
	{ "xargs", SHL_WRAPPER, opt_xargs, 0, NULL, NULL },
	{ "flock", SHL_EXEC_ARGS, opt_flock, 1, NULL, "-c" },
	/* commands found in their arguments */
	{ "find", SHL_EXEC_ARGS, opt_none, 0, NULL, NULL },
	{ "watch", SHL_EXEC_ARGS, opt_watch, 0, NULL, NULL },
	{ "su", SHL_EXEC_ARGS, opt_su, 0, NULL, "-c" },
	{ "runuser", SHL_EXEC_ARGS, opt_su, 0, NULL, "-c" },
	{ "script", SHL_EXEC_ARGS, opt_script, 0, NULL, "-c" },
	{ "trap", SHL_EXEC_ARGS, opt_none, 0, NULL, NULL },
	{ "alias", SHL_EXEC_ARGS, opt_none, 0, NULL, NULL },
	/* shells */
	{ "bash", SHL_SHELL, opt_shell, 0, "shell", "-c" },
	{ "sh", SHL_SHELL, opt_shell, 0, "shell", "-c" },
	{ "zsh", SHL_SHELL, opt_shell, 0, "shell", "-c" },
	{ "dash", SHL_SHELL, opt_shell, 0, "shell", "-c" },
	{ "ksh", SHL_SHELL, opt_shell, 0, "shell", "-c" },
	{ "mksh", SHL_SHELL, opt_shell, 0, "shell", "-c" },
	{ "ash", SHL_SHELL, opt_shell, 0, "shell", "-c" },
	{ "yash", SHL_SHELL, opt_shell, 0, "shell", "-c" },
	{ "fish", SHL_SHELL, opt_shell, 0, "shell", "-c" },
	{ "eval", SHL_EVAL, opt_none, 0, NULL, NULL },
	{ "source", SHL_SOURCE, opt_none, 0, "shell", NULL },
	{ ".", SHL_SOURCE, opt_none, 0, "shell", NULL },
	/* interpreters: one-liners, script files, stdin */
	{ "python", SHL_INTERP, opt_python, 0, "python", "-c" },
	{ "python2", SHL_INTERP, opt_python, 0, "python", "-c" },
	{ "python3", SHL_INTERP, opt_python, 0, "python", "-c" },
	{ "pypy", SHL_INTERP, opt_python, 0, "python", "-c" },
	{ "pypy3", SHL_INTERP, opt_python, 0, "python", "-c" },
	{ "node", SHL_INTERP, opt_node, 0, "javascript", "-e" },
	{ "nodejs", SHL_INTERP, opt_node, 0, "javascript", "-e" },
	{ "deno", SHL_INTERP, opt_none, 0, "javascript", "eval" },
	{ "bun", SHL_INTERP, opt_none, 0, "javascript", "-e" },
	{ "perl", SHL_INTERP, opt_none, 0, "perl", "-e" },
	{ "ruby", SHL_INTERP, opt_none, 0, "ruby", "-e" },
	{ "php", SHL_INTERP, opt_none, 0, "php", "-r" },
	{ "lua", SHL_INTERP, opt_none, 0, "lua", "-e" },
	{ "Rscript", SHL_INTERP, opt_none, 0, "r", "-e" },
	{ "osascript", SHL_INTERP, opt_none, 0, "applescript", "-e" },
	{ "pwsh", SHL_INTERP, opt_none, 0, "powershell", "-c" },
	{ "powershell", SHL_INTERP, opt_none, 0, "powershell", "-c" },
	{ "tclsh", SHL_INTERP, opt_none, 0, "tcl", NULL },
	{ "awk", SHL_INTERP, opt_none, 0, "awk", "" },
	{ "gawk", SHL_INTERP, opt_none, 0, "awk", "" },
	{ "mawk", SHL_INTERP, opt_none, 0, "awk", "" },
	{ "nawk", SHL_INTERP, opt_none, 0, "awk", "" },
	/* readers: a denied path given to them is a denied read */
	{ "cat", SHL_READER, opt_none, 0, NULL, NULL },
	{ "tac", SHL_READER, opt_none, 0, NULL, NULL },
	{ "nl", SHL_READER, opt_none, 0, NULL, NULL },
	{ "base64", SHL_READER, opt_none, 0, NULL, NULL },
	{ "base32", SHL_READER, opt_none, 0, NULL, NULL },
	{ "rev", SHL_READER, opt_none, 0, NULL, NULL },
	{ "paste", SHL_READER, opt_none, 0, NULL, NULL },
	{ "sed", SHL_READER, opt_none, 0, NULL, NULL },
	{ "head", SHL_READER, opt_none, 0, NULL, NULL },
	{ "tail", SHL_READER, opt_none, 0, NULL, NULL },
	{ "less", SHL_READER, opt_none, 0, NULL, NULL },
	{ "more", SHL_READER, opt_none, 0, NULL, NULL },
	{ "od", SHL_READER, opt_none, 0, NULL, NULL },
	{ "xxd", SHL_READER, opt_none, 0, NULL, NULL },
	{ "hexdump", SHL_READER, opt_none, 0, NULL, NULL },
	{ "strings", SHL_READER, opt_none, 0, NULL, NULL },
	{ "cut", SHL_READER, opt_none, 0, NULL, NULL },
	{ "sort", SHL_READER, opt_none, 0, NULL, NULL },
	{ "uniq", SHL_READER, opt_none, 0, NULL, NULL },
	{ "grep", SHL_READER, opt_none, 0, NULL, NULL },
	{ "egrep", SHL_READER, opt_none, 0, NULL, NULL },
	{ "fgrep", SHL_READER, opt_none, 0, NULL, NULL },
	{ "rg", SHL_READER, opt_none, 0, NULL, NULL },
	{ "diff", SHL_READER, opt_none, 0, NULL, NULL },
	{ "cmp", SHL_READER, opt_none, 0, NULL, NULL },
	{ "wc", SHL_READER, opt_none, 0, NULL, NULL },
	{ "cp", SHL_READER, opt_none, 0, NULL, NULL },
	{ "dd", SHL_READER, opt_none, 0, NULL, NULL },
	{ "tar", SHL_READER, opt_none, 0, NULL, NULL },
	{ "zip", SHL_READER, opt_none, 0, NULL, NULL },
	{ "jq", SHL_READER, opt_none, 0, NULL, NULL },
	{ "bat", SHL_READER, opt_none, 0, NULL, NULL },
	{ "fold", SHL_READER, opt_none, 0, NULL, NULL },
	{ "iconv", SHL_READER, opt_none, 0, NULL, NULL },
	{ "openssl", SHL_READER, opt_none, 0, NULL, NULL },
	{ "git", SHL_READER, opt_git, 0, NULL, NULL },
	{ NULL, 0, NULL, 0, NULL, NULL }
};

const sh_look *sh_lookthrough_table(void)
{
	return look_table;
}

/*
 * The table by name, built once (pthread_once) in static storage: a lookup
 * is one hash and one comparison, and cannot fail. The first entry of a
 * name wins, as a walk of the table would find it.
 */
#define LOOK_SLOTS 256
_Static_assert(2 * (sizeof(look_table) / sizeof(look_table[0])) <= LOOK_SLOTS, "look_table outgrew its index");
static uint16_t look_slot[LOOK_SLOTS];   /* index into look_table + 1 */
static uint32_t look_tag[LOOK_SLOTS];
static docket_htab look_index;
static pthread_once_t look_once = PTHREAD_ONCE_INIT;

static int look_eq(const void *slot, const void *key)
{
	return strcmp(look_table[*(const uint16_t *)slot - 1].name, key) == 0;
}

static void look_build(void)
{
	look_index = (docket_htab){ (unsigned char *)look_slot, look_tag, LOOK_SLOTS, 0, sizeof(uint16_t) };
	for (size_t i = 0; look_table[i].name; i++) {
		const char *name = look_table[i].name;
		uint32_t h = docket_hash(DOCKET_HASH_SEED, name, strlen(name));
		uint16_t *slot = docket_htab_find(&look_index, h, look_eq, name);

		if (!docket_htab_free_at(&look_index, slot))
			continue;
		*slot = (uint16_t)(i + 1);
		docket_htab_take(&look_index, slot, h);
	}
}

const sh_look *sh_lookup(const char *prog)
{
	const char *base = shell_basename(prog);
	const uint16_t *slot;

	if (!*base)
		return NULL;
	pthread_once(&look_once, look_build);
	slot = docket_htab_find(&look_index, docket_hash(DOCKET_HASH_SEED, base, strlen(base)), look_eq, base);
	if (!docket_htab_free_at(&look_index, slot))
		return &look_table[*slot - 1];
	/* python3.12, pip3.11 ... are python3 */
	if (strncmp(base, "python", 6) == 0) {
		const char *v = base + 6;

		while ((*v >= '0' && *v <= '9') || *v == '.')
			v++;
		if (!*v)
			return sh_lookup("python3");
	}
	return NULL;
}

/* ---- state ---- */

typedef struct hd_pending {
	size_t cmd;               /* the command it feeds, (size_t)-1: none */
	size_t redir;             /* its redirection entry in redirs, (size_t)-1: none */
	bool strip, quoted;
	char delim[128];
	size_t dlen;
} hd_pending;

#define HD_MAX 16

typedef struct sh_state {
	sh_analysis *a;
	const char *s;
	size_t len, i;
	unsigned depth;
	bool pipe_in;
	hd_pending hd[HD_MAX];
	size_t nhd;
} sh_state;

int sh_incomplete(sh_analysis *a, const char *why)
{
	if (!a->incomplete) {
		a->incomplete = true;
		a->why = why;
	}
	return 0;
}

static int incomplete(sh_analysis *a, const char *why)
{
	return sh_incomplete(a, why);
}

static bool stop(const sh_state *p)
{
	return p->a->incomplete;
}

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
	while (*cap < need) {
		void *nv = docket_array_grow(*v, cap, elem, 16);

		if (!nv)
			return DOCKET_ENOMEM;
		*v = nv;
	}
	return 0;
}

static int push_word(sh_analysis *a, const char *v, size_t n, unsigned flags, size_t *out)
{
	int error;

	if (a->nwords >= SH_MAX_WORDS)
		return incomplete(a, "cap"), *out = 0, 1;
	if ((error = grow((void **)&a->word_off, &a->capwords, a->nwords + 1, sizeof(*a->word_off))) < 0 ||
	    (error = grow((void **)&a->word_flags, &a->capwflags, a->nwords + 1, 1)) < 0)
		return error;
	a->word_off[a->nwords] = a->text.len;
	a->word_flags[a->nwords] = (unsigned char)flags;
	if ((error = docket_buf_put(&a->text, v, n)) < 0 || (error = docket_buf_putc(&a->text, '\0')) < 0)
		return error;
	*out = a->nwords++;
	return 0;
}

/* Another word entry for an existing word (a command's argv is contiguous). */
static int dup_word(sh_analysis *a, size_t w)
{
	int error;

	if (a->nwords >= SH_MAX_WORDS)
		return incomplete(a, "cap"), 1;
	if ((error = grow((void **)&a->word_off, &a->capwords, a->nwords + 1, sizeof(*a->word_off))) < 0 ||
	    (error = grow((void **)&a->word_flags, &a->capwflags, a->nwords + 1, 1)) < 0)
		return error;
	a->word_off[a->nwords] = a->word_off[w];
	a->word_flags[a->nwords] = a->word_flags[w];
	a->nwords++;
	return 0;
}

static int wv_push(sh_wordv *v, size_t w)
{
	int error;

	if ((error = grow((void **)&v->v, &v->cap, v->n + 1, sizeof(*v->v))) < 0)
		return error;
	v->v[v->n++] = w;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool is_meta(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' ||
	       c == '(' || c == ')' || c == '<' || c == '>';
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static int parse_list(sh_state *p, char term);
static int analyze_nested(sh_analysis *a, const char *script, size_t len, unsigned depth, bool copy);

/* ---- words ---- */

enum { LEX_QUOTED = 1u << 0, LEX_DYNAMIC = 1u << 1, LEX_ASSIGN = 1u << 2, LEX_ARRAY = 1u << 3 };

/* Parse the body of $( ... ) one level deeper; p->i is past "$(". */
static int nested_list(sh_state *p, char term)
{
	int error;

	if (p->depth + 1 > SH_MAX_DEPTH)
		return incomplete(p->a, "depth");
	p->depth++;
	error = parse_list(p, term);
	p->depth--;
	return error;
}

/* `...`: the body, unescaped, analysed as a script one level deeper. */
static int lex_backtick(sh_state *p, docket_buf *b)
{
	size_t start = p->i, j = p->i + 1;
	docket_buf *inner;
	int error;

	if (p->depth + 1 > SH_MAX_DEPTH)
		return incomplete(p->a, "depth");
	inner = &p->a->src[p->depth + 1];
	docket_buf_clear(inner);
	while (j < p->len && p->s[j] != '`') {
		if (p->s[j] == '\\' && j + 1 < p->len && strchr("$`\\", p->s[j + 1]))
			j++;
		if ((error = docket_buf_putc(inner, p->s[j])) < 0)
			return error;
		j++;
	}
	if (j >= p->len)
		return incomplete(p->a, "syntax");
	p->i = j + 1;
	if ((error = docket_buf_put(b, p->s + start, p->i - start)) < 0)
		return error;
	return analyze_nested(p->a, inner->ptr ? inner->ptr : "", inner->len, p->depth + 1, false);
}

/* $(( ... )): substitutions inside run; the value is not known. */
static int lex_arith(sh_state *p)
{
	int nest = 0, error;

	p->i += 3;
	while (p->i < p->len && !stop(p)) {
		char c = p->s[p->i];

		if (c == '$' && p->i + 1 < p->len && p->s[p->i + 1] == '(' &&
		    !(p->i + 2 < p->len && p->s[p->i + 2] == '(')) {
			p->i += 2;
			if ((error = nested_list(p, ')')) < 0)
				return error;
			continue;
		}
		if (c == '`') {
			docket_buf *tmp = &p->a->scratch;

			docket_buf_clear(tmp);
			if ((error = lex_backtick(p, tmp)) < 0)
				return error;
			continue;
		}
		if (c == '(')
			nest++;
		if (c == ')') {
			if (nest == 0) {
				if (p->i + 1 < p->len && p->s[p->i + 1] == ')') {
					p->i += 2;
					return 0;
				}
				return incomplete(p->a, "arithmetic");
			}
			nest--;
		}
		p->i++;
	}
	return incomplete(p->a, "arithmetic");
}

static int lex_dq(sh_state *p, docket_buf *b, unsigned *lf, char close);

/* ${ ... }: nested expansions and substitutions inside run. */
static int lex_brace_param(sh_state *p)
{
	int nest = 0, error;

	p->i += 2;
	while (p->i < p->len && !stop(p)) {
		char c = p->s[p->i];

		if (c == '\\') {
			p->i += 2;
			continue;
		}
		if (c == '\'') {
			const char *q = memchr(p->s + p->i + 1, '\'', p->len - p->i - 1);

			if (!q)
				return incomplete(p->a, "syntax");
			p->i = (size_t)(q - p->s) + 1;
			continue;
		}
		if (c == '"') {
			docket_buf *tmp = &p->a->scratch;
			unsigned lf = 0;

			docket_buf_clear(tmp);
			p->i++;
			if ((error = lex_dq(p, tmp, &lf, '"')) < 0)
				return error;
			continue;
		}
		if (c == '$' && p->i + 1 < p->len && p->s[p->i + 1] == '(') {
			if (p->i + 2 < p->len && p->s[p->i + 2] == '(') {
				if ((error = lex_arith(p)) < 0)
					return error;
				continue;
			}
			p->i += 2;
			if ((error = nested_list(p, ')')) < 0)
				return error;
			continue;
		}
		if (c == '$' && p->i + 1 < p->len && p->s[p->i + 1] == '{') {
			nest++;
			p->i += 2;
			continue;
		}
		if (c == '`') {
			docket_buf *tmp = &p->a->scratch;

			docket_buf_clear(tmp);
			if ((error = lex_backtick(p, tmp)) < 0)
				return error;
			continue;
		}
		if (c == '}') {
			p->i++;
			if (nest-- == 0)
				return 0;
			continue;
		}
		p->i++;
	}
	return incomplete(p->a, "syntax");
}

/* $...: p->i at '$'. The raw text goes to b; *lf gets LEX_DYNAMIC unless a literal '$'. */
static int lex_dollar(sh_state *p, docket_buf *b, unsigned *lf, bool in_dq)
{
	size_t start = p->i;
	char n = p->i + 1 < p->len ? p->s[p->i + 1] : '\0';
	int error;

	if (n == '(') {
		if (p->i + 2 < p->len && p->s[p->i + 2] == '(')
			error = lex_arith(p);
		else {
			p->i += 2;
			error = nested_list(p, ')');
		}
	} else if (n == '{') {
		error = lex_brace_param(p);
	} else if (is_ident_start(n)) {
		p->i++;
		while (p->i < p->len && is_ident(p->s[p->i]))
			p->i++;
		error = 0;
	} else if ((n >= '0' && n <= '9') || (n && strchr("@*#?-$!", n))) {
		p->i += 2;
		error = 0;
	} else if (!in_dq && (n == '\'' || n == '"')) {
		return 1; /* $'...' and $"...": the caller decodes them */
	} else {
		p->i++;
		return docket_buf_putc(b, '$');
	}
	if (error < 0)
		return error;
	*lf |= LEX_DYNAMIC;
	return docket_buf_put(b, p->s + start, p->i - start);
}

/* The inside of "..." (p->i past the quote) up to `close` ('\0': the end of input). */
static int lex_dq(sh_state *p, docket_buf *b, unsigned *lf, char close)
{
	int error;

	while (p->i < p->len && !stop(p)) {
		char c = p->s[p->i];

		if (close && c == close) {
			p->i++;
			return 0;
		}
		if (c == '\\' && p->i + 1 < p->len && strchr("$`\"\\\n", p->s[p->i + 1])) {
			if (p->s[p->i + 1] != '\n' && (error = docket_buf_putc(b, p->s[p->i + 1])) < 0)
				return error;
			p->i += 2;
			continue;
		}
		if (c == '$') {
			if ((error = lex_dollar(p, b, lf, true)) < 0)
				return error;
			continue;
		}
		if (c == '`') {
			*lf |= LEX_DYNAMIC;
			if ((error = lex_backtick(p, b)) < 0)
				return error;
			continue;
		}
		if ((error = docket_buf_putc(b, c)) < 0)
			return error;
		p->i++;
	}
	if (close)
		return incomplete(p->a, "syntax");
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* $'...' (p->i at '$'): ANSI-C escapes decoded; \u, \U and \c make it dynamic. */
static int lex_ansi_c(sh_state *p, docket_buf *b, unsigned *lf)
{
	size_t j = p->i + 2;
	int error;

	while (j < p->len && p->s[j] != '\'') {
		char c = p->s[j], out;

		if (c != '\\' || j + 1 >= p->len) {
			if ((error = docket_buf_putc(b, c)) < 0)
				return error;
			j++;
			continue;
		}
		c = p->s[++j];
		j++;
		switch (c) {
		case 'n': out = '\n'; break;
		case 't': out = '\t'; break;
		case 'r': out = '\r'; break;
		case 'a': out = '\a'; break;
		case 'b': out = '\b'; break;
		case 'e': case 'E': out = 27; break;
		case 'f': out = '\f'; break;
		case 'v': out = '\v'; break;
		case 'x': {
			int v = 0, k = 0, h;

			while (k < 2 && j < p->len && (h = hexval(p->s[j])) >= 0)
				v = v * 16 + h, j++, k++;
			if (k == 0) {
				*lf |= LEX_DYNAMIC;
				continue;
			}
			out = (char)v;
			break;
		}
		case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
			int v = c - '0', k = 1;

			while (k < 3 && j < p->len && p->s[j] >= '0' && p->s[j] <= '7')
				v = v * 8 + (p->s[j] - '0'), j++, k++;
			out = (char)(v & 0xFF);
			break;
		}
		case 'u': case 'U': case 'c':
			*lf |= LEX_DYNAMIC;
			continue;
		default:
			out = c;
			break;
		}
		if (out == '\0') {
			*lf |= LEX_DYNAMIC;  /* bash cuts the word at a NUL */
			continue;
		}
		if ((error = docket_buf_putc(b, out)) < 0)
			return error;
	}
	if (j >= p->len)
		return incomplete(p->a, "syntax");
	p->i = j + 1;
	return 0;
}

/* NAME=, NAME+=, NAME[...]= at the start of the unquoted part. */
static bool is_assignment(const char *w, size_t unquoted)
{
	size_t i = 0;

	if (unquoted == 0 || !is_ident_start(w[0]))
		return false;
	while (i < unquoted && is_ident(w[i]))
		i++;
	if (i < unquoted && w[i] == '[') {
		while (i < unquoted && w[i] != ']')
			i++;
		if (i >= unquoted)
			return false;
		i++;
	}
	if (i < unquoted && w[i] == '+')
		i++;
	return i < unquoted && w[i] == '=';
}

/*
 * Lex one word at p->i into a new word entry (*out). *lf gets LEX_* flags.
 * Returns 1 (no word) when the analysis became incomplete.
 */
static int lex_word(sh_state *p, size_t *out, unsigned *lf)
{
	docket_buf *b = &p->a->wb[p->depth];
	size_t unquoted = SIZE_MAX;   /* length of b before the first quoted or dynamic part */
	bool brace = false, list = false;
	int error;

	docket_buf_clear(b);
	*lf = 0;
	while (p->i < p->len && !stop(p)) {
		char c = p->s[p->i];

		if ((c == '<' || c == '>') && b->len == 0 && p->i + 1 < p->len && p->s[p->i + 1] == '(') {
			/* process substitution */
			p->i += 2;
			if ((error = nested_list(p, ')')) < 0)
				return error;
			*lf |= LEX_DYNAMIC;
			if ((error = docket_buf_puts(b, "/dev/fd/63")) < 0)
				return error;
			continue;
		}
		if (c == '(' && b->len > 0 && strchr("@!+*?", b->ptr[b->len - 1]) && unquoted == SIZE_MAX)
			return incomplete(p->a, "extglob"), 1;
		if (c == '(' && b->len > 0 && b->ptr[b->len - 1] == '=' && is_assignment(b->ptr, b->len)) {
			p->i++;
			*lf |= LEX_ARRAY;
			break;
		}
		if (is_meta(c))
			break;
		if ((c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`') && unquoted == SIZE_MAX)
			unquoted = b->len;
		switch (c) {
		case '\'': {
			const char *q = memchr(p->s + p->i + 1, '\'', p->len - p->i - 1);

			if (!q)
				return incomplete(p->a, "syntax"), 1;
			if ((error = docket_buf_put(b, p->s + p->i + 1, (size_t)(q - p->s) - p->i - 1)) < 0)
				return error;
			p->i = (size_t)(q - p->s) + 1;
			*lf |= LEX_QUOTED;
			continue;
		}
		case '"':
			p->i++;
			*lf |= LEX_QUOTED;
			if ((error = lex_dq(p, b, lf, '"')) < 0)
				return error;
			continue;
		case '\\':
			if (p->i + 1 >= p->len)
				return incomplete(p->a, "syntax"), 1;
			if (p->s[p->i + 1] != '\n' && (error = docket_buf_putc(b, p->s[p->i + 1])) < 0)
				return error;
			*lf |= LEX_QUOTED;
			p->i += 2;
			continue;
		case '$':
			if ((error = lex_dollar(p, b, lf, false)) < 0)
				return error;
			if (error == 1) {
				*lf |= LEX_QUOTED;
				if (p->s[p->i + 1] == '\'') {
					if ((error = lex_ansi_c(p, b, lf)) < 0)
						return error;
				} else {
					p->i += 2;
					if ((error = lex_dq(p, b, lf, '"')) < 0)
						return error;
				}
			}
			continue;
		case '`':
			*lf |= LEX_DYNAMIC;
			if ((error = lex_backtick(p, b)) < 0)
				return error;
			continue;
		case '*': case '?': case '[':
			*lf |= LEX_DYNAMIC;
			break;
		case '{':
			brace = true;
			break;
		case ',':
			list = true;
			break;
		case '.':
			if (p->i + 1 < p->len && p->s[p->i + 1] == '.')
				list = true;
			break;
		case '~':
			if (b->len > 0 && b->ptr[b->len - 1] == '=')
				break;
			if (b->len == 0 && p->i + 1 < p->len && !is_meta(p->s[p->i + 1]) && p->s[p->i + 1] != '/')
				*lf |= LEX_DYNAMIC;   /* ~user */
			break;
		default:
			break;
		}
		if ((error = docket_buf_putc(b, c)) < 0)
			return error;
		p->i++;
	}
	if (stop(p))
		return 1;
	if (brace && list)
		*lf |= LEX_DYNAMIC;
	if (is_assignment(b->ptr ? b->ptr : "", unquoted == SIZE_MAX ? b->len : unquoted))
		*lf |= LEX_ASSIGN;
	return push_word(p->a, b->ptr ? b->ptr : "", b->len,
			 ((*lf & LEX_DYNAMIC) ? SHW_DYNAMIC : 0) | ((*lf & LEX_ASSIGN) ? SHW_ASSIGN : 0), out);
}

/* ---- commands ---- */

static bool word_is(const sh_analysis *a, size_t w, const char *s)
{
	return strcmp(sh_word(a, w), s) == 0;
}

static bool is_opt_with_arg(const sh_look *l, const char *w)
{
	for (const char *const *o = l->optarg; o && *o; o++)
		if (strcmp(w, *o) == 0)
			return true;
	return false;
}

/*
 * The index (in w) of the command a wrapper runs: past its options (and
 * their arguments), NAME=VALUE words and `positional` operands; n: none.
 */
static size_t wrapper_skip(const sh_analysis *a, const sh_look *l, const size_t *w, size_t n)
{
	size_t i = 1, pos = 0;

	while (i < n) {
		const char *s = sh_word(a, w[i]);

		if (strcmp(s, "--") == 0) {
			i++;
			break;
		}
		if (s[0] == '-' && s[1]) {
			i += is_opt_with_arg(l, s) ? 2 : 1;
			continue;
		}
		if (strchr(s, '=') && is_assignment(s, strlen(s)) &&
		    (strcmp(l->name, "env") == 0 || strcmp(l->name, "sudo") == 0 || strcmp(l->name, "doas") == 0)) {
			i++;
			continue;
		}
		if (pos < l->positional) {
			pos++;
			i++;
			continue;
		}
		break;
	}
	while (i < n && pos < l->positional) {
		pos++;
		i++;
	}
	return i < n ? i : n;
}

static int push_cmd(sh_state *p, const size_t *w, size_t n, const size_t *rd, size_t nrd, unsigned flags,
		    size_t *out)
{
	sh_analysis *a = p->a;
	sh_cmd *c;
	int error;

	if (a->ncmds >= SH_MAX_CMDS)
		return incomplete(a, "cap"), 1;
	if ((error = grow((void **)&a->cmds, &a->capcmds, a->ncmds + 1, sizeof(*a->cmds))) < 0 ||
	    (error = grow((void **)&a->redirs, &a->capredirs, a->nredirs + nrd / 2, sizeof(*a->redirs))) < 0)
		return error;
	c = &a->cmds[a->ncmds];
	memset(c, 0, sizeof(*c));
	c->word0 = a->nwords;
	for (size_t i = 0; i < n; i++)
		if ((error = dup_word(a, w[i])) != 0)
			return error;
	c = &a->cmds[a->ncmds];
	c->nwords = n;
	c->redir0 = a->nredirs;
	for (size_t i = 0; i + 1 < nrd; i += 2) {
		a->redirs[a->nredirs].kind = (int)rd[i];
		a->redirs[a->nredirs].word = rd[i + 1];
		a->nredirs++;
	}
	c->nredir = nrd / 2;
	c->flags = flags | (a->cwd_unknown ? SHC_CWD_UNKNOWN : 0);
	c->depth = p->depth;
	c->cwd = a->cwd_off;
	*out = a->ncmds++;
	return 0;
}

/* cd/pushd: follow a literal target; anything else makes the cwd unknown. */
static int follow_cd(sh_analysis *a, const size_t *w, size_t n)
{
	const char *cur = a->cwd_off == (size_t)-1 ? a->cwd0 : a->text.ptr + a->cwd_off;
	size_t i = 1;
	int error;

	while (i < n && sh_word(a, w[i])[0] == '-' && sh_word(a, w[i])[1] && !word_is(a, w[i], "-"))
		i++;
	if (i >= n) {
		if (!a->home)
			return a->cwd_unknown = true, 0;
		error = path_normalize(&a->scratch, a->home, cur, a->home);
	} else if ((a->word_flags[w[i]] & SHW_DYNAMIC) || word_is(a, w[i], "-") || !cur) {
		return a->cwd_unknown = true, 0;
	} else {
		error = path_normalize(&a->scratch, sh_word(a, w[i]), cur, a->home);
	}
	if (error < 0) {
		docket_error_clear();
		if (error == DOCKET_ENOMEM)
			return error;
		a->cwd_unknown = true;
		return 0;
	}
	a->cwd_off = a->text.len;
	if ((error = docket_buf_put(&a->text, a->scratch.ptr, a->scratch.len)) < 0 ||
	    (error = docket_buf_putc(&a->text, '\0')) < 0)
		return error;
	return 0;
}

/* The words w[from..n) joined by spaces, as a nested script one level deeper. */
static int nested_words(sh_state *p, const size_t *w, size_t from, size_t n, size_t cmd)
{
	sh_analysis *a = p->a;
	docket_buf *j;
	int error;

	if (p->depth + 1 > SH_MAX_DEPTH)
		return incomplete(a, "depth");
	j = &a->src[p->depth + 1];
	docket_buf_clear(j);
	for (size_t i = from; i < n; i++) {
		if (a->word_flags[w[i]] & SHW_DYNAMIC)
			a->cmds[cmd].flags |= SHC_DYNAMIC_SCRIPT;
		if ((i > from && (error = docket_buf_putc(j, ' ')) < 0) ||
		    (error = docket_buf_puts(j, sh_word(a, w[i]))) < 0)
			return error;
	}
	a->cmds[cmd].flags |= SHC_NESTED;
	return analyze_nested(a, j->ptr ? j->ptr : "", j->len, p->depth + 1, false);
}

static int emit(sh_state *p, const size_t *w, size_t n, const size_t *rd, size_t nrd, unsigned flags, size_t *last);

/* A shell: -c SCRIPT (also in -lc, -ec ...), a script file, or stdin. */
static int emit_shell(sh_state *p, const sh_look *l, const size_t *w, size_t n, size_t cmd)
{
	sh_analysis *a = p->a;
	bool c_opt = false;
	size_t i = 1;

	while (i < n) {
		const char *s = sh_word(a, w[i]);

		if (strcmp(s, "--") == 0 || strcmp(s, "-") == 0) {
			i++;
			break;
		}
		if ((s[0] == '-' || s[0] == '+') && s[1]) {
			if (is_opt_with_arg(l, s)) {
				i += 2;
				continue;
			}
			if (s[1] != '-' && strchr(s + 1, 'c'))
				c_opt = true;
			if (s[0] == '-' && s[1] == '-' && strcmp(s, "--command") == 0)
				c_opt = true;
			i++;
			continue;
		}
		break;
	}
	if (c_opt) {
		if (i >= n)
			return incomplete(a, "syntax");
		return nested_words(p, w, i, i + 1, cmd);
	}
	a->cmds[cmd].lang = l->lang;
	a->cmds[cmd].flags |= i < n ? SHC_SCRIPT_FILE : SHC_STDIN_SCRIPT;
	return 0;
}

/* An interpreter: CODE after its code option, a script file, or stdin. */
static int emit_interp(sh_state *p, const sh_look *l, const size_t *w, size_t n, size_t cmd)
{
	sh_analysis *a = p->a;
	size_t i = 1;

	a->cmds[cmd].lang = l->lang;
	if (l->code_opt && !l->code_opt[0]) {
		/* awk: the first operand is the program */
		a->cmds[cmd].flags |= SHC_CODE;
		return 0;
	}
	while (i < n) {
		const char *s = sh_word(a, w[i]);

		if (l->code_opt && (strcmp(s, l->code_opt) == 0 ||
				    (strcmp(l->code_opt, "-e") == 0 &&
				     (strcmp(s, "-E") == 0 || strcmp(s, "--eval") == 0 || strcmp(s, "-p") == 0 ||
				      strcmp(s, "--print") == 0)) ||
				    (strcmp(l->code_opt, "-c") == 0 && strcmp(s, "-Command") == 0))) {
			a->cmds[cmd].flags |= SHC_CODE;
			return 0;
		}
		if (s[0] == '-' && s[1] && strcmp(s, "--") != 0) {
			/* python -m MODULE, perl -Mx, combined flags ending in the code option (-ic, -ne) */
			if (l->code_opt && s[1] != '-' && strchr(s + 1, l->code_opt[1])) {
				a->cmds[cmd].flags |= SHC_CODE;
				return 0;
			}
			if (strcmp(s, "-m") == 0) {
				a->cmds[cmd].flags |= SHC_CODE;
				return 0;
			}
			i += is_opt_with_arg(l, s) ? 2 : 1;
			continue;
		}
		break;
	}
	a->cmds[cmd].flags |= i < n ? SHC_SCRIPT_FILE : SHC_STDIN_SCRIPT;
	return 0;
}

/* find -exec ... ;, watch CMD, su -c CMD, flock ... -c CMD, trap CMD, alias n=CMD. */
static int emit_exec_args(sh_state *p, const sh_look *l, const size_t *w, size_t n, size_t cmd)
{
	sh_analysis *a = p->a;
	size_t last, i;
	int error;

	if (strcmp(l->name, "find") == 0) {
		for (i = 1; i < n; i++) {
			const char *s = sh_word(a, w[i]);
			size_t e;

			if (strcmp(s, "-exec") && strcmp(s, "-execdir") && strcmp(s, "-ok") && strcmp(s, "-okdir"))
				continue;
			for (e = i + 1; e < n && !word_is(a, w[e], ";") && !word_is(a, w[e], "+"); e++)
				if (strstr(sh_word(a, w[e]), "{}"))
					a->word_flags[w[e]] |= SHW_DYNAMIC;   /* a found file's name */
			if (e > i + 1 && (error = emit(p, w + i + 1, e - i - 1, NULL, 0, 0, &last)) != 0)
				return error;
			i = e;
		}
		return 0;
	}
	if (strcmp(l->name, "alias") == 0) {
		for (i = 1; i < n && !stop(p); i++) {
			const char *s = sh_word(a, w[i]), *eq = strchr(s, '=');

			if (eq && (error = analyze_nested(a, eq + 1, strlen(eq + 1), p->depth + 1, true)) < 0)
				return error;
		}
		a->cmds[cmd].flags |= SHC_NESTED;
		return 0;
	}
	if (strcmp(l->name, "trap") == 0) {
		i = 1;
		while (i < n && sh_word(a, w[i])[0] == '-')
			i++;
		return i < n ? nested_words(p, w, i, i + 1, cmd) : 0;
	}
	if (strcmp(l->name, "flock") == 0) {
		/* flock [options] FILE -c CMD | flock [options] FILE CMD ARGS */
		size_t k = wrapper_skip(a, l, w, n);

		if (k >= n)
			return 0;
		if (word_is(a, w[k], "-c") || word_is(a, w[k], "--command"))
			return k + 1 < n ? nested_words(p, w, k + 1, k + 2, cmd) : incomplete(a, "syntax");
		a->cmds[cmd].flags |= SHC_WRAPPER;
		return emit(p, w + k, n - k, NULL, 0, 0, &last);
	}
	/* su/runuser/script: -c CMD anywhere; watch: the rest joined */
	for (i = 1; i < n; i++) {
		const char *s = sh_word(a, w[i]);

		if (l->code_opt && (strcmp(s, l->code_opt) == 0 || strcmp(s, "--command") == 0)) {
			if (i + 1 >= n)
				return incomplete(a, "syntax");
			return nested_words(p, w, i + 1, i + 2, cmd);
		}
	}
	if (strcmp(l->name, "watch") == 0) {
		size_t k = wrapper_skip(a, l, w, n);

		return k < n ? nested_words(p, w, k, n, cmd) : 0;
	}
	return 0;
}

/* export/declare/typeset/local/readonly NAME=VALUE: as an assignment (GIT_PAGER=...). */
static int via_declaration(sh_state *p, const size_t *w, size_t n, size_t cmd)
{
	static const char *const decl[] = { "export", "declare", "typeset", "local", "readonly", NULL };
	sh_analysis *a = p->a;
	bool is_decl = false;
	int error;

	for (size_t i = 0; decl[i] && !is_decl; i++)
		is_decl = word_is(a, w[0], decl[i]);
	for (size_t i = 1; is_decl && i < n && !stop(p); i++)
		if (sh_word(a, w[i])[0] != '-' && (error = sh_via_assignment(a, p->depth, w[i], cmd)) < 0)
			return error;
	return 0;
}

/*
 * Record the command w[0..n) and, through the look-through table, every
 * command it runs. *last gets the innermost command's index (the one that
 * gets stdin), (size_t)-1 when none was recorded.
 */
static int emit(sh_state *p, const size_t *w, size_t n, const size_t *rd, size_t nrd, unsigned flags, size_t *last)
{
	sh_analysis *a = p->a;
	int error;

	*last = (size_t)-1;
	while (n > 0 && !stop(p)) {
		const sh_look *l;
		size_t cmd, k;

		/* leading NAME=VALUE words are not the command (GIT_PAGER=...: see shvia.c) */
		for (k = 0; k < n && (a->word_flags[w[k]] & SHW_ASSIGN); k++)
			;
		if (k == n) {
			for (size_t i = 0; i < n && !stop(p); i++)
				if ((error = sh_via_assignment(a, p->depth, w[i], (size_t)-1)) < 0)
					return error;
			break;
		}
		if ((error = push_cmd(p, w + k, n - k, rd, nrd, flags, &cmd)) != 0)
			return error < 0 ? error : 0;
		for (size_t i = 0; i < k && !stop(p); i++)
			if ((error = sh_via_assignment(a, p->depth, w[i], cmd)) < 0)
				return error;
		w += k;
		n -= k;
		*last = cmd;
		rd = NULL;
		nrd = 0;
		if (a->word_flags[w[0]] & SHW_DYNAMIC) {
			a->cmds[cmd].flags |= SHC_DYNAMIC_NAME;
			break;
		}
		if (word_is(a, w[0], "cd") || word_is(a, w[0], "pushd")) {
			if ((error = follow_cd(a, w, n)) < 0)
				return error;
			break;
		}
		if ((error = sh_via_command(a, p->depth, w, n, cmd)) < 0 ||
		    (error = via_declaration(p, w, n, cmd)) < 0)
			return error;
		if (stop(p))
			break;
		if (!(l = sh_lookup(sh_word(a, w[0]))))
			break;
		switch (l->kind) {
		case SHL_WRAPPER:
			if (strcmp(l->name, "env") == 0) {
				/* env -S STRING: STRING is split into words: analyse it as a script */
				for (size_t i = 1; i < n; i++) {
					const char *s = sh_word(a, w[i]);

					if (strcmp(s, "-S") == 0 || strcmp(s, "--split-string") == 0)
						return nested_words(p, w, i + 1, n, cmd);
					if (strncmp(s, "-S", 2) == 0 || strncmp(s, "--split-string=", 15) == 0) {
						a->cmds[cmd].flags |= SHC_DYNAMIC_SCRIPT;
						return 0;
					}
					if (s[0] != '-')
						break;
				}
			}
			k = wrapper_skip(a, l, w, n);
			for (size_t i = 1; i < k && i < n; i++)
				if (strchr(sh_word(a, w[i]), '=') && sh_word(a, w[i])[0] != '-' &&
				    (error = sh_via_assignment(a, p->depth, w[i], cmd)) < 0)
					return error;
			if (k >= n || stop(p))
				return 0;
			a->cmds[cmd].flags |= SHC_WRAPPER;
			w += k;
			n -= k;
			continue;
		case SHL_SHELL:
			return emit_shell(p, l, w, n, cmd);
		case SHL_EVAL:
			return n > 1 ? nested_words(p, w, 1, n, cmd) : 0;
		case SHL_SOURCE:
			a->cmds[cmd].lang = l->lang;
			a->cmds[cmd].flags |= SHC_SCRIPT_FILE;
			return 0;
		case SHL_INTERP:
			return emit_interp(p, l, w, n, cmd);
		case SHL_EXEC_ARGS:
			return emit_exec_args(p, l, w, n, cmd);
		default:
			return 0;
		}
	}
	return 0;
}

static bool reserved(const char *w)
{
	static const char *const words[] = {
		"if", "then", "else", "elif", "fi", "while", "until", "do", "done", "{", "}", "!", "time",
		"coproc", "in", "esac", NULL
	};

	if (!strchr("iteofwud{}!cn", w[0]))
		return false;   /* no reserved word starts otherwise */
	for (size_t i = 0; words[i]; i++)
		if (strcmp(w, words[i]) == 0)
			return true;
	return false;
}

/* A redirection operator at p->i (after optional fd digits or {name}); 0: none. */
static int redir_op(sh_state *p, size_t *oplen)
{
	const char *s = p->s + p->i;
	size_t r = p->len - p->i, d = 0;

	while (d < r && s[d] >= '0' && s[d] <= '9')
		d++;
	if (d == 0 && r > 1 && s[0] == '{') {
		size_t k = 1;

		while (k < r && is_ident(s[k]))
			k++;
		if (k > 1 && k < r && s[k] == '}' && k + 1 < r && (s[k + 1] == '<' || s[k + 1] == '>'))
			d = k + 1;
	}
	if (d >= r)
		return 0;
	s += d;
	r -= d;
	*oplen = d;
	if (s[0] == '<') {
		if (r > 2 && s[1] == '<' && s[2] == '<')
			return *oplen += 3, SHR_HERESTRING;
		if (r > 1 && s[1] == '<')
			return *oplen += (r > 2 && s[2] == '-') ? 3 : 2, SHR_HEREDOC;
		if (r > 1 && s[1] == '&')
			return *oplen += 2, SHR_DUP;
		if (r > 1 && s[1] == '>')
			return *oplen += 2, SHR_WRITE;
		return *oplen += 1, SHR_READ;
	}
	if (s[0] == '>') {
		if (r > 1 && s[1] == '>')
			return *oplen += 2, SHR_APPEND;
		if (r > 1 && (s[1] == '&' || s[1] == '|'))
			return *oplen += 2, s[1] == '&' ? SHR_DUP : SHR_WRITE;
		return *oplen += 1, SHR_WRITE;
	}
	if (d == 0 && s[0] == '&' && r > 1 && s[1] == '>')
		return *oplen = (r > 2 && s[2] == '>') ? 3 : 2, *oplen == 3 ? SHR_APPEND : SHR_WRITE;
	return 0;
}

/* A heredoc's delimiter word at p->i: quoted or not, into the pending list. */
static int heredoc_start(sh_state *p, bool strip, size_t *redir_word)
{
	hd_pending *h;
	size_t w;
	unsigned lf;
	int error;

	while (p->i < p->len && is_blank(p->s[p->i]))
		p->i++;
	if (p->nhd >= HD_MAX)
		return incomplete(p->a, "cap"), 1;
	if ((error = lex_word(p, &w, &lf)) != 0)
		return error;
	h = &p->hd[p->nhd];
	h->dlen = strlen(sh_word(p->a, w));
	if (h->dlen == 0 || h->dlen >= sizeof(h->delim) || (lf & LEX_DYNAMIC))
		return incomplete(p->a, "heredoc"), 1;
	memcpy(h->delim, sh_word(p->a, w), h->dlen + 1);
	h->strip = strip;
	h->quoted = (lf & LEX_QUOTED) != 0;
	h->cmd = (size_t)-1;
	h->redir = (size_t)-1;
	p->nhd++;
	*redir_word = w;
	return 0;
}

/* Read the bodies of the pending heredocs (p->i just past a newline). */
static int heredoc_bodies(sh_state *p)
{
	sh_analysis *a = p->a;
	int error;

	for (size_t k = 0; k < p->nhd && !stop(p); k++) {
		hd_pending *h = &p->hd[k];
		size_t body = p->i, body_end;
		bool found = false;
		size_t w;

		while (p->i < p->len) {
			size_t ls = p->i, le;

			while (p->i < p->len && p->s[p->i] != '\n')
				p->i++;
			le = p->i;
			if (p->i < p->len)
				p->i++;
			if (h->strip)
				while (ls < le && p->s[ls] == '\t')
					ls++;
			if (le - ls == h->dlen && memcmp(p->s + ls, h->delim, h->dlen) == 0) {
				body_end = ls;
				found = true;
				break;
			}
		}
		if (!found)
			return incomplete(a, "heredoc");
		if ((error = push_word(a, p->s + body, body_end - body, h->quoted ? 0 : SHW_DYNAMIC, &w)) != 0)
			return error < 0 ? error : 0;
		if (h->redir != (size_t)-1)
			a->redirs[h->redir].word = w;
		if (h->cmd != (size_t)-1 && (a->cmds[h->cmd].flags & SHC_STDIN_SCRIPT) && a->cmds[h->cmd].lang &&
		    strcmp(a->cmds[h->cmd].lang, "shell") == 0) {
			/* a shell reads its script from the heredoc */
			a->cmds[h->cmd].flags &= ~(unsigned)SHC_STDIN_SCRIPT;
			a->cmds[h->cmd].flags |= SHC_NESTED;
			if ((error = analyze_nested(a, p->s + body, body_end - body, p->depth + 1, false)) < 0)
				return error;
		} else if (!h->quoted) {
			/* expansions in the body run: $(...) and `...` */
			sh_state sub = { .a = a, .s = p->s + body, .len = body_end - body, .depth = p->depth };
			docket_buf *tmp = &a->wb[p->depth];

			docket_buf_clear(tmp);
			unsigned lf = 0;

			if ((error = lex_dq(&sub, tmp, &lf, '\0')) < 0)
				return error;
		}
	}
	p->nhd = 0;
	return 0;
}

/*
 * One simple command (or reserved word, function definition ...) at p->i.
 * Words go on the stack, redirections as (kind, word) pairs after them.
 */
static int parse_command(sh_state *p, char term)
{
	sh_analysis *a = p->a;
	sh_wordv *cw = &a->cmdw[p->depth];
	size_t nw = 0, last;
	size_t hd_first = p->nhd;
	bool data = false, at_cmd = true, time_opt = false, funcname = false;
	unsigned flags = p->pipe_in ? SHC_PIPE_IN : 0;
	int error;

	/* redirections are collected separately: (kind, word) pairs */
	size_t rd[64];
	size_t nrd = 0;

	p->pipe_in = false;
	cw->n = 0;
	while (p->i < p->len && !stop(p)) {
		char c = p->s[p->i];
		size_t oplen = 0, w;
		unsigned lf;
		int kind;
		bool procsub;

		if (is_blank(c)) {
			p->i++;
			continue;
		}
		if (c == '\\' && p->i + 1 < p->len && p->s[p->i + 1] == '\n') {
			p->i += 2;
			continue;
		}
		if (c == '#' ) {
			while (p->i < p->len && p->s[p->i] != '\n')
				p->i++;
			break;
		}
		procsub = (c == '<' || c == '>') && p->i + 1 < p->len && p->s[p->i + 1] == '(';
		if (procsub) {
			/* a process substitution: a word (below) */
		} else if ((kind = redir_op(p, &oplen)) != 0) {
			bool strip = kind == SHR_HEREDOC && p->s[p->i + oplen - 1] == '-';

			p->i += oplen;
			while (p->i < p->len && is_blank(p->s[p->i]))
				p->i++;
			if (nrd + 2 > sizeof(rd) / sizeof(rd[0]))
				return incomplete(a, "cap");
			if (kind == SHR_HEREDOC) {
				if ((error = heredoc_start(p, strip, &w)) != 0)
					return error < 0 ? error : 0;
			} else if ((error = lex_word(p, &w, &lf)) != 0) {
				return error < 0 ? error : 0;
			}
			rd[nrd++] = (size_t)kind;
			rd[nrd++] = w;
			continue;
		}
		if (c == '(' ) {
			if (nw == 1 && !data) {
				/* NAME () body: a function definition */
				size_t j = p->i + 1;

				while (j < p->len && is_blank(p->s[j]))
					j++;
				if (j < p->len && p->s[j] == ')') {
					p->i = j + 1;
					return 0;
				}
			}
			if (nw == 0 && at_cmd && !data) {
				if (p->i + 1 < p->len && p->s[p->i + 1] == '(')
					return incomplete(a, "arithmetic");
				p->i++;
				if ((error = nested_list(p, ')')) < 0)
					return error;
				continue;
			}
			return incomplete(a, "syntax");
		}
		if ((is_meta(c) && !procsub) || (term && c == term))
			break;
		if ((error = lex_word(p, &w, &lf)) != 0)
			return error < 0 ? error : 0;
		if (lf & LEX_ARRAY) {
			/* NAME=( words ): data; substitutions inside still run */
			while (p->i < p->len && !stop(p) && p->s[p->i] != ')') {
				size_t x;

				if (is_blank(p->s[p->i]) || p->s[p->i] == '\n') {
					p->i++;
					continue;
				}
				if (is_meta(p->s[p->i]))
					return incomplete(a, "syntax");
				if ((error = lex_word(p, &x, &lf)) != 0)
					return error < 0 ? error : 0;
			}
			if (p->i >= p->len)
				return incomplete(a, "syntax");
			p->i++;
			continue;
		}
		if (funcname) {
			funcname = false;
			continue;
		}
		if (data) {
			if (word_is(a, w, "]]"))
				data = false;
			continue;
		}
		if (at_cmd && nw == 0) {
			const char *s = sh_word(a, w);

			if (time_opt && word_is(a, w, "-p")) {
				time_opt = false;
				continue;
			}
			if (!(lf & LEX_QUOTED) && (!(lf & LEX_DYNAMIC) || strcmp(s, "[[") == 0)) {
				if (strcmp(s, "case") == 0 || strcmp(s, "select") == 0 || strcmp(s, "((") == 0)
					return incomplete(a, "case");
				if (strcmp(s, "for") == 0 || strcmp(s, "[[") == 0) {
					data = true;
					continue;
				}
				if (strcmp(s, "function") == 0) {
					funcname = true;
					continue;
				}
				if (reserved(s)) {
					time_opt = strcmp(s, "time") == 0;
					continue;
				}
			}
		}
		if ((error = wv_push(cw, w)) < 0)
			return error;
		nw++;
	}
	if (stop(p))
		return 0;
	error = emit(p, cw->v, nw, rd, nrd, flags, &last);
	if (error < 0)
		return error;
	/* heredocs and here-strings feed the innermost command */
	if (last != (size_t)-1) {
		sh_cmd *cm = &a->cmds[last];
		size_t hk = hd_first;

		for (size_t r = 0; r < cm->nredir; r++) {
			sh_redir *rr = &a->redirs[cm->redir0 + r];

			if (rr->kind == SHR_HEREDOC && hk < p->nhd) {
				p->hd[hk].cmd = last;
				p->hd[hk].redir = cm->redir0 + r;
				hk++;
			} else if (rr->kind == SHR_HERESTRING && (cm->flags & SHC_STDIN_SCRIPT) && cm->lang &&
				   strcmp(cm->lang, "shell") == 0) {
				const char *v = sh_word(a, rr->word);

				cm->flags &= ~(unsigned)SHC_STDIN_SCRIPT;
				cm->flags |= SHC_NESTED;
				if (a->word_flags[rr->word] & SHW_DYNAMIC)
					cm->flags |= SHC_DYNAMIC_SCRIPT;
				if ((error = analyze_nested(a, v, strlen(v), p->depth + 1, true)) < 0)
					return error;
				cm = &a->cmds[last];
			}
		}
	} else if (nrd > 0) {
		/* redirections without a command still happen: keep them on an empty entry */
		size_t cmd;

		if ((error = push_cmd(p, NULL, 0, rd, nrd, flags, &cmd)) < 0)
			return error;
		for (size_t hk = hd_first, r = 0; r < nrd / 2 && hk < p->nhd; r++)
			if (rd[2 * r] == SHR_HEREDOC)
				p->hd[hk++].redir = a->cmds[cmd].redir0 + r;
	}
	return 0;
}

/* A list of commands up to `term` (')') or the end of input ('\0'). */
static int parse_list(sh_state *p, char term)
{
	int error;

	while (!stop(p)) {
		char c;

		if (p->i >= p->len)
			return term ? incomplete(p->a, "syntax") : 0;
		c = p->s[p->i];
		if (is_blank(c)) {
			p->i++;
			continue;
		}
		if (c == '\\' && p->i + 1 < p->len && p->s[p->i + 1] == '\n') {
			p->i += 2;
			continue;
		}
		if (term && c == term) {
			p->i++;
			return 0;
		}
		if (c == '\n') {
			p->i++;
			p->pipe_in = false;
			if (p->nhd && (error = heredoc_bodies(p)) < 0)
				return error;
			continue;
		}
		if (c == '#') {
			while (p->i < p->len && p->s[p->i] != '\n')
				p->i++;
			continue;
		}
		if (c == ';') {
			if (p->i + 1 < p->len && p->s[p->i + 1] == ';')
				return incomplete(p->a, "case");
			p->i++;
			p->pipe_in = false;
			continue;
		}
		if (c == '&' && !(p->i + 1 < p->len && p->s[p->i + 1] == '>')) {
			p->i += (p->i + 1 < p->len && p->s[p->i + 1] == '&') ? 2 : 1;
			p->pipe_in = false;
			continue;
		}
		if (c == '|') {
			bool pipe = !(p->i + 1 < p->len && p->s[p->i + 1] == '|');

			p->i += (p->i + 1 < p->len && (p->s[p->i + 1] == '|' || p->s[p->i + 1] == '&')) ? 2 : 1;
			p->pipe_in = pipe;
			continue;
		}
		if (c == ')')
			return incomplete(p->a, "syntax");
		{
			size_t before = p->i;

			if ((error = parse_command(p, term)) < 0)
				return error;
			if (p->i == before && !stop(p))
				return incomplete(p->a, "syntax");  /* never loop without progress */
		}
	}
	return 0;
}

/* ---- entry points ---- */

static int analyze_nested(sh_analysis *a, const char *script, size_t len, unsigned depth, bool copy)
{
	sh_state p;
	int error;

	if (depth > SH_MAX_DEPTH)
		return incomplete(a, "depth");
	if (copy) {
		docket_buf *s = &a->src[depth];

		docket_buf_clear(s);
		if ((error = docket_buf_put(s, script, len)) < 0)
			return error;
		script = s->ptr ? s->ptr : "";
	}
	memset(&p, 0, sizeof(p));
	p.a = a;
	p.s = script;
	p.len = len;
	p.depth = depth;
	if ((error = parse_list(&p, '\0')) < 0)
		return error;
	if (p.nhd && !stop(&p))
		return incomplete(a, "heredoc");
	return 0;
}

int sh_nested_script(sh_analysis *a, const char *s, size_t len, unsigned depth)
{
	return analyze_nested(a, s, len, depth + 1, true);
}

void sh_init(sh_analysis *a)
{
	memset(a, 0, sizeof(*a));
}

void sh_dispose(sh_analysis *a)
{
	docket_buf_dispose(&a->text);
	docket_buf_dispose(&a->scratch);
	for (size_t i = 0; i < SH_MAX_DEPTH + 2; i++) {
		docket_buf_dispose(&a->src[i]);
		docket_buf_dispose(&a->wb[i]);
	}
	docket_free(a->word_off);
	docket_free(a->word_flags);
	docket_free(a->cmds);
	docket_free(a->redirs);
	for (size_t i = 0; i < SH_MAX_DEPTH + 2; i++)
		docket_free(a->cmdw[i].v);
	sh_init(a);
}

static void reset(sh_analysis *a, const char *cwd, const char *home)
{
	docket_buf_clear(&a->text);
	a->nwords = 0;
	a->ncmds = 0;
	a->nredirs = 0;
	a->incomplete = false;
	a->why = NULL;
	a->home = home && home[0] == '/' ? home : NULL;
	a->cwd0 = cwd && cwd[0] == '/' ? cwd : NULL;
	a->cwd_off = (size_t)-1;
	a->cwd_unknown = false;
}

int sh_analyze(sh_analysis *a, const char *script, size_t len, const char *cwd, const char *home)
{
	reset(a, cwd, home);
	if (len > SH_MAX_SCRIPT)
		return incomplete(a, "cap");
	if (memchr(script, '\0', len))
		return incomplete(a, "syntax");
	return analyze_nested(a, script, len, 0, false);
}

int sh_analyze_argv(sh_analysis *a, const char *const *argv, size_t argc, const char *cwd, const char *home)
{
	sh_state p;
	sh_wordv *cw = &a->cmdw[0];
	size_t last;
	int error;

	reset(a, cwd, home);
	memset(&p, 0, sizeof(p));
	p.a = a;
	if (argc > SH_MAX_WORDS / 2)
		return incomplete(a, "cap");
	cw->n = 0;
	for (size_t i = 0; i < argc; i++) {
		size_t w;

		if ((error = push_word(a, argv[i], strlen(argv[i]), 0, &w)) != 0)
			return error < 0 ? error : 0;
		if ((error = wv_push(cw, w)) < 0)
			return error;
	}
	error = emit(&p, cw->v, argc, NULL, 0, 0, &last);
	return error < 0 ? error : 0;
}
