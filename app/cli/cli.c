/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.c: option parsing, errors and exit codes, colour, aligned tables, JSON
 * output, RFC 3339 times and call summaries shared by every command.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/rfc3339.h"
#include "util/json.h"

/* ---- option parsing ---------------------------------------------------- */

static void opt_placeholder(FILE *f, const cli_opt *o)
{
	if (o->type == CLI_OPT_ARG) {
		fprintf(f, (o->flags & CLI_OPT_REQUIRED) ? "%s" : "[%s]", o->name);
	} else if (o->type == CLI_OPT_ARGS) {
		fprintf(f, (o->flags & CLI_OPT_REQUIRED) ? "%s..." : "[%s...]", o->name);
	} else if (o->type == CLI_OPT_SWITCH) {
		fprintf(f, "[--%s]", o->name);
	} else {
		fprintf(f, "[--%s %s]", o->name, o->value_name ? o->value_name : "VALUE");
	}
}

void cli_usage_line(FILE *f, const cli_command *cmd, const cli_opt *opts)
{
	const cli_opt *o;

	fprintf(f, "usage: docket %s", cmd->name);
	for (o = opts; o && o->type != CLI_OPT_END; o++) {
		if (o->type == CLI_OPT_ARG || o->type == CLI_OPT_ARGS)
			continue;
		fputc(' ', f);
		opt_placeholder(f, o);
	}
	for (o = opts; o && o->type != CLI_OPT_END; o++) {
		if (o->type != CLI_OPT_ARG && o->type != CLI_OPT_ARGS)
			continue;
		fputc(' ', f);
		opt_placeholder(f, o);
	}
	fputc('\n', f);
}

static void print_help(const cli_command *cmd, const cli_opt *opts, const char *description)
{
	const cli_opt *o;
	size_t width = strlen("-h, --help");
	int have_args = 0;
	char left[128];

	cli_usage_line(stdout, cmd, opts);
	printf("\n%s\n", cmd->summary);
	if (description && *description)
		printf("\n%s%s", description, description[strlen(description) - 1] == '\n' ? "" : "\n");

	for (o = opts; o && o->type != CLI_OPT_END; o++) {
		size_t w;

		if (o->type == CLI_OPT_ARG || o->type == CLI_OPT_ARGS) {
			have_args = 1;
			w = strlen(o->name) + (o->type == CLI_OPT_ARGS ? 3 : 0);
		} else {
			w = 4 + 2 + strlen(o->name);
			if (o->type != CLI_OPT_SWITCH)
				w += 1 + strlen(o->value_name ? o->value_name : "VALUE");
		}
		if (w > width)
			width = w;
	}
	if (have_args) {
		printf("\narguments:\n");
		for (o = opts; o && o->type != CLI_OPT_END; o++) {
			if (o->type != CLI_OPT_ARG && o->type != CLI_OPT_ARGS)
				continue;
			snprintf(left, sizeof(left), "%s%s", o->name,
				 o->type == CLI_OPT_ARGS ? "..." : "");
			printf("  %-*s  %s\n", (int)width, left, o->help ? o->help : "");
		}
	}
	printf("\noptions:\n");
	for (o = opts; o && o->type != CLI_OPT_END; o++) {
		if (o->type == CLI_OPT_ARG || o->type == CLI_OPT_ARGS)
			continue;
		if (o->type == CLI_OPT_SWITCH)
			snprintf(left, sizeof(left), "%c%c%s--%s", o->alias ? '-' : ' ',
				 o->alias ? o->alias : ' ', o->alias ? ", " : "  ", o->name);
		else
			snprintf(left, sizeof(left), "%c%c%s--%s %s", o->alias ? '-' : ' ',
				 o->alias ? o->alias : ' ', o->alias ? ", " : "  ", o->name,
				 o->value_name ? o->value_name : "VALUE");
		printf("  %-*s  %s\n", (int)width, left, o->help ? o->help : "");
	}
	printf("  %-*s  %s\n", (int)width, "-h, --help", "show this help");
}

static int usage_error(const cli_command *cmd, const cli_opt *opts, const char *fmt, ...)
	DOCKET_PRINTF(3, 4);

static int usage_error(const cli_command *cmd, const cli_opt *opts, const char *fmt, ...)
{
	va_list ap;

	fputs("docket: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cli_usage_line(stderr, cmd, opts);
	fprintf(stderr, "Try 'docket %s --help' for more.\n", cmd->name);
	return CLI_PARSE_ERROR;
}

static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static int set_value(const cli_command *cmd, const cli_opt *opts, const cli_opt *o,
		     const char *value)
{
	if (o->type == CLI_OPT_U64) {
		if (parse_u64(value, o->value) < 0)
			return usage_error(cmd, opts, "--%s wants a non-negative integer, not '%s'",
					   o->name, value);
	} else if (o->type == CLI_OPT_LIST) {
		cli_list *l = o->value;

		if (l->n == CLI_LIST_MAX)
			return usage_error(cmd, opts, "--%s given more than %d times", o->name,
					   CLI_LIST_MAX);
		l->v[l->n++] = value;
	} else {
		*(const char **)o->value = value;
	}
	return CLI_PARSE_OK;
}

/* An option that takes a value (after it, or after '='). */
static int takes_value(const cli_opt *o)
{
	return o->type == CLI_OPT_STRING || o->type == CLI_OPT_U64 || o->type == CLI_OPT_LIST;
}

int cli_parse(const cli_command *cmd, const cli_opt *opts, const char *description,
	      int argc, char **argv)
{
	const cli_opt *o;
	int only_args = 0;
	int i;

	for (o = opts; o && o->type != CLI_OPT_END; o++)
		if (o->type == CLI_OPT_ARGS) {
			((cli_args *)o->value)->v = NULL;
			((cli_args *)o->value)->n = 0;
		} else if (o->type == CLI_OPT_LIST) {
			((cli_list *)o->value)->n = 0;
		}

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const cli_opt *match = NULL;

		if (!only_args && strcmp(a, "--") == 0) {
			only_args = 1;
			continue;
		}
		if (!only_args && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
			print_help(cmd, opts, description);
			return CLI_PARSE_HELP;
		}
		if (!only_args && a[0] == '-' && a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t nlen = eq ? (size_t)(eq - name) : strlen(name);

			for (o = opts; o && o->type != CLI_OPT_END; o++)
				if ((o->type == CLI_OPT_SWITCH || takes_value(o)) &&
				    strlen(o->name) == nlen && strncmp(o->name, name, nlen) == 0)
					match = o;
			if (!match)
				return usage_error(cmd, opts, "unknown option '%.*s'",
						   (int)(nlen + 2), a);
			if (match->type == CLI_OPT_SWITCH) {
				if (eq)
					return usage_error(cmd, opts, "--%s takes no value",
							   match->name);
				*(int *)match->value = 1;
				continue;
			}
			if (eq) {
				if (set_value(cmd, opts, match, eq + 1) != CLI_PARSE_OK)
					return CLI_PARSE_ERROR;
				continue;
			}
			if (i + 1 >= argc)
				return usage_error(cmd, opts, "--%s needs a value", match->name);
			if (set_value(cmd, opts, match, argv[++i]) != CLI_PARSE_OK)
				return CLI_PARSE_ERROR;
			continue;
		}
		if (!only_args && a[0] == '-' && a[1] != '\0') {
			for (o = opts; o && o->type != CLI_OPT_END; o++)
				if (o->alias && o->alias == a[1] &&
				    (o->type == CLI_OPT_SWITCH || takes_value(o)))
					match = o;
			if (!match)
				return usage_error(cmd, opts, "unknown option '-%c'", a[1]);
			if (match->type == CLI_OPT_SWITCH) {
				if (a[2] != '\0')
					return usage_error(cmd, opts, "unknown option '%s'", a);
				*(int *)match->value = 1;
				continue;
			}
			if (a[2] != '\0') {
				if (set_value(cmd, opts, match, a + 2) != CLI_PARSE_OK)
					return CLI_PARSE_ERROR;
				continue;
			}
			if (i + 1 >= argc)
				return usage_error(cmd, opts, "-%c needs a value", a[1]);
			if (set_value(cmd, opts, match, argv[++i]) != CLI_PARSE_OK)
				return CLI_PARSE_ERROR;
			continue;
		}

		/* A positional: the first unfilled ARG, else the ARGS collector. */
		for (o = opts; o && o->type != CLI_OPT_END; o++) {
			if (o->type == CLI_OPT_ARG && *(const char **)o->value == NULL) {
				*(const char **)o->value = a;
				match = o;
				break;
			}
			if (o->type == CLI_OPT_ARGS) {
				cli_args *args = o->value;

				if (!args->v)
					args->v = &argv[i];
				args->n++;
				match = o;
				break;
			}
		}
		if (!match)
			return usage_error(cmd, opts, "unexpected argument '%s'", a);
		if (match->type == CLI_OPT_ARGS && i + 1 < argc &&
		    ((cli_args *)match->value)->v + ((cli_args *)match->value)->n != &argv[i + 1]) {
			/* keep collected positionals contiguous in argv */
			return usage_error(cmd, opts, "options must come before %s...", match->name);
		}
	}

	for (o = opts; o && o->type != CLI_OPT_END; o++) {
		if (!(o->flags & CLI_OPT_REQUIRED))
			continue;
		if ((o->type == CLI_OPT_ARG && *(const char **)o->value == NULL) ||
		    (o->type == CLI_OPT_ARGS && ((cli_args *)o->value)->n == 0))
			return usage_error(cmd, opts, "missing %s", o->name);
	}
	return CLI_PARSE_OK;
}

/* ---- errors ------------------------------------------------------------ */

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("docket: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_exit_code(int code)
{
	switch (code) {
	case DOCKET_OK:
		return CLI_EXIT_OK;
	case DOCKET_EINVALID:
	case DOCKET_ETRANSITION:
	case DOCKET_ESTALE:
	case DOCKET_ECONFLICT:
	case DOCKET_ENOTFOUND:
	case DOCKET_EEXISTS:
		return CLI_EXIT_USAGE;
	case DOCKET_ESTORAGE:
	case DOCKET_ENOMEM:
	case DOCKET_EMAPFULL:
	case DOCKET_EVERSION:
	case DOCKET_ECORRUPT:
	default:
		return CLI_EXIT_SYSTEM;
	}
}

int cli_fail(int code, const char *fallback)
{
	const docket_error *e = docket_error_last();

	if (e->code != 0 && e->message[0])
		cli_error("%s", e->message);
	else
		cli_error("%s", fallback ? fallback : "unexpected error");
	return cli_exit_code(code);
}

int cli_open_failed(const cli_global *g, int error)
{
	const docket_error *e = docket_error_last();

	if (error == DOCKET_ENOTFOUND) {
		cli_error("no ledger at '%s' (create one with `docket init`, or name one with -L PATH "
			  "or $DOCKET_LEDGER)", g->ledger_path);
		return CLI_EXIT_USAGE;  /* a usage mistake (a wrong -L or no init), not storage */
	}
	if (e->code != 0 && e->message[0])
		cli_error("cannot open ledger '%s': %s", g->ledger_path, e->message);
	else
		cli_error("cannot open ledger '%s'", g->ledger_path);
	/* whatever stops the ledger from opening is a storage/system problem */
	return CLI_EXIT_SYSTEM;
}

int cli_open_ledger(docket_ledger **out, const cli_global *g, unsigned int flags)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	int error;

	*out = NULL;
	opts.flags = flags;
	opts.map_size_max = g->map_max;
	docket_error_clear();
	if ((error = docket_ledger_open(out, g->ledger_path, &opts)) < 0)
		return cli_open_failed(g, error);
	return CLI_EXIT_OK;
}

int cli_size_parse(const char *s, size_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *u;
	char *end;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end && (u = strchr(units, *end)) != NULL) {
		shift = 10 * (int)(u - units + 1);
		end++;
		if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
			end += strlen(end);
	} else if (strcmp(end, "B") == 0) {
		end++;
	}
	if (*end || v == 0 || v > (SIZE_MAX >> shift))
		return -1;
	*out = (size_t)v << shift;
	return 0;
}

/* ---- running a command ------------------------------------------------- */

/* Output that did not reach its destination is a system error. */
static int finish_output(int rc)
{
	if ((fflush(stdout) == EOF || ferror(stdout)) && rc == CLI_EXIT_OK) {
		cli_error("cannot write output");
		rc = CLI_EXIT_SYSTEM;
	}
	return rc;
}

static volatile sig_atomic_t guarded_child;

static void forward_signal(int sig)
{
	if (guarded_child > 0)
		kill((pid_t)guarded_child, sig);
}

/* A signal that means the process crashed rather than was told to stop. */
static int is_crash(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT ||
	       sig == SIGSYS || sig == SIGTRAP;
}

/* Die of `sig` as the child did, so that the caller sees the same status. */
static int die_like(int sig)
{
	sigset_t set;

	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return 128 + sig;
}

/*
 * Commands that run in docket's own process: serve is long-lived and is
 * stopped by its pid (a parent in between would leave it running after a
 * SIGKILL), verify runs its reading part in a child of its own and reports
 * a crash there as corruption (cmd_verify.c).
 */
static int runs_in_process(const cli_command *cmd)
{
	return strcmp(cmd->name, "serve") == 0 || strcmp(cmd->name, "verify") == 0 ||
	       strcmp(cmd->name, "help") == 0;
}

int cli_run(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	pid_t parent = getpid(), pid;
	int status = 0, sig;

	if (runs_in_process(cmd))
		return finish_output(cmd->fn(cmd, g, argc, argv));
	fflush(NULL);
	if ((pid = fork()) < 0)
		return finish_output(cmd->fn(cmd, g, argc, argv));
	if (pid == 0) {
#ifdef __linux__
		/* the child ends with its parent, whatever kills the parent */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(CLI_EXIT_SYSTEM);
#endif
		exit(finish_output(cmd->fn(cmd, g, argc, argv)));
	}
	guarded_child = pid;
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = forward_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(forwarded[i], &sa, NULL);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
	if (!is_crash(sig))
		return die_like(sig);
	cli_error("`docket %s` crashed (%s) working on ledger '%s': its data file is probably damaged "
		  "or truncated; `docket verify` checks it (if verify finds nothing wrong, this is a bug "
		  "in docket: please report it)", cmd->name, strsignal(sig), g->ledger_path);
	return CLI_EXIT_SYSTEM;
}

static int session_seen(void *ctx, const docket_session_info *info)
{
	(void)info;
	*(int *)ctx = 1;
	return 0;
}

int cli_session_exists(docket_ledger *ledger, const char *session)
{
	int seen = 0;
	int error = docket_ledger_session(ledger, session, session_seen, &seen);

	if (error == DOCKET_ENOTFOUND)
		return 0;
	return error < 0 ? error : seen;
}

int cli_check_session(docket_ledger *ledger, const char *session)
{
	int seen = 0;
	int error;

	docket_error_clear();
	error = docket_ledger_session(ledger, session, session_seen, &seen);
	if (error == DOCKET_ENOTFOUND || (error == 0 && !seen)) {
		cli_error("no session '%s' in the ledger", session);
		return CLI_EXIT_USAGE;
	}
	if (error < 0)
		return cli_fail(error, "cannot read the session");
	return CLI_EXIT_OK;
}

/* ---- output ------------------------------------------------------------ */

int cli_want_color(FILE *f)
{
	const char *no_color = getenv("NO_COLOR");
	const char *term = getenv("TERM");

	if (no_color && *no_color)
		return 0;
	if (term && strcmp(term, "dumb") == 0)
		return 0;
	return isatty(fileno(f));
}

void cli_put_color(FILE *f, int on, const char *color, const char *s)
{
	if (on && color)
		fprintf(f, "\033[%sm%s\033[0m", color, s);
	else
		fputs(s, f);
}

const char *cli_status_color(const char *word)
{
	static const char *const green[] = { "ok", "allowed", "approved", "approved_for_session",
					     "closed_ok", NULL };
	static const char *const red[] = { "error", "denied", "unsupported", "timeout",
					   "indeterminate", "aborted", "in_doubt", NULL };
	static const char *const yellow[] = { "approval_required", "cancelled", "expired",
					      "closed", "superseded", "awaiting_approval",
					      "needs_approval", "undecided", "pending", NULL };
	size_t i;

	if (!word)
		return NULL;
	for (i = 0; green[i]; i++)
		if (strcmp(word, green[i]) == 0)
			return CLI_GREEN;
	for (i = 0; red[i]; i++)
		if (strcmp(word, red[i]) == 0)
			return CLI_RED;
	for (i = 0; yellow[i]; i++)
		if (strcmp(word, yellow[i]) == 0)
			return CLI_YELLOW;
	return NULL;
}

struct cli_table {
	size_t columns;
	size_t ncells;
	size_t cap;
	char **text;
	const char **color;
	unsigned char *span;  /* per cell: 1 on the first cell of a spanning row */
	unsigned char *right;
};

int cli_table_new(cli_table **out, size_t columns)
{
	cli_table *t;

	*out = NULL;
	if (columns == 0)
		return docket_error_set(DOCKET_EINVALID, "a table needs columns");
	t = docket_calloc(1, sizeof(*t));
	if (!t)
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	t->right = docket_calloc(columns, 1);
	if (!t->right) {
		docket_free(t);
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	}
	t->columns = columns;
	*out = t;
	return 0;
}

void cli_table_align_right(cli_table *t, size_t col)
{
	if (col < t->columns)
		t->right[col] = 1;
}

int cli_table_cell_color(cli_table *t, const char *color, const char *text)
{
	char *copy;

	if (t->ncells == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		char **ntext;
		const char **ncolor;
		unsigned char *nspan;

		if (ncap < t->cap || ncap > SIZE_MAX / sizeof(char *))
			return docket_error_set(DOCKET_ENOMEM, "table too large");
		ntext = docket_realloc(t->text, ncap * sizeof(char *));
		if (!ntext)
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		t->text = ntext;
		ncolor = docket_realloc((void *)t->color, ncap * sizeof(char *));
		if (!ncolor)
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		t->color = ncolor;
		nspan = docket_realloc(t->span, ncap);
		if (!nspan)
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		t->span = nspan;
		t->cap = ncap;
	}
	copy = docket_strdup(text ? text : "");
	if (!copy)
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	t->text[t->ncells] = copy;
	t->color[t->ncells] = color;
	t->span[t->ncells] = 0;
	t->ncells++;
	return 0;
}

int cli_table_span(cli_table *t, const char *color, const char *text)
{
	size_t first = t->ncells, c;
	int error;

	if (first % t->columns != 0)
		return docket_error_set(DOCKET_EINVALID, "a spanning row inside a row");
	if ((error = cli_table_cell_color(t, color, text)) < 0)
		return error;
	for (c = 1; c < t->columns; c++)
		if ((error = cli_table_cell(t, "")) < 0)
			return error;
	t->span[first] = 1;
	return 0;
}

int cli_table_cell(cli_table *t, const char *text)
{
	return cli_table_cell_color(t, NULL, text);
}

int cli_table_cellf(cli_table *t, const char *fmt, ...)
{
	docket_buf b = DOCKET_BUF_INIT;
	va_list ap;
	int error;
	char tmp[512];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return docket_error_set(DOCKET_EINVALID, "bad format");
	if ((size_t)n < sizeof(tmp))
		return cli_table_cell(t, tmp);
	/* long cell: format again into a buffer of the right size */
	if ((error = docket_buf_reserve(&b, (size_t)n + 1)) < 0)
		return error;
	va_start(ap, fmt);
	vsnprintf(b.ptr, (size_t)n + 1, fmt, ap);
	va_end(ap);
	error = cli_table_cell(t, b.ptr);
	docket_buf_dispose(&b);
	return error;
}

/* Display width of UTF-8 text: code points, not bytes. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

void cli_table_print(const cli_table *t, FILE *f, int color, int header)
{
	size_t *width;
	size_t i, c;

	width = docket_calloc(t->columns, sizeof(size_t));
	if (!width)
		return;
	for (i = 0; i < t->ncells; i++) {
		size_t w = text_width(t->text[i]);

		if (t->span[i - i % t->columns])
			continue;
		if (w > width[i % t->columns])
			width[i % t->columns] = w;
	}
	for (i = 0; i < t->ncells; i += t->columns) {
		size_t last = t->columns;

		if (t->span[i]) {
			cli_put_color(f, color, t->color[i], t->text[i]);
			fputc('\n', f);
			continue;
		}

		/* trailing empty cells print nothing (no trailing blanks) */
		while (last > 0 && (i + last - 1 >= t->ncells || !t->text[i + last - 1][0]))
			last--;
		for (c = 0; c < last; c++) {
			const char *s = t->text[i + c];
			const char *col = (header && i == 0) ? CLI_BOLD : t->color[i + c];
			size_t pad = width[c] - text_width(s);

			if (c > 0)
				fputs("  ", f);
			if (t->right[c])
				fprintf(f, "%*s", (int)pad, "");
			cli_put_color(f, color, col, s);
			if (!t->right[c] && c + 1 < last)
				fprintf(f, "%*s", (int)pad, "");
		}
		fputc('\n', f);
	}
	docket_free(width);
}

void cli_table_free(cli_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->ncells; i++)
		docket_free(t->text[i]);
	docket_free(t->text);
	docket_free((void *)t->color);
	docket_free(t->span);
	docket_free(t->right);
	docket_free(t);
}

static int json_out_cb(const char *data, size_t size, void *ctx)
{
	return fwrite(data, 1, size, ctx) == size ? 0 : -1;
}

int cli_json_line(FILE *f, const json_t *value)
{
	if (json_dump_callback(value, json_out_cb, f, JSON_COMPACT | JSON_ENCODE_ANY) < 0)
		return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}

int cli_json_pretty(FILE *f, const json_t *value)
{
	if (json_dump_callback(value, json_out_cb, f, JSON_INDENT(2) | JSON_ENCODE_ANY) < 0)
		return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}

int cli_print_json(json_t *value)
{
	int ok = value && cli_json_pretty(stdout, value) == 0;

	json_decref(value);
	return ok ? CLI_EXIT_OK : cli_fail(DOCKET_ENOMEM, "cannot write output");
}

int cli_put_json_line(json_t *value)
{
	int error;

	if (!value)
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	error = cli_json_line(stdout, value);
	json_decref(value);
	return error < 0 ? docket_error_set(DOCKET_ESTORAGE, "cannot write output") : 0;
}

json_t *cli_json_nonempty(const char *s)
{
	return (s && *s) ? json_string(s) : json_null();
}

const char *cli_or_dash(const char *s)
{
	return (s && *s) ? s : "-";
}

/* ---- listings ------------------------------------------------------------ */

int cli_listing_begin(cli_listing *l, int json, const char *const *header, size_t columns)
{
	size_t i;
	int error;

	l->json = json;
	l->table = NULL;
	l->count = 0;
	if (json)
		return CLI_EXIT_OK;
	if ((error = cli_table_new(&l->table, columns)) < 0)
		return cli_fail(error, "out of memory");
	for (i = 0; i < columns; i++)
		if ((error = cli_table_cell(l->table, header[i])) < 0)
			return cli_fail(error, "out of memory");
	return CLI_EXIT_OK;
}

void cli_listing_end(const cli_listing *l, int color, const char *none)
{
	if (l->json)
		return;
	if (l->count == 0)
		fputs(none, stdout);
	else
		cli_table_print(l->table, stdout, color, 1);
}

void cli_listing_dispose(cli_listing *l)
{
	cli_table_free(l->table);
	l->table = NULL;
}

/* ---- time -------------------------------------------------------------- */

int cli_time_parse(const char *s, int64_t *out_ms)
{
	return docket_time_parse_ms(s, 0, out_ms);
}

void cli_duration(char *out, size_t n, int64_t ms)
{
	if (ms < 0)
		snprintf(out, n, "-");
	else if (ms < 1000)
		snprintf(out, n, "%lldms", (long long)ms);
	else if (ms < 10000)
		snprintf(out, n, "%lld.%02llds", (long long)(ms / 1000),
			 (long long)((ms % 1000) / 10));
	else if (ms < 60000)
		snprintf(out, n, "%lld.%llds", (long long)(ms / 1000),
			 (long long)((ms % 1000) / 100));
	else if (ms < 3600000)
		snprintf(out, n, "%lldm%02llds", (long long)(ms / 60000),
			 (long long)((ms % 60000) / 1000));
	else
		snprintf(out, n, "%lldh%02lldm", (long long)(ms / 3600000),
			 (long long)((ms % 3600000) / 60000));
}

/* ---- JSON accessors ---------------------------------------------------- */

const char *cli_jstr(const json_t *obj, const char *key)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int cli_jint(const json_t *obj, const char *key, int64_t *out)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;

	if (!json_is_integer(v))
		return -1;
	*out = (int64_t)json_integer_value(v);
	return 0;
}

/* ---- call summaries ---------------------------------------------------- */

/* Append `s` with control characters turned into spaces, runs collapsed. */
static int put_clean(docket_buf *b, const char *s)
{
	int error = 0;
	int space = b->len > 0 && b->ptr[b->len - 1] == ' ';

	for (; *s && error == 0; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f) {
			if (!space)
				error = docket_buf_putc(b, ' ');
			space = 1;
			continue;
		}
		error = docket_buf_putc(b, (char)c);
		space = c == ' ';
	}
	return error;
}

static int needs_quotes(const char *s)
{
	if (!*s)
		return 1;
	for (; *s; s++)
		if (strchr(" \t\n'\"\\$`;&|<>()*?[]{}!#~", *s))
			return 1;
	return 0;
}

static int put_argv(docket_buf *b, const json_t *argv)
{
	size_t i;
	const json_t *a;
	int error = 0;

	json_array_foreach(argv, i, a) {
		const char *s = json_is_string(a) ? json_string_value(a) : "?";

		if (i > 0 && (error = docket_buf_putc(b, ' ')) < 0)
			return error;
		if (needs_quotes(s)) {
			if ((error = docket_buf_putc(b, '\'')) < 0 || (error = put_clean(b, s)) < 0 ||
			    (error = docket_buf_putc(b, '\'')) < 0)
				return error;
		} else if ((error = put_clean(b, s)) < 0) {
			return error;
		}
	}
	return error;
}

static int is_shell(const char *argv0)
{
	const char *base = strrchr(argv0, '/');
	static const char *const shells[] = { "bash", "sh", "zsh", "dash", NULL };
	size_t i;

	base = base ? base + 1 : argv0;
	for (i = 0; shells[i]; i++)
		if (strcmp(base, shells[i]) == 0)
			return 1;
	return 0;
}

static int summary_shell(docket_buf *b, const json_t *args)
{
	const json_t *cmd = json_object_get(args, "command");

	if (json_is_string(cmd))
		return put_clean(b, json_string_value(cmd));
	if (!json_is_array(cmd))
		return 0;
	if (json_array_size(cmd) == 3 && json_is_string(json_array_get(cmd, 0)) &&
	    json_is_string(json_array_get(cmd, 1)) && json_is_string(json_array_get(cmd, 2)) &&
	    is_shell(json_string_value(json_array_get(cmd, 0)))) {
		const char *flag = json_string_value(json_array_get(cmd, 1));

		if (strcmp(flag, "-c") == 0 || strcmp(flag, "-lc") == 0)
			return put_clean(b, json_string_value(json_array_get(cmd, 2)));
	}
	return put_argv(b, cmd);
}

static int summary_patch(docket_buf *b, const json_t *args)
{
	const json_t *changes = json_object_get(args, "changes");
	const json_t *ch;
	size_t i;
	int error = 0;

	json_array_foreach(changes, i, ch) {
		const char *op = cli_jstr(ch, "op");
		const char *path = cli_jstr(ch, "path");
		const char *to = cli_jstr(ch, "to");

		if (i > 0 && (error = docket_buf_puts(b, ", ")) < 0)
			return error;
		if ((error = docket_buf_printf(b, "%s %s", op ? op : "?", path ? path : "?")) < 0)
			return error;
		if (to && (error = docket_buf_printf(b, " -> %s", to)) < 0)
			return error;
	}
	return error;
}

static int summary_network(docket_buf *b, const json_t *args)
{
	const char *url = cli_jstr(args, "url");
	const char *host = cli_jstr(args, "host");
	const char *proto = cli_jstr(args, "protocol");
	int64_t port;
	int error = 0;

	if (url)
		return put_clean(b, url);
	if (!host && cli_jstr(args, "query"))  /* a web search: what was searched */
		return (error = docket_buf_puts(b, "search: ")) < 0 ? error : put_clean(b, cli_jstr(args, "query"));
	if (!host)
		return 0;
	if (proto && (error = docket_buf_printf(b, "%s://", proto)) < 0)
		return error;
	if ((error = put_clean(b, host)) < 0)
		return error;
	if (cli_jint(args, "port", &port) == 0)
		error = docket_buf_printf(b, ":%lld", (long long)port);
	return error;
}

static int summary_packages(docket_buf *b, const json_t *args)
{
	const char *eco = cli_jstr(args, "ecosystem");
	const json_t *pkgs = json_object_get(args, "packages");
	const json_t *p;
	size_t i;
	int error;

	if ((error = docket_buf_printf(b, "%s:", eco ? eco : "?")) < 0)
		return error;
	json_array_foreach(pkgs, i, p) {
		if ((error = docket_buf_putc(b, ' ')) < 0 ||
		    (error = put_clean(b, json_is_string(p) ? json_string_value(p) : "?")) < 0)
			return error;
	}
	return 0;
}

static int summary_other(docket_buf *b, const json_t *args)
{
	docket_buf tmp = DOCKET_BUF_INIT;
	int error;

	if (!args || (json_is_object(args) && json_object_size(args) == 0))
		return 0;
	if ((error = docket_json_dump(&tmp, args)) == 0)
		error = put_clean(b, tmp.ptr ? tmp.ptr : "");
	docket_buf_dispose(&tmp);
	return error;
}

int cli_call_summary(char **out, const char *tool, const json_t *args, size_t max)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error = 0;

	*out = NULL;
	if (!tool)
		tool = "";
	if (strcmp(tool, "shell") == 0) {
		error = summary_shell(&b, args);
	} else if (strcmp(tool, "apply_patch") == 0) {
		error = summary_patch(&b, args);
	} else if (strcmp(tool, "read_file") == 0 || strcmp(tool, "write_file") == 0) {
		const char *path = cli_jstr(args, "path");

		error = path ? put_clean(&b, path) : 0;
	} else if (strcmp(tool, "network") == 0) {
		error = summary_network(&b, args);
	} else if (strcmp(tool, "run_code") == 0) {
		const char *lang = cli_jstr(args, "language");
		const char *src = cli_jstr(args, "source");

		error = docket_buf_puts(&b, lang ? lang : "?");
		if (error == 0 && src)
			if ((error = docket_buf_puts(&b, ": ")) == 0)
				error = put_clean(&b, src);
	} else if (strcmp(tool, "install_packages") == 0) {
		error = summary_packages(&b, args);
	} else if (strcmp(tool, "mcp") == 0) {
		const char *server = cli_jstr(args, "server");
		const char *t = cli_jstr(args, "tool");

		error = docket_buf_printf(&b, "%s/%s", server ? server : "?", t ? t : "?");
	} else {
		error = summary_other(&b, args);
	}
	if (error == 0 && !b.ptr)
		error = docket_buf_puts(&b, "");
	if (error < 0) {
		docket_buf_dispose(&b);
		return error;
	}
	/* cut at `max` code points, on a UTF-8 boundary, marking the cut */
	if (max >= 4 && text_width(b.ptr) > max) {
		size_t cps = 0, i;

		for (i = 0; i < b.len; i++) {
			if (((unsigned char)b.ptr[i] & 0xC0) != 0x80) {
				if (cps == max - 3)
					break;
				cps++;
			}
		}
		b.len = i;
		b.ptr[i] = '\0';
		if ((error = docket_buf_puts(&b, "...")) < 0) {
			docket_buf_dispose(&b);
			return error;
		}
	}
	*out = b.ptr;
	return 0;
}

