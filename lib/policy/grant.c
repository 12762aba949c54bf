/* SPDX-License-Identifier: Apache-2.0 */
/*
 * grant.c: what an `approved_for_session` answer grants (DESIGN §7), and the
 * rule that decided a result. Shared by authority mode (runtime/authority.c)
 * and replay, so both derive the same session grants from the same history.
 */
#include <string.h>

#include "policy.h"

#include "util/error.h"
#include "util/tool.h"

static int append_grant(json_t *grants, const char *key, const json_t *value)
{
	if (json_array_append_new(grants, json_pack("{s:O}", key, value)) < 0)
		return docket_error_set_oom();
	return 0;
}

/* A non-empty array of non-empty strings. */
static bool argv_ok(const json_t *cmd)
{
	size_t i;
	json_t *w;

	if (!json_is_array(cmd) || json_array_size(cmd) == 0)
		return false;
	json_array_foreach(cmd, i, w)
		if (!json_is_string(w) || json_string_length(w) == 0)
			return false;
	return true;
}

static bool path_ok(const json_t *p)
{
	return json_is_string(p) && json_string_length(p) > 0 && !memchr(json_string_value(p), '\0', json_string_length(p));
}

static bool tool_is(const char *tool, const char *const *names)
{
	for (; tool && *names; names++)
		if (strcmp(tool, *names) == 0)
			return true;
	return false;
}

/*
 * Only a tool's canonical field grants (issue 26): a shell call's argv, a
 * read or write call's path, an apply_patch's change paths; never an empty
 * one, never a field of another tool that happens to be called "path".
 */
int docket_policy_grant_from_intent(json_t *grants, const json_t *intent)
{
	static const char *const shells[] = { DOCKET_TOOL_SHELL, DOCKET_TOOL_CODEX_LOCAL_SHELL, DOCKET_TOOL_CODEX_SHELL_COMMAND,
		DOCKET_TOOL_CODEX_EXEC_COMMAND, NULL };
	static const char *const files[] = { DOCKET_TOOL_READ_FILE, DOCKET_TOOL_WRITE_FILE, NULL };
	const char *tool = json_string_value(json_object_get(intent, "tool"));
	const json_t *args = json_object_get(intent, "args");
	const json_t *cmd = json_object_get(args, "command");
	const json_t *path = json_object_get(args, "path");
	const json_t *changes = json_object_get(args, "changes");
	size_t i;
	json_t *c;
	int error = 0;

	if (tool_is(tool, shells))
		return argv_ok(cmd) ? append_grant(grants, "command", cmd) : 0;
	if (tool_is(tool, files))
		return path_ok(path) ? append_grant(grants, "path", path) : 0;
	if (!tool || strcmp(tool, DOCKET_TOOL_APPLY_PATCH) != 0 || !json_is_array(changes))
		return 0;
	json_array_foreach(changes, i, c) {
		const json_t *p = json_object_get(c, "path");

		if (path_ok(p) && (error = append_grant(grants, "path", p)) < 0)
			break;
	}
	return error;
}
