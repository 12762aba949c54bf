/* SPDX-License-Identifier: Apache-2.0 */
/*
 * codex.c: Codex CLI rollout lines -> what happened (docs/import.md).
 *
 * A rollout line is {"timestamp","type","payload"} with type session_meta,
 * turn_context, response_item, event_msg or compacted; the oldest rollouts
 * (before the wrapper existed) put a bare {"id","timestamp",...} first and
 * response items unwrapped after it, which is read too.
 *
 *   session_meta                     session.opened (first one only)
 *   turn_context                     policy.revised (format codex) when
 *                                    approval_policy / sandbox_policy change
 *   function_call, custom_tool_call,
 *   local_shell_call                 tool.intent (canonical tool and args)
 *   *_output                         the call's outcome (tools.c parses exit
 *                                    codes; fixed texts are user rejections)
 *   event_msg exec/apply_patch_approval_request   approval.requested
 *   event_msg turn_aborted           open calls end cancelled
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/tool.h"
#include "util/json.h"

typedef struct codex_state {
	size_t session;
	int has_session;
	char turn[IMP_ID_MAX + 1];   /* current turn id, "" if the version has none */
	char *cwd;                   /* working directory of the current turn */
} codex_state;

static int codex_init(void **out)
{
	codex_state *s = docket_calloc(1, sizeof(*s));

	if (!s)
		return docket_error_set_oom();
	*out = s;
	return 0;
}

static void codex_free(void *state)
{
	codex_state *s = state;

	if (!s)
		return;
	docket_free(s->cwd);
	docket_free(s);
}

/* ---- session_meta ---- */

static json_t *meta_labels(const json_t *meta)
{
	static const char *const keys[] = { "originator", "source", "model_provider", NULL };
	static const char *const git_keys[] = { "branch", "commit_hash", "repository_url", NULL };
	const json_t *git = imp_obj(meta, "git");
	json_t *labels = json_object();
	char name[32];
	size_t i;

	if (!labels)
		return NULL;
	for (i = 0; keys[i]; i++)
		if (imp_set_str(labels, keys[i], imp_str(meta, keys[i])) < 0)
			goto fail;
	for (i = 0; git_keys[i]; i++) {
		snprintf(name, sizeof(name), "git.%s", git_keys[i]);
		if (imp_set_str(labels, name, imp_str(git, git_keys[i])) < 0)
			goto fail;
	}
	if (imp_set_str(labels, "import.format", "codex") < 0)
		goto fail;
	return labels;
fail:
	json_decref(labels);
	return NULL;
}

static int on_meta(imp_ctx *c, codex_state *s, const json_t *meta)
{
	const char *id = imp_str(meta, "id"), *version = imp_str(meta, "cli_version");
	const char *cwd = imp_str(meta, "cwd");
	json_t *fields;
	char runtime[96];
	int rc;

	if (s->has_session)
		return 0;  /* a resumed or forked rollout repeats it: the first one counts */
	if (!id) {
		imp_problem(c, 0, "session_meta without an id");
		return 0;
	}
	if (version && imp_major_version(version) != 0)
		imp_problem(c, 1, "unknown Codex version %.32s (known: 0.x)", version);
	snprintf(runtime, sizeof(runtime), "codex%s%.64s", version ? "/" : "", version ? version : "");
	if (!(fields = json_object()) || imp_set_str(fields, "runtime", runtime) < 0 ||
	    imp_set_str(fields, "platform", imp_platform_of(cwd)) < 0 ||
	    imp_set_str(fields, "cwd", cwd) < 0 ||
	    imp_set(fields, "labels", meta_labels(meta)) < 0) {
		json_decref(fields);
		return docket_error_set_oom();
	}
	if ((rc = imp_session_open(c, id, fields, &s->session)) != 0)
		return rc < 0 ? rc : 0;
	s->has_session = 1;
	if (cwd && !s->cwd && !(s->cwd = docket_strdup(cwd)))
		return docket_error_set_oom();
	return 0;
}

static int need_session(imp_ctx *c, const codex_state *s, const char *what)
{
	if (s->has_session)
		return 1;
	imp_problem(c, 0, "%s before session_meta", what);
	return 0;
}

/* ---- turn_context ---- */

static int set_turn(codex_state *s, const char *turn)
{
	size_t len = turn ? strlen(turn) : 0;

	if (len == 0 || len > IMP_ID_MAX)
		return 0;
	memcpy(s->turn, turn, len + 1);
	return 0;
}

/* The settings' field that is not what Codex writes, or NULL: an
 * approval_policy is a string, a sandbox_policy a string, {"type": string}
 * or (before 0.4x) {"mode": string}. */
static const char *settings_malformed(const json_t *tc)
{
	const json_t *a = json_object_get(tc, "approval_policy"), *sb = json_object_get(tc, "sandbox_policy");

	if (a && !json_is_null(a) && !json_is_string(a))
		return "approval_policy";
	if (sb && !json_is_null(sb) && !json_is_string(sb) && !json_is_string(json_object_get(sb, "type")) &&
	    !json_is_string(json_object_get(sb, "mode")))
		return "sandbox_policy";
	return NULL;
}

static int on_turn_context(imp_ctx *c, codex_state *s, const json_t *tc)
{
	static const char *const keys[] = { "approval_policy", "sandbox_policy", "network", NULL };
	const char *cwd = imp_str(tc, "cwd"), *approval = imp_str(tc, "approval_policy");
	const char *bad = settings_malformed(tc);
	json_t *policy;
	size_t i;
	int any = 0;

	if (!need_session(c, s, "turn_context"))
		return 0;
	set_turn(s, imp_str(tc, "turn_id"));
	if (cwd && (!s->cwd || strcmp(cwd, s->cwd) != 0)) {
		docket_free(s->cwd);
		if (!(s->cwd = docket_strdup(cwd)))
			return docket_error_set_oom();
	}
	if (bad) {
		imp_problem(c, 0, "turn_context: %s is not a Codex setting; the turn's settings are not recorded", bad);
		return 0;
	}
	if (!(policy = json_object()))
		return docket_error_set_oom();
	for (i = 0; keys[i]; i++) {
		const json_t *v = json_object_get(tc, keys[i]);

		if (!v || json_is_null(v))
			continue;
		any = 1;
		if (imp_set(policy, keys[i], json_deep_copy(v)) < 0) {
			json_decref(policy);
			return docket_error_set_oom();
		}
	}
	if (!any) {
		json_decref(policy);
		return 0;
	}
	return imp_policy(c, s->session, "codex", policy, approval && strcmp(approval, "never") == 0);
}

/* ---- calls ---- */

/* Escalation and placement fields of a shell call, copied onto `dst`. */
static int shell_extras(json_t *dst, const json_t *src, const char *cwd)
{
	const char *wd = imp_str(src, "workdir");
	const json_t *t = json_object_get(src, "timeout_ms");
	const json_t *pr = json_object_get(src, "prefix_rule");
	const char *sp = imp_str(src, "sandbox_permissions");

	if (!wd)
		wd = imp_str(src, "cwd");
	if (imp_set_str(dst, "cwd", wd ? wd : cwd) < 0 ||
	    (json_is_integer(t) && json_integer_value(t) >= 0 &&
	     imp_set(dst, "timeout_ms", json_integer(json_integer_value(t))) < 0))
		return -1;
	if (!sp && json_is_true(json_object_get(src, "with_escalated_permissions")))
		sp = "require_escalated";  /* the 0.60 wire form */
	if (imp_set_str(dst, "sandbox_permissions", sp) < 0 ||
	    imp_set_str(dst, "justification", imp_str(src, "justification")) < 0 ||
	    (json_is_array(pr) && imp_set(dst, "prefix_rule", json_deep_copy(pr)) < 0))
		return -1;
	return 0;
}

/* "apply_patch <<'EOF' ... *** Begin Patch" run through a shell. */
static int is_patch_script(const char *script)
{
	while (script && (*script == ' ' || *script == '\n' || *script == '\t'))
		script++;
	return script && (strncmp(script, "apply_patch", 11) == 0 || strncmp(script, "applypatch", 10) == 0) &&
	       strstr(script, "*** Begin Patch") != NULL;
}

typedef struct mapped {
	const char *tool;
	json_t *args;
} mapped;

/* A shell call given as argv (shell, local_shell_call). */
static int map_argv(mapped *m, const json_t *argv, const json_t *src, const char *cwd)
{
	const char *a0 = json_string_value(json_array_get(argv, 0));
	const char *a1 = json_string_value(json_array_get(argv, 1));
	const char *script = json_string_value(json_array_get(argv, 2));

	if (a0 && a1 && json_array_size(argv) == 2 &&
	    (strcmp(a0, "apply_patch") == 0 || strcmp(a0, "applypatch") == 0)) {
		m->tool = DOCKET_TOOL_APPLY_PATCH;
		m->args = imp_patch_args(a1);
		return m->args ? 0 : docket_error_set_oom();
	}
	if (json_array_size(argv) == 3 && is_patch_script(script)) {
		m->tool = DOCKET_TOOL_APPLY_PATCH;
		m->args = imp_patch_args(script);
		return m->args ? 0 : docket_error_set_oom();
	}
	m->tool = DOCKET_TOOL_SHELL;
	if (!(m->args = json_object()) || imp_set(m->args, "command", json_deep_copy(argv)) < 0 ||
	    shell_extras(m->args, src, cwd) < 0)
		return docket_error_set_oom();
	return 0;
}

/* A shell call given as one script (shell_command, exec_command). */
static int map_script(mapped *m, const char *shell, const char *flag, const char *script,
		      const json_t *src, const char *cwd)
{
	if (is_patch_script(script)) {
		m->tool = DOCKET_TOOL_APPLY_PATCH;
		m->args = imp_patch_args(script);
		return m->args ? 0 : docket_error_set_oom();
	}
	m->tool = DOCKET_TOOL_SHELL;
	if (!(m->args = imp_shell_script(shell, flag, script)) || shell_extras(m->args, src, cwd) < 0)
		return docket_error_set_oom();
	return 0;
}

static int map_function(mapped *m, const char *name, const json_t *a, const char *cwd)
{
	const json_t *cmd = json_object_get(a, "command");
	const char *shell;

	if (a && (strcmp(name, "shell") == 0 || strcmp(name, "container.exec") == 0) &&
	    json_is_array(cmd))
		return map_argv(m, cmd, a, cwd);
	if (a && strcmp(name, "shell_command") == 0 && json_is_string(cmd))
		return map_script(m, "bash", "-lc", json_string_value(cmd), a, cwd);
	if (a && strcmp(name, "exec_command") == 0 && imp_str(a, "cmd")) {
		shell = imp_str(a, "shell");
		return map_script(m, shell ? shell : "bash",
				  json_is_false(json_object_get(a, "login")) ? "-c" : "-lc",
				  imp_str(a, "cmd"), a, cwd);
	}
	if (a && strcmp(name, "apply_patch") == 0 && imp_str(a, "input")) {
		m->tool = DOCKET_TOOL_APPLY_PATCH;
		m->args = imp_patch_args(imp_str(a, "input"));
		return m->args ? 0 : docket_error_set_oom();
	}
	if ((m->args = imp_mcp_args(name, a))) {
		m->tool = DOCKET_TOOL_MCP;
		return 0;
	}
	m->tool = name;
	m->args = a ? json_deep_copy(a) : json_object();
	return m->args ? 0 : docket_error_set_oom();
}

int imp_codex_hook_tool(const char **tool, json_t **args, const char *name, const json_t *input,
			const char *cwd)
{
	const char *cmd = imp_str(input, "command");
	mapped m = { NULL, NULL };
	int error;

	if (cmd && strcmp(name, "Bash") == 0)
		error = map_script(&m, "bash", "-lc", cmd, input, cwd);
	else if (cmd && strcmp(name, "apply_patch") == 0)
		error = (m.tool = DOCKET_TOOL_APPLY_PATCH, m.args = imp_patch_args(cmd)) ? 0 : docket_error_set_oom();
	else
		error = map_function(&m, name, json_is_object(input) ? input : NULL, cwd);
	if (error < 0) {
		json_decref(m.args);
		return error;
	}
	*tool = m.tool;
	*args = m.args;
	return 0;
}

static int on_function_call(imp_ctx *c, codex_state *s, const json_t *p)
{
	const char *name = imp_str(p, "name"), *raw = imp_str(p, "arguments");
	const char *id = imp_str(p, "call_id");
	mapped m = { NULL, NULL };
	json_t *a = NULL;
	int error;

	if (!name || !id) {
		imp_problem(c, 0, "function_call without name or call_id");
		return 0;
	}
	if (raw) {
		json_error_t jerr;

		if (docket_json_load(&a, raw, strlen(raw), 0, &jerr) == DOCKET_ENOMEM)
			return DOCKET_ENOMEM;
	}
	if (a && !json_is_object(a)) {
		json_decref(a);
		a = NULL;
	}
	if (!a && raw) {
		/* arguments that are not a JSON object are kept as they are */
		if ((error = map_function(&m, name, NULL, s->cwd)) < 0 ||
		    imp_set(m.args, "arguments", json_string(raw)) < 0) {
			json_decref(m.args);
			return error < 0 ? error : docket_error_set_oom();
		}
	} else if ((error = map_function(&m, name, a, s->cwd)) < 0) {
		json_decref(a);
		json_decref(m.args);
		return error;
	}
	error = imp_intent(c, s->session, id, m.tool, m.args, s->turn, imp_str(a, "justification"));
	json_decref(a);
	return error;
}

static int on_custom_call(imp_ctx *c, codex_state *s, const json_t *p)
{
	const char *name = imp_str(p, "name"), *input = imp_str(p, "input");
	const char *id = imp_str(p, "call_id");
	json_t *args;

	if (!name || !id) {
		imp_problem(c, 0, "custom_tool_call without name or call_id");
		return 0;
	}
	if (strcmp(name, "apply_patch") == 0) {
		args = imp_patch_args(input);
	} else if ((args = json_object()) && imp_set_str(args, "input", input) < 0) {
		json_decref(args);
		args = NULL;
	}
	if (!args)
		return docket_error_set_oom();
	return imp_intent(c, s->session, id, name, args, s->turn, NULL);
}

static int on_local_shell(imp_ctx *c, codex_state *s, const json_t *p)
{
	const json_t *action = imp_obj(p, "action"), *argv = json_object_get(action, "command");
	const char *id = imp_str(p, "call_id");
	const char *wd = imp_str(action, "working_directory");
	mapped m = { NULL, NULL };
	int error;

	if (!id)
		id = imp_str(p, "id");
	if (!id || !json_is_array(argv)) {
		imp_problem(c, 0, "local_shell_call without call_id or action.command");
		return 0;
	}
	if ((error = map_argv(&m, argv, action, wd ? wd : s->cwd)) < 0) {
		json_decref(m.args);
		return error;
	}
	return imp_intent(c, s->session, id, m.tool, m.args, s->turn, NULL);
}

/* ---- outputs ---- */

/* The texts Codex writes when the user answered an approval prompt with no. */
static int is_rejection(const char *t, size_t len)
{
	return imp_starts(t, len, "exec command rejected by user") ||
	       imp_starts(t, len, "patch rejected by user");
}

/* Codex's output for a call of an interrupted turn: "aborted", "aborted by user". */
static int is_aborted(const char *t, size_t len)
{
	while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == ' ' || t[len - 1] == '.'))
		len--;
	return (len == 7 && (memcmp(t, "aborted", 7) == 0 || memcmp(t, "Aborted", 7) == 0)) ||
	       (len == 15 && (memcmp(t, "aborted by user", 15) == 0 || memcmp(t, "Aborted by user", 15) == 0));
}

/* 1 when `t` holds `needle` (length-bounded: outputs need not be NUL-terminated at len). */
static int has_text(const char *t, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = 0; n <= len && i <= len - n; i++)
		if (memcmp(t + i, needle, n) == 0)
			return 1;
	return 0;
}

/*
 * 0.171 refuses a call before it runs with the output `exec_command failed:
 * CreateProcess { message: "Rejected(...)" }` (quotes escaped): the user said no
 * ("rejected by user"), or the approval policy or a rule refused it without
 * asking ("approval required by policy, but AskForApproval is set to
 * Never", a forbidden prefix rule). IMP_OK when it is no such refusal.
 */
static int refusal_kind(const char *t, size_t len)
{
	if (!imp_starts(t, len, "exec_command failed: CreateProcess") || !has_text(t, len, "Rejected("))
		return IMP_OK;
	return has_text(t, len, "rejected by user") ? IMP_USER_DENIED : IMP_POLICY_DENIED;
}

/* {"output":"...","metadata":{"exit_code":N,"duration_seconds":F}}: *out, or NULL; DOCKET_ENOMEM */
static int wrapped_output(json_t **out, const char *t, size_t len)
{
	json_error_t jerr;
	json_t *w = NULL;

	*out = NULL;
	if (!imp_starts(t, len, "{\"output\""))
		return 0;
	if (docket_json_load(&w, t, len, 0, &jerr) == DOCKET_ENOMEM)
		return DOCKET_ENOMEM;
	if (w && (!imp_str(w, "output") || !imp_obj(w, "metadata"))) {
		json_decref(w);
		return 0;
	}
	*out = w;
	return 0;
}

static void classify_text(imp_outcome *o, const char *t, size_t len)
{
	o->output = t;
	o->output_len = len;
	if (imp_exit_code(t, len, &o->exit_code))
		o->has_exit = 1;
	o->duration_ms = imp_wall_ms(t, len);
	if (imp_starts(t, len, "failed in sandbox")) {
		o->kind = IMP_ERROR;
		o->error = "sandbox denied";
	} else if (imp_starts(t, len, "apply_patch verification failed")) {
		o->kind = IMP_ERROR;
		o->error = "apply_patch verification failed";
	} else if (imp_starts(t, len, "error: ") || imp_starts(t, len, "err: ") ||
		   imp_starts(t, len, "exec_command failed")) {
		o->kind = IMP_ERROR;
	} else if (imp_starts(t, len, "command timed out") || imp_starts(t, len, "timed out")) {
		o->kind = IMP_TIMEOUT;
	} else if (o->has_exit) {
		o->kind = o->exit_code == 0 ? IMP_OK : IMP_ERROR;
	} else {
		o->kind = IMP_OK;
	}
}

static int classify_wrapped(imp_outcome *o, const json_t *w)
{
	const json_t *md = imp_obj(w, "metadata"), *code = json_object_get(md, "exit_code");
	const json_t *dur = json_object_get(md, "duration_seconds");
	const char *t = imp_str(w, "output");

	classify_text(o, t, strlen(t));
	o->duration_ms = -1;
	if (json_is_integer(code)) {
		o->has_exit = 1;
		o->exit_code = json_integer_value(code);
		o->kind = o->exit_code == 0 ? IMP_OK : IMP_ERROR;
	}
	if (json_is_number(dur) && json_number_value(dur) >= 0 && json_number_value(dur) < 1e9)
		o->duration_ms = (int64_t)(json_number_value(dur) * 1000.0 + 0.5);
	return 0;
}

/*
 * Output given as an object: the newer wire form {"content": "...",
 * "success": bool}, and what a hook's tool_response may hold: an exit code
 * (exit_code, exitCode, metadata.exit_code), MCP's isError, an error.
 */
static void classify_object(imp_outcome *o, const json_t *out)
{
	static const char *const texts[] = { "content", "output", "stdout", "text", NULL };
	const json_t *ok = json_object_get(out, "success"), *code = json_object_get(out, "exit_code");
	const char *t = NULL;
	size_t i;

	for (i = 0; texts[i] && !t; i++)
		t = imp_str(out, texts[i]);
	classify_text(o, t ? t : "", t ? strlen(t) : 0);
	if (!json_is_integer(code))
		code = json_object_get(out, "exitCode");
	if (!json_is_integer(code))
		code = json_object_get(imp_obj(out, "metadata"), "exit_code");
	if (json_is_integer(code)) {
		o->has_exit = 1;
		o->exit_code = json_integer_value(code);
		o->kind = o->exit_code == 0 ? IMP_OK : IMP_ERROR;
	}
	if (json_is_false(ok) || json_is_true(json_object_get(out, "isError")) ||
	    json_is_true(json_object_get(out, "is_error")) ||
	    (json_object_get(out, "error") && !json_is_null(json_object_get(out, "error"))))
		o->kind = IMP_ERROR;
}

/*
 * A call a PreToolUse hook blocked leaves only its output (0.169): the call
 * itself is recorded from it. The text ends in "Command: <script>" (0.171),
 * which gives a shell call; otherwise the tool name is "unknown".
 */
static int blocked_call(imp_ctx *c, codex_state *s, const char *id, const char *text)
{
	const char *cmd = text ? strstr(text, " Command: ") : NULL, *next;
	size_t i;
	json_t *args;

	if (!s->has_session || !imp_id_ok(id) || imp_map_get(&c->call_ix, id, &i))
		return 0;
	while (cmd && (next = strstr(cmd + 1, " Command: ")))
		cmd = next;
	if (cmd && (args = imp_shell_script("bash", "-lc", cmd + 10)))
		return imp_intent(c, s->session, id, "shell", args, s->turn, NULL);
	if (!(args = json_pack("{sb}", "blocked_before_the_call_was_written", 1)))
		return docket_error_set_oom();
	return imp_intent(c, s->session, id, "unknown", args, s->turn, NULL);
}

/*
 * What an output says about its call (*o; *w holds the parsed wrapper the
 * outcome's texts point into, for the caller to free). Shared by the rollout
 * and by a live hook's tool_response (docket_import_codex_outcome).
 */
static int classify_output(imp_outcome *o, json_t **w, const json_t *out)
{
	const char *t;
	size_t len;

	*w = NULL;
	if (json_is_object(out)) {
		classify_object(o, out);
		return 0;
	}
	t = json_is_string(out) ? json_string_value(out) : "";
	len = json_is_string(out) ? json_string_length(out) : 0;
	o->output = t;
	o->output_len = len;
	if (imp_starts(t, len, "Command blocked by PreToolUse hook")) {
		o->kind = IMP_POLICY_DENIED;
		o->error = "blocked by a PreToolUse hook";
	} else if (is_rejection(t, len) || refusal_kind(t, len) == IMP_USER_DENIED) {
		o->kind = IMP_USER_DENIED;
		o->error = "rejected by the user";
	} else if (refusal_kind(t, len) == IMP_POLICY_DENIED) {
		o->kind = IMP_POLICY_DENIED;
		o->error = "refused by Codex without running it (approval policy or rule)";
	} else if (is_aborted(t, len)) {
		/* an interrupted turn: a call still waiting for its approval (or for
		 * its turn) never ran; the open request settles aborted */
		o->kind = IMP_CANCELLED;
		o->error = "aborted";
	} else {
		int error = wrapped_output(w, t, len);

		if (error < 0)
			return error;
		if (*w)
			classify_wrapped(o, *w);
		else
			classify_text(o, t, len);
	}
	return 0;
}

static int on_output(imp_ctx *c, codex_state *s, const json_t *p)
{
	const json_t *out = json_object_get(p, "output");
	const char *id = imp_str(p, "call_id");
	imp_outcome o = IMP_OUTCOME_INIT(IMP_OK);
	json_t *w = NULL;
	int error;

	if (!id || !out) {
		imp_problem(c, 0, "tool output without call_id or output");
		return 0;
	}
	if ((error = classify_output(&o, &w, out)) < 0)
		return error;
	if (json_is_string(out) && imp_starts(o.output, o.output_len, "Command blocked by PreToolUse hook") &&
	    (error = blocked_call(c, s, id, json_string_value(out))) < 0) {
		json_decref(w);
		return error;
	}
	error = imp_outcome_of(c, id, &o);
	json_decref(w);
	return error;
}

static void outcome_out(docket_import_outcome *out, const imp_outcome *o)
{
	memset(out, 0, sizeof(*out));
	switch (o->kind) {
	case IMP_OK: out->status = "ok"; out->ran = 1; break;
	case IMP_ERROR: out->status = "error"; out->ran = 1; break;
	case IMP_TIMEOUT: out->status = "timeout"; out->ran = 1; break;
	case IMP_USER_DENIED:
	case IMP_POLICY_DENIED: out->status = "denied"; break;
	case IMP_CANCELLED: out->status = "cancelled"; out->ran = o->ran; break;
	}
	out->user_denied = o->kind == IMP_USER_DENIED;
	out->has_exit = o->has_exit;
	out->exit_code = o->exit_code;
	out->error = o->error;
	out->duration_ms = o->duration_ms;
}

int docket_import_codex_outcome(docket_import_outcome *out, const json_t *response)
{
	imp_outcome o = IMP_OUTCOME_INIT(IMP_OK);
	json_t *w = NULL;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = classify_output(&o, &w, response)) < 0)
		return error;
	json_decref(w);  /* only o's texts point into it, and they are not handed out */
	outcome_out(out, &o);
	return 0;
}

/* ---- a live call's outcome from the rollout ---- */

#define ROLLOUT_TAIL ((size_t)1 << 20)

/* The last ROLLOUT_TAIL bytes of `path`, from a line start. */
static int read_tail(docket_buf *out, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), error = 0;
	struct stat st;
	off_t from;
	ssize_t got;
	char *nl;

	if (fd < 0)
		return docket_error_set(errno == ENOENT ? DOCKET_ENOTFOUND : DOCKET_ESTORAGE, "%s: %s", path,
					strerror(errno));
	if (fstat(fd, &st) != 0) {
		error = docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(errno));
		goto done;
	}
	from = st.st_size > (off_t)ROLLOUT_TAIL ? st.st_size - (off_t)ROLLOUT_TAIL : 0;
	if ((error = docket_buf_reserve(out, ROLLOUT_TAIL + 1)) < 0)
		goto done;
	got = pread(fd, out->ptr, ROLLOUT_TAIL, from);
	if (got < 0) {
		error = docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(errno));
		goto done;
	}
	out->len = (size_t)got;
	out->ptr[out->len] = '\0';
	if (from > 0 && (nl = memchr(out->ptr, '\n', out->len))) {
		/* the first line is cut: drop it */
		size_t skip = (size_t)(nl - out->ptr) + 1;

		memmove(out->ptr, out->ptr + skip, out->len - skip + 1);
		out->len -= skip;
	}
done:
	close(fd);
	return error;
}

/* What one rollout line says about call `id`: 2 an output, 1 an exit code, 0 nothing. */
static int line_outcome(imp_outcome *o, json_t **w, const json_t *line, const char *id)
{
	const json_t *p = imp_obj(line, "payload"), *item = imp_obj(p, "item"), *code;
	const char *type = imp_str(p, "type");

	if (!type)
		return 0;
	if ((strcmp(type, "function_call_output") == 0 || strcmp(type, "custom_tool_call_output") == 0) &&
	    imp_str(p, "call_id") && strcmp(imp_str(p, "call_id"), id) == 0 && json_object_get(p, "output"))
		return classify_output(o, w, json_object_get(p, "output")) < 0 ? -1 : 2;
	code = json_object_get(item, "exit_code");
	if (strcmp(type, "item_completed") == 0 && imp_str(item, "id") && strcmp(imp_str(item, "id"), id) == 0 &&
	    json_is_integer(code)) {
		o->has_exit = 1;
		o->exit_code = json_integer_value(code);
		o->kind = o->exit_code == 0 ? IMP_OK : IMP_ERROR;
		return 1;
	}
	return 0;
}

int docket_import_codex_rollout_outcome(docket_import_outcome *out, const char *path, const char *call_id)
{
	docket_buf tail = DOCKET_BUF_INIT;
	imp_outcome best = IMP_OUTCOME_INIT(IMP_OK);
	size_t pos = 0, idlen = call_id ? strlen(call_id) : 0;
	int found = 0, error;

	memset(out, 0, sizeof(*out));
	if (idlen == 0)
		return docket_error_set(DOCKET_ENOTFOUND, "no call id");
	if ((error = read_tail(&tail, path)) < 0)
		return error;
	while (pos < tail.len && found < 2) {
		const char *s = tail.ptr + pos, *nl = memchr(s, '\n', tail.len - pos);
		size_t n = nl ? (size_t)(nl - s) : tail.len - pos;
		imp_outcome o = IMP_OUTCOME_INIT(IMP_OK);
		json_error_t jerr;
		json_t *line = NULL, *w = NULL;
		int got;

		pos += n + 1;
		if (!memmem(s, n, call_id, idlen) || docket_json_load(&line, s, n, 0, &jerr) < 0) {
			docket_error_clear();
			continue;
		}
		got = line_outcome(&o, &w, line, call_id);
		if (got < 0) {
			error = docket_error_set_oom();
		} else if (got > found) {
			best = o;
			best.output = NULL;  /* points into `line`: not handed out */
			best.output_len = 0;
			found = got;
		}
		json_decref(w);
		json_decref(line);
		if (error < 0)
			break;
	}
	docket_buf_dispose(&tail);
	if (error < 0)
		return error;
	if (!found)
		return docket_error_set(DOCKET_ENOTFOUND, "%s: no outcome of %s yet", path, call_id);
	outcome_out(out, &best);
	return 0;
}

/* ---- event_msg ---- */

static int on_event(imp_ctx *c, codex_state *s, const json_t *p)
{
	const char *type = imp_str(p, "type");
	char why[96];

	if (!type)
		return 0;
	if (strcmp(type, "task_started") == 0 || strcmp(type, "turn_started") == 0)
		return set_turn(s, imp_str(p, "turn_id"));
	if (strcmp(type, "exec_approval_request") == 0 ||
	    strcmp(type, "apply_patch_approval_request") == 0) {
		const char *reason = imp_str(p, "reason");

		return imp_approval_asked(c, imp_str(p, "call_id"), reason);
	}
	if (strcmp(type, "turn_aborted") == 0 && s->has_session) {
		snprintf(why, sizeof(why), "turn aborted: %.64s",
			 imp_str(p, "reason") ? imp_str(p, "reason") : "unknown reason");
		return imp_cancel_open(c, s->session, why);
	}
	return 0;  /* token counts, messages, reasoning: not about tool calls */
}

/* ---- lines ---- */

static int on_item(imp_ctx *c, codex_state *s, const json_t *p)
{
	static const char *const ignored[] = {
		"message", "reasoning", "ghost_snapshot", "web_search_call", "compaction",
		"compaction_summary", "other", NULL
	};
	const char *type = imp_str(p, "type");
	size_t i;

	if (!type) {
		imp_problem(c, 0, "response_item without a type");
		return 0;
	}
	if (strcmp(type, "function_call_output") == 0 || strcmp(type, "custom_tool_call_output") == 0)
		return on_output(c, s, p);
	if (strcmp(type, "function_call") == 0)
		return need_session(c, s, "function_call") ? on_function_call(c, s, p) : 0;
	if (strcmp(type, "custom_tool_call") == 0)
		return need_session(c, s, "custom_tool_call") ? on_custom_call(c, s, p) : 0;
	if (strcmp(type, "local_shell_call") == 0)
		return need_session(c, s, "local_shell_call") ? on_local_shell(c, s, p) : 0;
	for (i = 0; ignored[i]; i++)
		if (strcmp(type, ignored[i]) == 0)
			return 0;
	imp_problem(c, 1, "unknown response_item type \"%.40s\"", type);
	return 0;
}

static int codex_line(imp_ctx *c, json_t *obj)
{
	codex_state *s = c->fmt;
	const char *type = imp_str(obj, "type");
	const json_t *payload = imp_obj(obj, "payload");

	imp_set_time(c, imp_str(obj, "timestamp"));
	if (!type) {
		if (json_object_get(obj, "record_type"))
			return 0;  /* oldest rollouts: state snapshots */
		if (imp_str(obj, "id") && imp_str(obj, "timestamp"))
			return on_meta(c, s, obj);  /* oldest rollouts: the bare first line */
		imp_problem(c, 0, "line without a type");
		return 0;
	}
	if (strcmp(type, "session_meta") == 0 || strcmp(type, "turn_context") == 0 ||
	    strcmp(type, "response_item") == 0 || strcmp(type, "event_msg") == 0) {
		if (!payload) {
			imp_problem(c, 0, "%s without a payload object", type);
			return 0;
		}
		if (strcmp(type, "session_meta") == 0)
			return on_meta(c, s, payload);
		if (strcmp(type, "turn_context") == 0)
			return on_turn_context(c, s, payload);
		if (strcmp(type, "response_item") == 0)
			return on_item(c, s, payload);
		return on_event(c, s, payload);
	}
	if (strcmp(type, "compacted") == 0 || strcmp(type, "world_state") == 0 ||
	    strcmp(type, "token_usage_record") == 0)
		return 0;  /* 0.169: snapshots and token counts, nothing about calls */
	if (!payload && json_object_get(obj, "call_id"))
		return on_item(c, s, obj);  /* oldest rollouts: unwrapped response items */
	if (!payload && (strcmp(type, "message") == 0 || strcmp(type, "reasoning") == 0))
		return 0;
	imp_problem(c, 1, "unknown line type \"%.40s\"", type);
	return 0;
}

/* A rollout line: a wrapped line with a payload object, or the bare first line of the oldest. */
static int codex_sniff(const json_t *obj)
{
	static const char *const wrapped[] = { "session_meta", "turn_context", "response_item", "event_msg", NULL };
	const char *type = imp_str(obj, "type");
	size_t i;

	if (!type)
		return imp_str(obj, "id") && imp_str(obj, "timestamp") &&
		       (json_object_get(obj, "instructions") || imp_obj(obj, "git"));
	for (i = 0; wrapped[i]; i++)
		if (strcmp(type, wrapped[i]) == 0)
			return imp_obj(obj, "payload") != NULL && imp_str(obj, "timestamp") != NULL;
	return 0;
}

const imp_format_ops imp_codex_ops = { "codex", codex_init, codex_free, codex_line, codex_sniff };
