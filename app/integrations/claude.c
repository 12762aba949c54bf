/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claude.c: Claude Code. Which settings files it merges (the policy in force
 * for a session), and docket's hooks in a settings.json.
 *
 * Settings files, lowest precedence first (Claude Code's own order):
 *   user     $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json
 *   project  <project>/.claude/settings.json    (<project>: $CLAUDE_PROJECT_DIR, else cwd)
 *   local    <project>/.claude/settings.local.json
 *   managed  /etc/claude-code/managed-settings.json ($DOCKET_CLAUDE_MANAGED_SETTINGS
 *            names another file, for tests and packagers)
 * Until the workspace is trusted (~/.claude.json: projects[DIR].
 * hasTrustDialogAccepted), Claude Code ignores the allow rules of the
 * project and local files, and so does this record of them.
 * Permission rule lists are concatenated (each rule once); defaultMode
 * comes from the highest file that sets it, and the session's own mode
 * (from the hook event) beats them all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integrations_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define MANAGED_DEFAULT "/etc/claude-code/managed-settings.json"
#define MARKER " hook claude"

const char *const hook_claude_events[] = {
	"SessionStart", "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure",
	"PermissionDenied", "Stop", "SubagentStop", "SessionEnd", NULL
};

int hook_shell_quote(docket_buf *out, const char *s)
{
	int error = docket_buf_putc(out, '\'');

	for (; error == 0 && *s; s++)
		error = *s == '\'' ? docket_buf_puts(out, "'\\''") : docket_buf_putc(out, *s);
	return error ? error : docket_buf_putc(out, '\'');
}

/* ---- effective settings ---- */

static int add_rules(json_t *dst, const json_t *src)
{
	size_t i, j;

	for (i = 0; i < json_array_size(src); i++) {
		const json_t *r = json_array_get(src, i);
		int seen = 0;

		if (!json_is_string(r))
			continue;
		for (j = 0; j < json_array_size(dst) && !seen; j++)
			seen = json_equal(json_array_get(dst, j), r);
		if (!seen && json_array_append(dst, (json_t *)r) < 0)
			return docket_error_set_oom();
	}
	return 0;
}

/* `skip_allow`: the file's allow rules do not count (an untrusted workspace). */
static int merge_file(json_t *perm, const char *path, json_t *files, int skip_allow)
{
	static const char *const lists[] = { "allow", "ask", "deny", "additionalDirectories", NULL };
	docket_buf text = DOCKET_BUF_INIT;
	json_t *doc = NULL;
	const json_t *p;
	size_t i;
	int error = docket_buf_read_path(&text, path);

	if (error == DOCKET_ENOTFOUND) {
		docket_error_clear();
		error = 0;
		goto done;
	}
	if (error < 0 || (error = docket_json_parse(&doc, text.ptr, text.len)) < 0) {
		/* Claude Code skips a file it cannot read; so does the record of it */
		docket_error_clear();
		error = 0;
		goto done;
	}
	if (files && json_array_append_new(files, json_string(path)) < 0) {
		error = docket_error_set_oom();
		goto done;
	}
	p = json_object_get(doc, "permissions");
	for (i = 0; lists[i] && error == 0; i++)
		if (json_is_array(json_object_get(p, lists[i])) && !(skip_allow && i == 0))
			error = add_rules(json_object_get(perm, lists[i]), json_object_get(p, lists[i]));
	if (error == 0 && json_is_string(json_object_get(p, "defaultMode")) &&
	    json_object_set(perm, "defaultMode", json_object_get(p, "defaultMode")) < 0)
		error = docket_error_set_oom();
done:
	json_decref(doc);
	docket_buf_dispose(&text);
	return error;
}

static int settings_path(docket_buf *out, const char *dir, const char *name)
{
	docket_buf_clear(out);
	return docket_buf_printf(out, "%s/%s", dir, name);
}

/*
 * Claude Code ignores the allow rules of a project's settings until the
 * workspace is trusted: ~/.claude.json has projects[DIR].hasTrustDialogAccepted.
 */
static int workspace_trusted(const char *home, const char *project)
{
	docket_buf path = DOCKET_BUF_INIT, text = DOCKET_BUF_INIT;
	json_t *doc = NULL;
	int trusted = 0;

	if (home && project && docket_buf_printf(&path, "%s/.claude.json", home) == 0 &&
	    docket_buf_read_path(&text, path.ptr) == 0 && docket_json_parse(&doc, text.ptr, text.len) == 0)
		trusted = json_is_true(json_object_get(json_object_get(json_object_get(doc, "projects"), project),
						       "hasTrustDialogAccepted"));
	docket_error_clear();
	json_decref(doc);
	docket_buf_dispose(&path);
	docket_buf_dispose(&text);
	return trusted;
}

int docket_claude_effective_settings(json_t **out, const char *cwd, const char *mode, json_t *files)
{
	static const char *const lists[] = { "allow", "ask", "deny", "additionalDirectories", NULL };
	const char *cfg = getenv("CLAUDE_CONFIG_DIR"), *home = getenv("HOME");
	const char *project = getenv("CLAUDE_PROJECT_DIR"), *managed = getenv("DOCKET_CLAUDE_MANAGED_SETTINGS");
	docket_buf path = DOCKET_BUF_INIT;
	json_t *perm = json_pack("{s[] s[] s[] s[]}", "allow", "ask", "deny", "additionalDirectories");
	size_t i;
	int error = 0, untrusted;

	if (!perm)
		return docket_error_set_oom();
	if (!project || !*project)
		project = cwd;
	untrusted = !workspace_trusted(cfg && *cfg ? cfg : home, project);
	if (cfg && *cfg)
		error = settings_path(&path, cfg, "settings.json");
	else if (home && *home)
		error = settings_path(&path, home, ".claude/settings.json");
	if (error == 0 && path.len)
		error = merge_file(perm, path.ptr, files, 0);
	if (error == 0 && project && (error = settings_path(&path, project, ".claude/settings.json")) == 0)
		error = merge_file(perm, path.ptr, files, untrusted);
	if (error == 0 && project && (error = settings_path(&path, project, ".claude/settings.local.json")) == 0)
		error = merge_file(perm, path.ptr, files, untrusted);
	if (error == 0)
		error = merge_file(perm, managed && *managed ? managed : MANAGED_DEFAULT, files, 0);
	docket_buf_dispose(&path);
	if (error == 0 && mode && *mode && json_object_set_new(perm, "defaultMode", json_string(mode)) < 0)
		error = docket_error_set_oom();
	for (i = 0; lists[i]; i++)
		if (json_array_size(json_object_get(perm, lists[i])) == 0)
			json_object_del(perm, lists[i]);
	if (error < 0 || !(*out = json_pack("{so}", "permissions", perm))) {
		if (error == 0)
			error = docket_error_set_oom();
		return error;
	}
	return 0;
}

/* ---- integrate ---- */

int docket_integrate_command(char **out, docket_client client, const docket_integrate_options *opts)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error;

	if (!opts->docket_path || opts->docket_path[0] != '/' || !opts->ledger_path ||
	    opts->ledger_path[0] != '/')
		return docket_error_set(DOCKET_EINVALID, "the docket and ledger paths must be absolute");
	if ((error = hook_shell_quote(&b, opts->docket_path)) == 0 &&
	    (error = docket_buf_puts(&b, " -L ")) == 0 &&
	    (error = hook_shell_quote(&b, opts->ledger_path)) == 0 &&
	    (error = docket_buf_printf(&b, " hook %s", docket_client_name(client))) == 0 &&
	    opts->policy && (error = docket_buf_puts(&b, " --enforce --policy ")) == 0)
		error = hook_shell_quote(&b, opts->policy);
	if (error < 0) {
		docket_buf_dispose(&b);
		return error;
	}
	*out = b.ptr;
	return 0;
}

/* A hook handler docket wrote: its command runs `... hook CLIENT`. */
static int is_ours(const json_t *handler, const char *marker)
{
	const json_t *c = json_object_get(handler, "command");
	const char *s = json_is_string(c) ? json_string_value(c) : NULL;
	const char *m = s ? strstr(s, marker) : NULL;

	return m && (m[strlen(marker)] == '\0' || m[strlen(marker)] == ' ') && strstr(s, "docket");
}

int hook_is_ours(const json_t *handler, docket_client client)
{
	return is_ours(handler, client == DOCKET_CLIENT_CODEX ? " hook codex" : MARKER);
}

/* Remove docket's handlers from hooks[event]; drop what becomes empty. */
static void remove_ours(json_t *hooks, const char *event, docket_client client)
{
	json_t *groups = json_object_get(hooks, event);
	size_t g, i;

	if (!json_is_array(groups))
		return;
	for (g = json_array_size(groups); g-- > 0;) {
		json_t *list = json_object_get(json_array_get(groups, g), "hooks");
		size_t before = json_array_size(list);

		for (i = json_array_size(list); i-- > 0;)
			if (hook_is_ours(json_array_get(list, i), client))
				json_array_remove(list, i);
		if (before > 0 && json_array_size(list) == 0)
			json_array_remove(groups, g);
	}
	if (json_array_size(groups) == 0)
		json_object_del(hooks, event);
}

static int is_tool_event(const char *event)
{
	return strstr(event, "Tool") != NULL || strncmp(event, "Permission", 10) == 0;
}

int hook_merge(json_t **out, json_t *settings, const docket_integrate_options *opts,
	       const hook_layout *layout)
{
	char *command = NULL;
	json_t *hooks;
	size_t i;
	int error = 0;

	if (!json_is_object(settings)) {
		json_decref(settings);
		return docket_error_set(DOCKET_EINVALID, "the settings file is not a JSON object");
	}
	hooks = json_object_get(settings, "hooks");
	if (hooks && !json_is_object(hooks)) {
		json_decref(settings);
		return docket_error_set(DOCKET_EINVALID, "\"hooks\" in the settings file is not an object");
	}
	if (!hooks && (json_object_set_new(settings, "hooks", json_object()) < 0 ||
		       !(hooks = json_object_get(settings, "hooks")))) {
		error = docket_error_set_oom();
		goto done;
	}
	for (i = 0; layout->events[i]; i++)
		remove_ours(hooks, layout->events[i], layout->client);
	if (!opts->uninstall && (error = docket_integrate_command(&command, layout->client, opts)) == 0) {
		for (i = 0; layout->events[i] && error == 0; i++) {
			const char *ev = layout->events[i];
			json_t *groups = json_object_get(hooks, ev), *group;
			int tool = is_tool_event(ev);

			if (!groups && (json_object_set_new(hooks, ev, json_array()) < 0 ||
					!(groups = json_object_get(hooks, ev)))) {
				error = docket_error_set_oom();
				break;
			}
			if (!json_is_array(groups)) {
				error = docket_error_set(DOCKET_EINVALID, "hooks.%s in the settings file is not an array", ev);
				break;
			}
			group = tool && layout->matcher
				? json_pack("{ss s[{ss ss si}]}", "matcher", layout->matcher, "hooks", "type",
					    "command", "command", command, "timeout", layout->tool_timeout)
				: json_pack("{s[{ss ss si}]}", "hooks", "type", "command", "command", command,
					    "timeout", tool ? layout->tool_timeout : layout->other_timeout);
			if (!group || json_array_append_new(groups, group) < 0)
				error = docket_error_set_oom();
		}
	}
	if (error == 0 && json_object_size(hooks) == 0)
		json_object_del(settings, "hooks");
done:
	docket_free(command);
	if (error < 0) {
		json_decref(settings);
		return error;
	}
	*out = settings;
	return 0;
}

int docket_integrate_claude(json_t **out, json_t *settings, const docket_integrate_options *opts)
{
	static const hook_layout claude = { DOCKET_CLIENT_CLAUDE, hook_claude_events, "*", 30, 60 };

	return hook_merge(out, settings, opts, &claude);
}
