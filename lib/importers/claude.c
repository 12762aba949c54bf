/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claude.c: Claude Code transcript lines -> what happened (docs/import.md).
 *
 * A transcript line is a JSON object with a "type": user, assistant, system,
 * progress and attachment lines carry sessionId, cwd, version, gitBranch,
 * isSidechain (and agentId in subagent files); permission-mode lines carry a
 * mode change; the rest (summary, file-history-snapshot, queue-operation,
 * last-prompt, custom-title, agent-name) say nothing about tool calls.
 *
 *   first line of a session        session.opened (a sidechain or subagent
 *                                  line: session "<id>/agent-<agentId>" with
 *                                  parent "<id>")
 *   permissionMode change          policy.revised (format claude)
 *   assistant tool_use             tool.intent (canonical tool and args)
 *   user tool_result               the call's outcome; the fixed rejection
 *                                  texts are user or policy denials
 *   "[Request interrupted by user" the session's open calls end cancelled
 */
#include <stdio.h>
#include <string.h>

#include "import_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

#define SESSION_MAX (IMP_ID_MAX + 1)

typedef struct claude_state {
	char *early_session;  /* a permission mode seen before its session could open */
	char *early_mode;
} claude_state;

static int claude_init(void **out)
{
	claude_state *s = docket_calloc(1, sizeof(*s));

	if (!s)
		return docket_error_set_oom();
	*out = s;
	return 0;
}

static void claude_free(void *state)
{
	claude_state *s = state;

	if (!s)
		return;
	docket_free(s->early_session);
	docket_free(s->early_mode);
	docket_free(s);
}

/* ---- sessions and modes ---- */

static int never_asks(const char *mode)
{
	return strcmp(mode, "bypassPermissions") == 0 || strcmp(mode, "dontAsk") == 0;
}

static int apply_mode(imp_ctx *c, size_t session, const char *mode)
{
	json_t *policy = json_pack("{s{ss}}", "permissions", "defaultMode", mode);

	return imp_policy(c, session, "claude", policy, never_asks(mode));
}

/* A mode for a session that is not open yet waits for its first message line. */
static int remember_mode(claude_state *s, const char *session, const char *mode)
{
	docket_free(s->early_session);
	docket_free(s->early_mode);
	s->early_session = docket_strdup(session);
	s->early_mode = docket_strdup(mode);
	return s->early_session && s->early_mode ? 0 : docket_error_set_oom();
}

static json_t *session_fields(const json_t *line, const char *parent, const char *agent)
{
	const char *version = imp_str(line, "version"), *cwd = imp_str(line, "cwd");
	json_t *fields = json_object(), *labels = json_object();
	char runtime[96];

	snprintf(runtime, sizeof(runtime), "claude-code%s%.64s", version ? "/" : "",
		 version ? version : "");
	if (!fields || !labels || imp_set_str(fields, "runtime", runtime) < 0 ||
	    imp_set_str(fields, "platform", imp_platform_of(cwd)) < 0 ||
	    imp_set_str(fields, "cwd", cwd) < 0 || imp_set_str(fields, "parent", parent) < 0 ||
	    imp_set_str(labels, "git.branch", imp_str(line, "gitBranch")) < 0 ||
	    imp_set_str(labels, "agent_id", agent) < 0 ||
	    imp_set_str(labels, "import.format", "claude") < 0) {
		json_decref(fields);
		json_decref(labels);
		return NULL;
	}
	if (imp_set(fields, "labels", labels) < 0) {
		json_decref(fields);
		return NULL;
	}
	return fields;
}

/*
 * The session a message line belongs to, opened on first sight. Returns 0
 * and *out, 1 when the line has no usable session (counted), <0 on error.
 */
static int line_session(imp_ctx *c, claude_state *s, const json_t *line, size_t *out)
{
	const char *sid = imp_str(line, "sessionId"), *agent = imp_str(line, "agentId");
	const char *version = imp_str(line, "version");
	int side = json_is_true(json_object_get(line, "isSidechain"));
	char id[SESSION_MAX + 64];
	json_t *fields;
	int rc;

	if (!sid) {
		imp_problem(c, 0, "message line without a sessionId");
		return 1;
	}
	if (side)
		snprintf(id, sizeof(id), "%s/agent-%s", sid, agent ? agent : "sidechain");
	else
		snprintf(id, sizeof(id), "%s", sid);
	if (imp_session_find(c, id, out))
		return 0;
	if (version && imp_major_version(version) > 2)
		imp_problem(c, 1, "unknown Claude Code version %.32s (known: up to 2.x)", version);
	if (!(fields = session_fields(line, side ? sid : NULL, side ? agent : NULL)))
		return docket_error_set_oom();
	if ((rc = imp_session_open(c, id, fields, out)) != 0)
		return rc;
	if (s->early_session && strcmp(s->early_session, id) == 0) {
		rc = apply_mode(c, *out, s->early_mode);
		docket_free(s->early_session);
		s->early_session = NULL;
		return rc;
	}
	return 0;
}

static int on_mode_line(imp_ctx *c, claude_state *s, const json_t *line)
{
	const char *sid = imp_str(line, "sessionId"), *mode = imp_str(line, "permissionMode");
	size_t session;

	if (!sid || !mode) {
		imp_problem(c, 0, "permission-mode line without sessionId or permissionMode");
		return 0;
	}
	if (imp_session_find(c, sid, &session))
		return apply_mode(c, session, mode);
	return remember_mode(s, sid, mode);
}

/* ---- tools ---- */

/* {key: input[from]} plus the original tool name; NULL (no error) when absent. */
static json_t *one_field(const json_t *input, const char *from, const char *key,
			 const char *fallback, const char *name)
{
	const char *v = imp_str(input, from);
	json_t *args;

	if (!v)
		v = fallback;
	if (!v || !*v)
		return NULL;
	if (!(args = json_object()) || imp_set_str(args, key, v) < 0 ||
	    imp_set_str(args, "source_tool", name) < 0) {
		json_decref(args);
		return NULL;
	}
	return args;
}

static json_t *bash_args(const json_t *input, const char *cwd)
{
	const char *cmd = imp_str(input, "command");
	const json_t *t = json_object_get(input, "timeout");
	json_t *args;

	if (!cmd || !(args = imp_shell_script("bash", "-c", cmd)))
		return NULL;
	if (imp_set_str(args, "cwd", cwd) < 0 ||
	    (json_is_integer(t) && json_integer_value(t) >= 0 &&
	     imp_set(args, "timeout_ms", json_integer(json_integer_value(t))) < 0) ||
	    /* the call runs outside Claude Code's sandbox: an escalation (issue 26) */
	    (json_is_true(json_object_get(input, "dangerouslyDisableSandbox")) &&
	     imp_set(args, "dangerouslyDisableSandbox", json_true()) < 0)) {
		json_decref(args);
		return NULL;
	}
	return args;
}

/* Read: the file, and the lines read when the call names them (offset, limit). */
static json_t *read_args(const json_t *input, const char *name)
{
	static const char *const keys[] = { "offset", "limit" };
	json_t *args = one_field(input, "file_path", "path", NULL, name);

	for (size_t i = 0; args && i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *v = json_object_get(input, keys[i]);

		if (json_is_integer(v) && json_integer_value(v) >= 0 &&
		    imp_set(args, keys[i], json_integer(json_integer_value(v))) < 0) {
			json_decref(args);
			args = NULL;
		}
	}
	return args;
}

static json_t *search_args(const json_t *input, const char *cwd, const char *name)
{
	json_t *args = one_field(input, "path", "path", cwd, name);

	if (args && imp_set_str(args, "pattern", imp_str(input, "pattern")) < 0) {
		json_decref(args);
		return NULL;
	}
	return args;
}

/* The canonical tool of DESIGN §4 for a Claude Code tool, or NULL to keep it as it is. */
static const char *canonical(const char *name, const json_t *input, const char *cwd, json_t **args)
{
	*args = NULL;
	if (strcmp(name, "Bash") == 0)
		return (*args = bash_args(input, cwd)) ? "shell" : NULL;
	if (strcmp(name, "Edit") == 0 || strcmp(name, "MultiEdit") == 0 || strcmp(name, "Write") == 0)
		return (*args = one_field(input, "file_path", "path", NULL, name)) ? "write_file" : NULL;
	if (strcmp(name, "NotebookEdit") == 0)
		return (*args = one_field(input, "notebook_path", "path", NULL, name)) ? "write_file" : NULL;
	if (strcmp(name, "Read") == 0)
		return (*args = read_args(input, name)) ? "read_file" : NULL;
	if (strcmp(name, "LS") == 0)
		return (*args = one_field(input, "path", "path", cwd, name)) ? "read_file" : NULL;
	if (strcmp(name, "Grep") == 0 || strcmp(name, "Glob") == 0)
		return (*args = search_args(input, cwd, name)) ? "read_file" : NULL;
	if (strcmp(name, "WebFetch") == 0)
		return (*args = one_field(input, "url", "url", NULL, name)) ? "network" : NULL;
	if (strcmp(name, "WebSearch") == 0)
		return (*args = one_field(input, "query", "query", NULL, name)) ? "network" : NULL;
	if ((*args = imp_mcp_args(name, input)))
		return "mcp";
	return NULL;
}

int imp_claude_tool(const char **tool, json_t **args, const char *name, const json_t *input,
		    const char *cwd)
{
	if ((*tool = canonical(name, input, cwd, args)))
		return 0;
	*tool = name;
	if (json_is_object(input))
		*args = json_deep_copy(input);
	else if ((*args = json_object()) && input && imp_set(*args, "input", json_deep_copy(input)) < 0) {
		json_decref(*args);
		*args = NULL;
	}
	return *args ? 0 : docket_error_set_oom();
}

static int on_tool_use(imp_ctx *c, size_t session, const json_t *block, const char *cwd)
{
	const char *name = imp_str(block, "name"), *id = imp_str(block, "id");
	const char *tool;
	json_t *args;
	int error;

	if (!name || !id) {
		imp_problem(c, 0, "tool_use without id or name");
		return 0;
	}
	if ((error = imp_claude_tool(&tool, &args, name, json_object_get(block, "input"), cwd)) < 0)
		return error;
	return imp_intent(c, session, id, tool, args, NULL, NULL);
}

/* ---- results ---- */

/* The text of a tool_result: a string, or the text blocks of an array. */
static int result_text(docket_buf *out, const json_t *content)
{
	size_t i;
	int error = 0;

	if (json_is_string(content))
		return docket_buf_put(out, json_string_value(content), json_string_length(content));
	for (i = 0; i < json_array_size(content) && error == 0; i++) {
		const json_t *b = json_array_get(content, i);
		const char *type = imp_str(b, "type"), *t = imp_str(b, "text");

		if (i > 0)
			error = docket_buf_putc(out, '\n');
		if (error == 0 && t)
			error = docket_buf_put(out, t, json_string_length(json_object_get(b, "text")));
		else if (error == 0)
			error = docket_buf_printf(out, "[%s]", type ? type : "block");
	}
	return error;
}

static int is_interrupt(const char *t, size_t len)
{
	return imp_starts(t, len, "[Request interrupted by user");
}

/*
 * A headless run (claude -p) refuses what would need a prompt with these
 * texts (2.1.328: "... needs approval ..." in an error result, worded per
 * tool); a refused call never ran.
 */
static int headless_refusal(const char *t, size_t len, int is_error)
{
	size_t head = len < 400 ? len : 400;

	return imp_starts(t, len, "This command requires approval") ||
	       (imp_contains(t, head, "needs approval") &&
		(is_error || imp_contains(t, len, "Allowing runs the command as written"))) ||
	       (imp_starts(t, len, "Claude requested permissions to") &&
		imp_contains(t, head, "haven't granted it yet")) ||
	       imp_contains(t, head, "was blocked. For security, Claude Code may only");
}

/*
 * `never_asks`: the session's mode is bypassPermissions or dontAsk, where no
 * prompt is shown; a "doesn't want to proceed" result there is the user
 * pressing Esc (an interrupt), not a rejected prompt.
 */
static void classify(imp_outcome *o, const char *t, size_t len, int is_error, int never_asks)
{
	o->output = t;
	o->output_len = len;
	if (imp_exit_code(t, len, &o->exit_code))
		o->has_exit = 1;
	if ((imp_starts(t, len, "The user doesn't want to proceed with this tool use") ||
	     imp_starts(t, len, "The user doesn't want to take this action right now")) && never_asks) {
		o->kind = IMP_CANCELLED;
		o->error = "interrupted by the user (no prompt in this mode)";
	} else if (imp_starts(t, len, "The user doesn't want to proceed with this tool use") ||
		   imp_starts(t, len, "The user doesn't want to take this action right now")) {
		o->kind = IMP_USER_DENIED;
		o->error = "rejected by the user";
	} else if (headless_refusal(t, len, is_error && !o->has_exit)) {
		o->kind = IMP_POLICY_DENIED;
		o->error = "refused: it needs approval and the run has no prompt";
	} else if (imp_starts(t, len, "<tool_use_error>Blocked")) {
		/* Claude Code's own check refused the call before running it */
		o->kind = IMP_POLICY_DENIED;
		o->error = "blocked by Claude Code before it ran";
	} else if (imp_starts(t, len, "Permission to use ") &&
		   imp_contains(t, len < 200 ? len : 200, "auto-denied")) {
		o->kind = IMP_POLICY_DENIED;
		o->error = "auto-denied: prompts unavailable";
	} else if (imp_starts(t, len, "Permission to use ") &&
		   imp_contains(t, len < 200 ? len : 200, "don't ask mode")) {
		o->kind = IMP_POLICY_DENIED;
		o->error = "denied: don't ask mode";
	} else if ((imp_starts(t, len, "Permission to use ") &&
		    imp_contains(t, len < 200 ? len : 200, "has been denied")) ||
		   imp_starts(t, len, "Permission for this tool use was denied")) {
		o->kind = IMP_POLICY_DENIED;
		o->error = "denied by a permission rule";
	} else if (imp_contains(t, len, "[Request interrupted by user for tool use]")) {
		o->kind = IMP_CANCELLED;
		o->ran = o->has_exit;  /* "Exit code 137" first: it was running */
		o->error = "interrupted by the user";
	} else if (imp_starts(t, len, "<tool_use_error>Cancelled: parallel tool call") ||
		   imp_starts(t, len, "<tool_use_error>Sibling tool call errored")) {
		o->kind = IMP_CANCELLED;
		o->error = "a parallel tool call failed";
	} else {
		o->kind = is_error ? IMP_ERROR : IMP_OK;
	}
}

static int on_tool_result(imp_ctx *c, size_t session, const json_t *block, docket_buf *text)
{
	const char *id = imp_str(block, "tool_use_id");
	imp_outcome o = IMP_OUTCOME_INIT(IMP_OK);
	int error;

	if (!id) {
		imp_problem(c, 0, "tool_result without tool_use_id");
		return 0;
	}
	docket_buf_clear(text);
	if ((error = result_text(text, json_object_get(block, "content"))) < 0)
		return error;
	classify(&o, text->ptr ? text->ptr : "", text->len,
		 json_is_true(json_object_get(block, "is_error")), c->sessions[session].never_asks);
	return imp_outcome_of(c, id, &o);
}

/* ---- message lines ---- */

static int on_user(imp_ctx *c, size_t session, const json_t *content)
{
	docket_buf text = DOCKET_BUF_INIT;
	int interrupted = 0, error = 0;
	size_t i;

	if (json_is_string(content))
		interrupted = is_interrupt(json_string_value(content), json_string_length(content));
	for (i = 0; i < json_array_size(content) && error == 0; i++) {
		const json_t *b = json_array_get(content, i);
		const char *type = imp_str(b, "type"), *t = imp_str(b, "text");

		if (type && strcmp(type, "tool_result") == 0)
			error = on_tool_result(c, session, b, &text);
		else if (type && strcmp(type, "text") == 0 && t && is_interrupt(t, strlen(t)))
			interrupted = 1;
	}
	docket_buf_dispose(&text);
	if (error == 0 && interrupted)
		error = imp_cancel_open(c, session, "interrupted by the user");
	return error;
}

static int on_assistant(imp_ctx *c, size_t session, const json_t *content, const char *cwd)
{
	size_t i;
	int error = 0;

	for (i = 0; i < json_array_size(content) && error == 0; i++) {
		const json_t *b = json_array_get(content, i);
		const char *type = imp_str(b, "type");

		if (type && strcmp(type, "tool_use") == 0)
			error = on_tool_use(c, session, b, cwd);
	}
	return error;
}

static int on_message(imp_ctx *c, claude_state *s, const json_t *line, const char *type)
{
	const json_t *msg = imp_obj(line, "message");
	const char *mode = imp_str(line, "permissionMode");
	size_t session;
	int rc;

	if ((rc = line_session(c, s, line, &session)) != 0)
		return rc < 0 ? rc : 0;
	if (mode && (rc = apply_mode(c, session, mode)) < 0)
		return rc;
	if (strcmp(type, "assistant") == 0)
		return on_assistant(c, session, json_object_get(msg, "content"), imp_str(line, "cwd"));
	if (strcmp(type, "user") == 0)
		return on_user(c, session, json_object_get(msg, "content"));
	return 0;
}

static int claude_line(imp_ctx *c, json_t *obj)
{
	static const char *const messages[] = { "user", "assistant", "system", "progress", "attachment", NULL };
	static const char *const ignored[] = {
		"summary", "file-history-snapshot", "queue-operation", "last-prompt",
		"custom-title", "agent-name", "ai-title", "atis-latch", "pr-link", "tag", NULL
	};
	claude_state *s = c->fmt;
	const char *type = imp_str(obj, "type");
	size_t i;

	imp_set_time(c, imp_str(obj, "timestamp"));
	if (!type) {
		imp_problem(c, 0, "line without a type");
		return 0;
	}
	for (i = 0; messages[i]; i++)
		if (strcmp(type, messages[i]) == 0)
			return on_message(c, s, obj, type);
	if (strcmp(type, "permission-mode") == 0)
		return on_mode_line(c, s, obj);
	for (i = 0; ignored[i]; i++)
		if (strcmp(type, ignored[i]) == 0)
			return 0;
	if (strncmp(type, "api-request", 11) == 0)
		return 0;  /* api-request, api-request-start ...: model traffic, not calls */
	imp_problem(c, 1, "unknown line type \"%.40s\"", type);
	return 0;
}

/* A transcript line: a message with its sessionId, or a summary/snapshot line. */
static int claude_sniff(const json_t *obj)
{
	static const char *const messages[] = { "user", "assistant", "system", "progress", "attachment",
						"permission-mode", "queue-operation", "last-prompt", NULL };
	const char *type = imp_str(obj, "type");
	size_t i;

	if (!type)
		return 0;
	if (strcmp(type, "summary") == 0)
		return imp_str(obj, "leafUuid") != NULL;
	if (strcmp(type, "file-history-snapshot") == 0)
		return imp_str(obj, "messageId") != NULL;
	for (i = 0; messages[i]; i++)
		if (strcmp(type, messages[i]) == 0)
			return imp_str(obj, "sessionId") != NULL && !json_object_get(obj, "payload");
	return 0;
}

const imp_format_ops imp_claude_ops = { "claude", claude_init, claude_free, claude_line, claude_sniff };
