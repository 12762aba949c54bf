/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli_opts.c: option parsing for every command (the cli_opt tables), the help
 * and usage lines they produce, and size arguments such as 64MiB.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

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
