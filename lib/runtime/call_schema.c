/* SPDX-License-Identifier: Apache-2.0 */
/*
 * call_schema.c: the C side of docs/call.schema.json. One table row per
 * field of a canonical tool's args (DESIGN §4): its type, whether it is
 * required, and for enums the allowed strings. Fields the table does not
 * name are allowed (a runtime may carry more), those it names must have
 * their type: `"command":"ls -la"` (a string where the schema says an argv
 * array) is refused, never guessed at. tests/cli/call_schema_check.py checks
 * that this table and the JSON Schema agree on seeded random calls.
 */
#include "call_schema.h"

#include <string.h>

#include "ledger/event.h"
#include "util/error.h"
#include "util/tool.h"
#include "util/json.h"

enum field_type { F_STRING, F_ARGV, F_INT, F_PORT, F_OBJECT, F_CHANGES, F_ENUM };

typedef struct field {
	const char *tool;
	const char *name;
	int type;
	int required;
	const char *const *values; /* F_ENUM */
} field;

static const char *const sandbox_permissions[] = { "use_default", "require_escalated",
						   "with_additional_permissions", NULL };
static const char *const patch_ops[] = { "add", "update", "delete", "move", NULL };

static const field fields[] = {
	{ DOCKET_TOOL_SHELL, "command", F_ARGV, 1, NULL },
	{ DOCKET_TOOL_SHELL, "cwd", F_STRING, 0, NULL },
	{ DOCKET_TOOL_SHELL, "timeout_ms", F_INT, 0, NULL },
	{ DOCKET_TOOL_SHELL, "sandbox_permissions", F_ENUM, 0, sandbox_permissions },
	{ DOCKET_TOOL_SHELL, "justification", F_STRING, 0, NULL },
	{ DOCKET_TOOL_SHELL, "prefix_rule", F_ARGV, 0, NULL },
	{ DOCKET_TOOL_APPLY_PATCH, "changes", F_CHANGES, 1, NULL },
	{ DOCKET_TOOL_READ_FILE, "path", F_STRING, 1, NULL },
	{ DOCKET_TOOL_WRITE_FILE, "path", F_STRING, 1, NULL },
	{ DOCKET_TOOL_NETWORK, "url", F_STRING, 0, NULL },
	{ DOCKET_TOOL_NETWORK, "host", F_STRING, 0, NULL },
	{ DOCKET_TOOL_NETWORK, "port", F_PORT, 0, NULL },
	{ DOCKET_TOOL_NETWORK, "protocol", F_STRING, 0, NULL },
	{ DOCKET_TOOL_NETWORK, "query", F_STRING, 0, NULL },
	{ DOCKET_TOOL_RUN_CODE, "language", F_STRING, 1, NULL },
	{ DOCKET_TOOL_RUN_CODE, "source", F_STRING, 0, NULL },
	{ DOCKET_TOOL_INSTALL_PACKAGES, "ecosystem", F_STRING, 1, NULL },
	{ DOCKET_TOOL_INSTALL_PACKAGES, "packages", F_ARGV, 1, NULL },
	{ DOCKET_TOOL_MCP, "server", F_STRING, 1, NULL },
	{ DOCKET_TOOL_MCP, "tool", F_STRING, 1, NULL },
	{ DOCKET_TOOL_MCP, "arguments", F_OBJECT, 0, NULL },
};

static const char *const type_names[] = {
	[F_STRING] = "a string", [F_ARGV] = "an array of strings (argv, not one command line)",
	[F_INT] = "a non-negative integer", [F_PORT] = "an integer 0..65535", [F_OBJECT] = "an object",
	[F_CHANGES] = "an array of {path, op, to?} objects", [F_ENUM] = "one of",
};

static int is_string_array(const docket_jv_ops *o, docket_jv v)
{
	docket_jv_iter it;
	const char *key;
	docket_jv item;

	if (o->type(v) != DOCKET_JV_ARRAY)
		return 0;
	for (o->iter(v, &it); o->next(&it, &key, &item);)
		if (o->type(item) != DOCKET_JV_STRING)
			return 0;
	return 1;
}

/* The string value of `v` (a string), or NULL. */
static const char *str_of(const docket_jv_ops *o, docket_jv v)
{
	size_t len;

	return o->type(v) == DOCKET_JV_STRING ? o->string(v, &len) : NULL;
}

static int in_list(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

/* Each change of apply_patch: {path: string, op?: enum, to?: string}. */
static int changes_ok(const docket_jv_ops *o, docket_jv v)
{
	docket_jv_iter it;
	const char *key;
	docket_jv ch;

	if (o->type(v) != DOCKET_JV_ARRAY)
		return 0;
	for (o->iter(v, &it); o->next(&it, &key, &ch);) {
		docket_jv path = o->get(ch, "path"), op = o->get(ch, "op"), to = o->get(ch, "to");

		if (o->type(ch) != DOCKET_JV_OBJECT || !path.p || o->type(path) != DOCKET_JV_STRING ||
		    (op.p && (o->type(op) != DOCKET_JV_STRING || !in_list(str_of(o, op), patch_ops))) ||
		    (to.p && o->type(to) != DOCKET_JV_STRING))
			return 0;
	}
	return 1;
}

static int value_ok(const field *f, const docket_jv_ops *o, docket_jv v)
{
	switch (f->type) {
	case F_STRING: return o->type(v) == DOCKET_JV_STRING;
	case F_ARGV: return is_string_array(o, v);
	case F_INT: return o->type(v) == DOCKET_JV_INTEGER && o->integer(v) >= 0;
	case F_PORT: return o->type(v) == DOCKET_JV_INTEGER && o->integer(v) >= 0 && o->integer(v) <= 65535;
	case F_OBJECT: return o->type(v) == DOCKET_JV_OBJECT;
	case F_CHANGES: return changes_ok(o, v);
	case F_ENUM: return o->type(v) == DOCKET_JV_STRING && in_list(str_of(o, v), f->values);
	default: return 0;
	}
}

static int known_tool(const char *tool)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcmp(fields[i].tool, tool) == 0)
			return 1;
	return 0;
}

int call_schema_check(const char *where, const char *tool, const docket_jv_ops *o, docket_jv args)
{
	if (!tool || !known_tool(tool))
		return 0;
	if (!args.p || o->type(args) != DOCKET_JV_OBJECT)
		return docket_error_set(DOCKET_EINVALID, "%s: tool %s: args must be an object (docs/call.schema.json)",
					where, tool);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const field *f = &fields[i];
		docket_jv v;

		if (strcmp(f->tool, tool) != 0)
			continue;
		v = o->get(args, f->name);
		if (!v.p && f->required)
			return docket_error_set(DOCKET_EINVALID, "%s: tool %s needs args.%s (docs/call.schema.json)",
						where, tool, f->name);
		if (v.p && !value_ok(f, o, v))
			return docket_error_set(DOCKET_EINVALID, "%s: tool %s: args.%s must be %s%s%s%s (docs/call.schema.json)",
						where, tool, f->name, type_names[f->type],
						f->type == F_ENUM ? " " : "", f->type == F_ENUM ? f->values[0] : "",
						f->type == F_ENUM ? ", ..." : "");
	}
	if (strcmp(tool, DOCKET_TOOL_NETWORK) == 0 && !o->get(args, "url").p && !o->get(args, "host").p &&
	    !o->get(args, "query").p)
		return docket_error_set(DOCKET_EINVALID, "%s: tool network needs args.url, args.host or args.query "
					"(docs/call.schema.json)", where);
	return 0;
}

int call_schema_check_event(const char *where, const docket_event *ev)
{
	const Docket__V1__ToolIntent *b = ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_INTENT ? ev->tool_intent : NULL;
	json_t *args = NULL;
	int error;

	if (!b || !b->tool || !known_tool(b->tool))
		return 0;
	if ((error = docket_json_parse(&args, b->args_json ? b->args_json : "{}",
				       b->args_json ? strlen(b->args_json) : 2)) < 0)
		return error;
	error = call_schema_check(where, b->tool, &docket_jv_jansson, docket_jv_of_json(args));
	json_decref(args);
	return error;
}
