/* SPDX-License-Identifier: Apache-2.0 */
/*
 * summary.c: the one-line summary of a tool call (a command line, the
 * changes of a patch, a path, a URL or search, packages, an MCP tool), the
 * one owner of it for the terminal, the report and every export.
 */
#include "summary.h"

#include <string.h>

#include "buf.h"
#include "error.h"
#include "json.h"
#include "tool.h"

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
		const char *op = docket_json_str(ch, "op");
		const char *path = docket_json_str(ch, "path");
		const char *to = docket_json_str(ch, "to");

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
	const char *url = docket_json_str(args, "url");
	const char *host = docket_json_str(args, "host");
	const char *proto = docket_json_str(args, "protocol");
	int error = 0;

	if (url)
		return put_clean(b, url);
	if (!host && docket_json_str(args, "query"))  /* a web search: what was searched */
		return (error = docket_buf_puts(b, "search: ")) < 0 ? error : put_clean(b, docket_json_str(args, "query"));
	if (!host)
		return 0;
	if (proto && (error = docket_buf_printf(b, "%s://", proto)) < 0)
		return error;
	if ((error = put_clean(b, host)) < 0)
		return error;
	if (json_is_integer(json_object_get(args, "port")))
		error = docket_buf_printf(b, ":%lld", (long long)json_integer_value(json_object_get(args, "port")));
	return error;
}

static int summary_packages(docket_buf *b, const json_t *args)
{
	const char *eco = docket_json_str(args, "ecosystem");
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

/* Cut what was appended after `start` at `max` code points, on a UTF-8
 * boundary, marking the cut with "...". */
static int cut(docket_buf *b, size_t start, size_t max)
{
	size_t cps = 0, i, keep = b->len;

	for (i = start; i < b->len; i++) {
		if (((unsigned char)b->ptr[i] & 0xC0) != 0x80) {
			if (cps == max - 3)
				keep = i;
			cps++;
		}
	}
	if (cps <= max)
		return 0;
	b->len = keep;
	b->ptr[keep] = '\0';
	return docket_buf_puts(b, "...");
}

int docket_call_summary(docket_buf *b, const char *tool, const json_t *args, size_t max)
{
	size_t start = b->len;
	int error = 0;

	switch (docket_tool_kind_of(tool)) {
	case DOCKET_TOOL_KIND_SHELL:
		error = summary_shell(b, args);
		break;
	case DOCKET_TOOL_KIND_APPLY_PATCH:
		error = summary_patch(b, args);
		break;
	case DOCKET_TOOL_KIND_READ_FILE:
	case DOCKET_TOOL_KIND_WRITE_FILE: {
		const char *path = docket_json_str(args, "path");

		error = path ? put_clean(b, path) : 0;
		break;
	}
	case DOCKET_TOOL_KIND_NETWORK:
		error = summary_network(b, args);
		break;
	case DOCKET_TOOL_KIND_RUN_CODE: {
		const char *lang = docket_json_str(args, "language");
		const char *src = docket_json_str(args, "source");

		error = docket_buf_puts(b, lang ? lang : "?");
		if (error == 0 && src && (error = docket_buf_puts(b, ": ")) == 0)
			error = put_clean(b, src);
		break;
	}
	case DOCKET_TOOL_KIND_INSTALL_PACKAGES:
		error = summary_packages(b, args);
		break;
	case DOCKET_TOOL_KIND_MCP: {
		const char *server = docket_json_str(args, "server");
		const char *t = docket_json_str(args, "tool");

		error = docket_buf_printf(b, "%s/%s", server ? server : "?", t ? t : "?");
		break;
	}
	case DOCKET_TOOL_OTHER:
	default:
		error = summary_other(b, args);
		break;
	}
	if (error == 0 && !b->ptr)
		error = docket_buf_puts(b, "");
	if (error == 0 && max >= 4)
		error = cut(b, start, max);
	return error;
}
