/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_integrations.c: live capture (integrations/): the settings merge of
 * `integrate claude`, the hook command line, Claude Code's effective
 * settings, and hook events against a ledger.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "integrations/integrations.h"
#include "ledger/decision.h"
#include "ledger/event.h"
#include "runtime/protocol.h"
#include "docket/import.h"
#include "docket/ledger.h"
#include "docket/policy.h"
#include "docket/recover.h"
#include "testutil.h"
#include "util/alloc.h"

static docket_integrate_options opts_for(const char *policy, int uninstall)
{
	docket_integrate_options o = DOCKET_INTEGRATE_OPTIONS_INIT;

	o.docket_path = "/opt/it's/docket";
	o.ledger_path = "/var/lib/ledger";
	o.policy = policy;
	o.uninstall = uninstall;
	return o;
}

static json_t *integrate(json_t *doc, const char *policy, int uninstall)
{
	docket_integrate_options o = opts_for(policy, uninstall);
	json_t *out = NULL;

	assert_int_equal(docket_integrate_claude(&out, doc, &o), 0);
	return out;
}

static void test_command_quoting(void **state)
{
	docket_integrate_options o = opts_for("claude:/p/settings.json", 0);
	char *cmd = NULL;

	(void)state;
	assert_int_equal(docket_integrate_command(&cmd, DOCKET_CLIENT_CLAUDE, &o), 0);
	assert_string_equal(cmd, "'/opt/it'\\''s/docket' -L '/var/lib/ledger' hook claude --enforce "
				 "--policy 'claude:/p/settings.json'");
	docket_free(cmd);
	/* relative paths would break from another cwd: refused */
	o.ledger_path = ".docket";
	assert_int_equal(docket_integrate_command(&cmd, DOCKET_CLIENT_CLAUDE, &o), DOCKET_EINVALID);
}

static void test_merge_keeps_user_settings(void **state)
{
	const char *text = "{\"model\":\"opus\",\"permissions\":{\"allow\":[\"Bash(ls)\"]},"
			   "\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\",\"hooks\":"
			   "[{\"type\":\"command\",\"command\":\"./mine.sh\"}]}]}}";
	json_t *orig = test_json(text), *once, *twice, *back;

	(void)state;
	once = integrate(json_deep_copy(orig), NULL, 0);
	/* the user's hook stays first, docket's group follows */
	assert_int_equal(json_array_size(json_object_get(json_object_get(once, "hooks"), "PreToolUse")), 2);
	assert_true(json_equal(json_object_get(once, "permissions"), json_object_get(orig, "permissions")));
	assert_non_null(json_object_get(json_object_get(once, "hooks"), "SessionEnd"));
	/* idempotent: a second run gives the same document */
	twice = integrate(json_deep_copy(once), NULL, 0);
	assert_true(json_equal(once, twice));
	/* enforce replaces the command instead of adding a second one */
	json_decref(twice);
	twice = integrate(json_deep_copy(once), "/p.yaml", 0);
	assert_int_equal(json_array_size(json_object_get(json_object_get(twice, "hooks"), "PreToolUse")), 2);
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(json_object_get(json_array_get(
		json_object_get(json_object_get(twice, "hooks"), "PreToolUse"), 1), "hooks"), 0), "command")),
		"--enforce --policy '/p.yaml'"));
	/* uninstall: exactly what was there before */
	back = integrate(json_deep_copy(twice), NULL, 1);
	assert_true(json_equal(back, orig));
	json_decref(orig);
	json_decref(once);
	json_decref(twice);
	json_decref(back);
}

static void test_merge_refuses_odd_documents(void **state)
{
	docket_integrate_options o = opts_for(NULL, 0);
	json_t *out = NULL;

	(void)state;
	assert_int_equal(docket_integrate_claude(&out, test_json("[1]"), &o), DOCKET_EINVALID);
	assert_int_equal(docket_integrate_claude(&out, test_json("{\"hooks\":[]}"), &o), DOCKET_EINVALID);
	assert_int_equal(docket_integrate_claude(&out, test_json("{\"hooks\":{\"Stop\":{}}}"), &o),
			 DOCKET_EINVALID);
	assert_null(out);
	/* a handler that merely mentions docket is the user's, not ours */
	out = integrate(test_json("{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\","
				  "\"command\":\"echo docket hook claudette\"}]}]}}"), NULL, 1);
	assert_int_equal(json_array_size(json_object_get(json_object_get(out, "hooks"), "Stop")), 1);
	json_decref(out);
}

static void write_text(const char *dir, const char *rel, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void test_effective_settings(void **state)
{
	char *dir = test_mkdtemp(), path[4200];
	json_t *eff = NULL, *files = json_array(), *want = test_json("{\"permissions\":{\"allow\":[\"Bash(ls)\",\"Read\"],"
		"\"deny\":[\"Bash(rm:*)\",\"WebFetch\"],\"defaultMode\":\"acceptEdits\"}}");

	(void)state;
	snprintf(path, sizeof(path), "%s/.claude", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	setenv("HOME", dir, 1);
	unsetenv("CLAUDE_CONFIG_DIR");
	setenv("CLAUDE_PROJECT_DIR", dir, 1);
	snprintf(path, sizeof(path), "%s/managed.json", dir);
	setenv("DOCKET_CLAUDE_MANAGED_SETTINGS", path, 1);
	/* user (~/.claude/settings.json) and project (<dir>/.claude/...) are the same
	 * directory here: project and local add to the user's rules */
	write_text(dir, ".claude/settings.json", "{\"permissions\":{\"allow\":[\"Bash(ls)\"],\"defaultMode\":\"plan\"}}");
	write_text(dir, ".claude/settings.local.json", "{\"permissions\":{\"deny\":[\"Bash(rm:*)\"],"
		   "\"allow\":[\"Bash(ls)\",\"Read\"],\"defaultMode\":\"acceptEdits\"}}");
	write_text(dir, "managed.json", "{\"permissions\":{\"deny\":[\"WebFetch\"]}}");
	/* the workspace is trusted: its allow rules count */
	snprintf(path, sizeof(path), "{\"projects\":{\"%s\":{\"hasTrustDialogAccepted\":true}}}", dir);
	write_text(dir, ".claude.json", path);
	assert_int_equal(docket_claude_effective_settings(&eff, dir, NULL, files), 0);
	assert_true(json_equal(eff, want));
	json_decref(want);
	/* user + project (the same file, read twice) + local + managed */
	assert_int_equal(json_array_size(files), 4);
	json_decref(eff);
	/* the session's own mode beats every file; a broken file is skipped */
	write_text(dir, "managed.json", "{not json");
	assert_int_equal(docket_claude_effective_settings(&eff, dir, "bypassPermissions", NULL), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(eff, "permissions"), "defaultMode")),
			    "bypassPermissions");
	assert_null(json_object_get(json_object_get(eff, "permissions"), "ask"));
	json_decref(eff);
	/* untrusted: Claude Code ignores the project's allow rules, and so does the record */
	write_text(dir, ".claude.json", "{\"projects\":{}}");
	assert_int_equal(docket_claude_effective_settings(&eff, dir, NULL, NULL), 0);
	assert_int_equal(json_array_size(json_object_get(json_object_get(eff, "permissions"), "allow")), 1);
	assert_int_equal(json_array_size(json_object_get(json_object_get(eff, "permissions"), "deny")), 1);
	json_decref(eff);
	json_decref(files);
	test_rmdir_free(dir);
}

static int count_cb(void *ctx, uint64_t seq, json_t *ev)
{
	(void)seq;
	(void)ev;
	(*(int *)ctx)++;
	return 0;
}

static void test_hook_events(void **state)
{
	char *dir = test_mkdtemp();
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_hook_answer a;
	docket_ledger *l = NULL;
	const char *pre = "{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
			  "\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"t1\",\"cwd\":\"/w\"}";
	const char *stop = "{\"session_id\":\"s\",\"hook_event_name\":\"Stop\"}";
	const char *noid = "{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"}";
	int n = 0;

	(void)state;
	setenv("HOME", dir, 1);
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	ho.client = DOCKET_CLIENT_CODEX;
	assert_int_equal(docket_hook_handle(l, &ho, pre, strlen(pre), &a), 0);
	assert_null(a.out);
	/* the same event delivered twice records it once */
	assert_int_equal(docket_hook_handle(l, &ho, pre, strlen(pre), &a), 0);
	assert_int_equal(docket_ledger_read_json(l, &ro, count_cb, &n), 0);
	assert_int_equal(n, 2);  /* session.opened, tool.intent */
	/* not a hook event */
	assert_int_equal(docket_hook_handle(l, &ho, "{}", 2, &a), DOCKET_EINVALID);
	assert_int_equal(docket_hook_handle(l, &ho, "[", 1, &a), DOCKET_EINVALID);
	assert_int_equal(docket_hook_blocks("[", 1), 1);
	assert_int_equal(docket_hook_blocks(pre, strlen(pre)), 1);
	assert_int_equal(docket_hook_blocks(stop, strlen(stop)), 0);
	/* a tool event without its id */
	assert_int_equal(docket_hook_handle(l, &ho, noid, strlen(noid), &a), DOCKET_EINVALID);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}


/* ---- sessions in every shape ---- */

typedef struct sess_facts {
	int found;
	uint64_t closed_seq, invocations, pending;
	char parent[300];
} sess_facts;

static int facts_cb(void *ctx, const docket_session_info *info)
{
	sess_facts *f = ctx;

	f->found = 1;
	f->closed_seq = info->closed_seq;
	f->invocations = info->invocations;
	f->pending = info->pending;
	snprintf(f->parent, sizeof(f->parent), "%s", info->parent);
	return 0;
}

static sess_facts facts(docket_ledger *l, const char *session)
{
	sess_facts f;
	int error;

	memset(&f, 0, sizeof(f));
	error = docket_ledger_session(l, session, facts_cb, &f);
	assert_true(error == 0 || error == DOCKET_ENOTFOUND);
	return f;
}

/* The session.opened event of `session` (a new reference), or NULL. */
typedef struct opened_ctx {
	const char *session;
	json_t *ev;
} opened_ctx;

static int opened_cb(void *ctx, uint64_t seq, json_t *ev)
{
	opened_ctx *o = ctx;
	const char *t = json_string_value(json_object_get(ev, "type"));
	const char *s = json_string_value(json_object_get(ev, "session"));

	(void)seq;
	if (t && s && strcmp(t, "session.opened") == 0 && strcmp(s, o->session) == 0 && !o->ev)
		o->ev = json_incref(ev);
	return 0;
}

static const char *label_of(docket_ledger *l, const char *session, const char *key, json_t **hold)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	opened_ctx o = { session, NULL };

	assert_int_equal(docket_ledger_read_json(l, &ro, opened_cb, &o), 0);
	*hold = o.ev;
	return o.ev ? json_string_value(json_object_get(json_object_get(o.ev, "labels"), key)) : NULL;
}

static void hook(docket_ledger *l, docket_client client, const char *text)
{
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_hook_answer a;

	ho.client = client;
	assert_int_equal(docket_hook_handle(l, &ho, text, strlen(text), &a), 0);
	docket_hook_answer_dispose(&a);
}

#define PRE(sid, id, extra) "{\"session_id\":\"" sid "\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":" \
	"\"Bash\",\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"" id "\",\"cwd\":\"/w\"" extra "}"
#define POST(sid, id) "{\"session_id\":\"" sid "\",\"hook_event_name\":\"PostToolUse\",\"tool_name\":" \
	"\"Bash\",\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"" id "\",\"cwd\":\"/w\"," \
	"\"tool_response\":{\"stdout\":\"x\"}}"
#define END(sid) "{\"session_id\":\"" sid "\",\"hook_event_name\":\"SessionEnd\",\"reason\":\"exit\"}"

/* claude --continue / --resume after SessionEnd: nothing is dropped; the
 * calls go on in a continuation linked to the closed session. */
static void test_hook_resumed_session(void **state)
{
	char *dir = test_mkdtemp();
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	json_t *hold = NULL;
	sess_facts f;

	(void)state;
	setenv("HOME", dir, 1);
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	hook(l, DOCKET_CLIENT_CLAUDE, PRE("r", "t1", ""));
	hook(l, DOCKET_CLIENT_CLAUDE, POST("r", "t1"));
	hook(l, DOCKET_CLIENT_CLAUDE, END("r"));
	f = facts(l, "r");
	assert_true(f.closed_seq > 0);
	/* the resumed run: same session id */
	hook(l, DOCKET_CLIENT_CLAUDE, PRE("r", "t2", ""));
	hook(l, DOCKET_CLIENT_CLAUDE, POST("r", "t2"));
	f = facts(l, "r/continued-2");
	assert_int_equal(f.found, 1);
	assert_int_equal(f.invocations, 1);
	assert_int_equal(f.pending, 0);
	assert_int_equal(f.closed_seq, 0);
	assert_string_equal(label_of(l, "r/continued-2", "continues", &hold), "r");
	json_decref(hold);
	/* the closed session gained nothing */
	assert_int_equal(facts(l, "r").invocations, 1);
	hook(l, DOCKET_CLIENT_CLAUDE, END("r"));
	assert_true(facts(l, "r/continued-2").closed_seq > 0);
	/* an end event with nothing open records nothing (no empty continuation) */
	hook(l, DOCKET_CLIENT_CLAUDE, END("r"));
	assert_int_equal(facts(l, "r/continued-3").found, 0);
	/* resumed again: the third links to the second */
	hook(l, DOCKET_CLIENT_CLAUDE, PRE("r", "t3", ""));
	assert_int_equal(facts(l, "r/continued-3").invocations, 1);
	assert_string_equal(label_of(l, "r/continued-3", "continues", &hold), "r/continued-2");
	json_decref(hold);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* The state `pending` shows for a call ("" when it has an outcome). */
typedef struct state_ctx {
	const char *invocation;
	char state[32];
} state_ctx;

static int state_cb(void *ctx, const docket_pending_info *info)
{
	state_ctx *c = ctx;

	if (strcmp(info->invocation, c->invocation) == 0)
		snprintf(c->state, sizeof(c->state), "%s", info->state);
	return 0;
}

static const char *call_state(docket_ledger *l, const char *session, const char *invocation, char *buf)
{
	state_ctx c;

	memset(&c, 0, sizeof(c));
	c.invocation = invocation;
	assert_int_equal(docket_ledger_pending(l, session, state_cb, &c), 0);
	memcpy(buf, c.state, sizeof(c.state));
	return buf;
}

/* The recovery plan's state and action for `invocation`. */
static void plan_of(docket_ledger *l, const char *invocation, const char **st, const char **action, json_t **hold)
{
	json_t *plan = NULL;
	size_t i;

	*st = *action = NULL;
	assert_int_equal(docket_recover_plan(l, NULL, &plan), 0);
	for (i = 0; i < json_array_size(json_object_get(plan, "items")); i++) {
		json_t *it = json_array_get(json_object_get(plan, "items"), i);

		if (strcmp(json_string_value(json_object_get(it, "invocation")), invocation) == 0) {
			*st = json_string_value(json_object_get(it, "state"));
			*action = json_string_value(json_object_get(it, "action"));
		}
	}
	*hold = plan;
}

#define START(sid, src) "{\"session_id\":\"" sid "\",\"hook_event_name\":\"SessionStart\",\"source\":\"" src \
	"\",\"cwd\":\"/w\"}"
#define ASK(sid) "{\"session_id\":\"" sid "\",\"hook_event_name\":\"PermissionRequest\",\"tool_name\":" \
	"\"Bash\",\"tool_input\":{\"command\":\"ls\"},\"cwd\":\"/w\"}"

/* A client killed mid-call: a call the hook let through whose outcome never
 * came is in doubt (dispatched, outcome unknown) in recover, and once the
 * session resumes in pending and show; never undecided nor "ask for
 * approval" (which would run it again). A prompt nobody answered is
 * aborted, never a dispatch. */
static void test_hook_killed_mid_call(void **state)
{
	char *dir = test_mkdtemp(), st[32];
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	const char *pst, *action;
	json_t *hold = NULL;

	(void)state;
	setenv("HOME", dir, 1);
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	hook(l, DOCKET_CLIENT_CLAUDE, START("k", "startup"));
	hook(l, DOCKET_CLIENT_CLAUDE, PRE("k", "t1", ",\"permission_mode\":\"default\""));
	hook(l, DOCKET_CLIENT_CLAUDE, PRE("k", "t2", ",\"permission_mode\":\"default\""));
	hook(l, DOCKET_CLIENT_CLAUDE, ASK("k"));  /* t2 at a prompt */
	/* Claude Code's SessionStart after compacting is the same process: no settling */
	hook(l, DOCKET_CLIENT_CLAUDE, START("k", "compact"));
	assert_string_equal(call_state(l, "k", "t1", st), "undecided");
	assert_string_equal(call_state(l, "k", "t2", st), "awaiting_approval");
	/* killed: nothing more; recover treats t1 as in doubt, never asks */
	plan_of(l, "t1", &pst, &action, &hold);
	assert_non_null(pst);
	assert_string_equal(pst, "in_doubt");
	assert_string_equal(action, "indeterminate");
	json_decref(hold);
	/* the resumed client's SessionStart settles the killed one's calls */
	hook(l, DOCKET_CLIENT_CLAUDE, START("k", "resume"));
	assert_string_equal(call_state(l, "k", "t1", st), "in_doubt");
	assert_string_equal(call_state(l, "k", "t2", st), "");  /* aborted prompt: ended denied */
	assert_int_equal(facts(l, "k").pending, 1);
	plan_of(l, "t1", &pst, &action, &hold);
	assert_string_equal(pst, "in_doubt");
	json_decref(hold);
	/* a second SessionStart changes nothing */
	hook(l, DOCKET_CLIENT_CLAUDE, START("k", "resume"));
	assert_string_equal(call_state(l, "k", "t1", st), "in_doubt");
	/* a session that ended cleanly is not settled by a SessionStart */
	hook(l, DOCKET_CLIENT_CLAUDE, START("c", "startup"));
	hook(l, DOCKET_CLIENT_CLAUDE, PRE("c", "u1", ",\"permission_mode\":\"default\""));
	hook(l, DOCKET_CLIENT_CLAUDE, POST("c", "u1"));
	hook(l, DOCKET_CLIENT_CLAUDE, PRE("c", "u2", ",\"permission_mode\":\"default\""));
	assert_string_equal(call_state(l, "c", "u2", st), "undecided");  /* running: its PostToolUse may come */
	hook(l, DOCKET_CLIENT_CLAUDE, POST("c", "u2"));
	hook(l, DOCKET_CLIENT_CLAUDE, START("c", "resume"));
	assert_int_equal(facts(l, "c").pending, 0);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* A subagent's session: linked to the Agent/Task call that started it,
 * closed at SubagentStop. */
static void test_hook_subagent(void **state)
{
	char *dir = test_mkdtemp();
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	json_t *hold = NULL;
	sess_facts f;
	const char *task = "{\"session_id\":\"p\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Task\","
			   "\"tool_input\":{\"prompt\":\"look\"},\"tool_use_id\":\"task1\",\"cwd\":\"/w\"}";
	const char *stop = "{\"session_id\":\"p\",\"agent_id\":\"a1\",\"hook_event_name\":\"SubagentStop\"}";

	(void)state;
	setenv("HOME", dir, 1);
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	hook(l, DOCKET_CLIENT_CLAUDE, PRE("p", "before", ""));
	hook(l, DOCKET_CLIENT_CLAUDE, task);
	hook(l, DOCKET_CLIENT_CLAUDE, PRE("p", "sub1", ",\"agent_id\":\"a1\""));
	hook(l, DOCKET_CLIENT_CLAUDE, POST("p", "before"));
	f = facts(l, "p/agent-a1");
	assert_int_equal(f.found, 1);
	assert_string_equal(f.parent, "p");
	assert_string_equal(label_of(l, "p/agent-a1", "parent_call", &hold), "task1");
	json_decref(hold);
	hook(l, DOCKET_CLIENT_CLAUDE, stop);
	f = facts(l, "p/agent-a1");
	assert_true(f.closed_seq > 0);
	assert_int_equal(f.pending, 0);  /* its call that never ran ended denied */
	/* the parent stays open, its Task call still running */
	f = facts(l, "p");
	assert_int_equal(f.closed_seq, 0);
	assert_int_equal(f.pending, 1);
	/* a subagent with no Agent/Task call open: opened, with no link */
	hook(l, DOCKET_CLIENT_CLAUDE, PRE("q", "x", ",\"agent_id\":\"a2\""));
	assert_null(label_of(l, "q/agent-a2", "parent_call", &hold));
	json_decref(hold);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* Bad input is named; a block names docket and the rule to the user too. */
static void test_hook_messages(void **state)
{
	char *dir = test_mkdtemp(), path[4200], src[4300];
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_policy *policy = NULL;
	docket_hook_answer a;
	docket_ledger *l = NULL;
	const char *rm = "{\"session_id\":\"m\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
			 "\"tool_input\":{\"command\":\"rm -rf build\"},\"tool_use_id\":\"t1\",\"cwd\":\"/w\"}";
	FILE *fp;

	(void)state;
	setenv("HOME", dir, 1);
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	assert_int_equal(docket_hook_handle(l, &ho, "", 0, &a), DOCKET_EINVALID);
	assert_non_null(strstr(docket_error_last()->message, "empty hook input"));
	assert_int_equal(docket_hook_handle(l, &ho, " \n", 2, &a), DOCKET_EINVALID);
	assert_non_null(strstr(docket_error_last()->message, "empty hook input"));
	assert_int_equal(docket_hook_handle(l, &ho, "{\"a\"", 4, &a), DOCKET_EINVALID);
	assert_non_null(strstr(docket_error_last()->message, "not JSON"));
	snprintf(path, sizeof(path), "%s/p.json", dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("{\"permissions\":{\"deny\":[\"Bash(rm:*)\"]}}\n", fp);
	fclose(fp);
	snprintf(src, sizeof(src), "claude:%s", path);
	assert_int_equal(docket_policy_load(&policy, src), 0);
	ho.policy = policy;
	assert_int_equal(docket_hook_handle(l, &ho, rm, strlen(rm), &a), 0);
	assert_non_null(a.out);
	assert_non_null(strstr(a.out, "\"systemMessage\":\"docket blocked Bash: docket policy"));
	assert_non_null(strstr(a.out, "Bash(rm:*)"));
	docket_hook_answer_dispose(&a);
	/* Codex's hook output has no systemMessage: the reason alone */
	ho.client = DOCKET_CLIENT_CODEX;
	rm = "{\"session_id\":\"m2\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
	     "\"tool_input\":{\"command\":\"rm -rf build\"},\"tool_use_id\":\"t1\",\"cwd\":\"/w\"}";
	assert_int_equal(docket_hook_handle(l, &ho, rm, strlen(rm), &a), 0);
	assert_non_null(a.out);
	assert_null(strstr(a.out, "systemMessage"));
	assert_non_null(strstr(a.out, "docket policy"));
	docket_hook_answer_dispose(&a);
	docket_policy_free(policy);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* A docket ask under `claude -p` (nobody to prompt): the CLI refuses, no
 * hook reports an outcome, and the transcript cannot be imported: the call
 * is settled at Stop and the session closed at SessionEnd all the same. */
static void test_hook_headless_ask(void **state)
{
	char *dir = test_mkdtemp(), path[4200], src[4300], stop[4400];
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_policy *policy = NULL;
	docket_hook_answer a;
	docket_ledger *l = NULL;
	const char *push = "{\"session_id\":\"h\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
			   "\"tool_input\":{\"command\":\"git push\"},\"tool_use_id\":\"t1\",\"cwd\":\"/w\"}";
	sess_facts f;
	FILE *fp;

	(void)state;
	setenv("HOME", dir, 1);
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	snprintf(path, sizeof(path), "%s/p.json", dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("{\"permissions\":{\"ask\":[\"Bash(git push:*)\"]}}\n", fp);
	fclose(fp);
	snprintf(src, sizeof(src), "claude:%s", path);
	assert_int_equal(docket_policy_load(&policy, src), 0);
	ho.policy = policy;
	assert_int_equal(docket_hook_handle(l, &ho, push, strlen(push), &a), 0);
	assert_non_null(strstr(a.out, "\"permissionDecision\":\"ask\""));
	docket_hook_answer_dispose(&a);
	assert_int_equal(facts(l, "h").pending, 1);
	/* the transcript path is a directory: the import fails */
	snprintf(stop, sizeof(stop), "{\"session_id\":\"h\",\"hook_event_name\":\"Stop\",\"transcript_path\":\"%s\"}",
		 dir);
	assert_int_equal(docket_hook_handle(l, &ho, stop, strlen(stop), &a), 0);
	assert_non_null(a.err);
	assert_non_null(strstr(a.err, "not imported"));
	docket_hook_answer_dispose(&a);
	f = facts(l, "h");
	assert_int_equal(f.pending, 0);
	hook(l, DOCKET_CLIENT_CLAUDE, END("h"));
	assert_true(facts(l, "h").closed_seq > 0);
	docket_policy_free(policy);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* Read records the lines it reads (offset, limit), as the importer does. */
typedef struct intent_args {
	json_t *args;
} intent_args;

static int intent_args_cb(void *ctx, uint64_t seq, json_t *ev)
{
	intent_args *i = ctx;
	const char *t = json_string_value(json_object_get(ev, "type"));

	(void)seq;
	if (t && strcmp(t, "tool.intent") == 0 && !i->args)
		i->args = json_incref(json_object_get(ev, "args"));
	return 0;
}

static void test_hook_read_range(void **state)
{
	char *dir = test_mkdtemp();
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	docket_ledger *l = NULL;
	intent_args ia = { NULL };
	const char *read = "{\"session_id\":\"rd\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Read\","
			   "\"tool_input\":{\"file_path\":\"/w/a.c\",\"offset\":10,\"limit\":5},"
			   "\"tool_use_id\":\"t1\",\"cwd\":\"/w\"}";
	const char *whole = "{\"session_id\":\"rd\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Read\","
			    "\"tool_input\":{\"file_path\":\"/w/b.c\",\"offset\":\"x\"},\"tool_use_id\":\"t2\",\"cwd\":\"/w\"}";
	const char *tool = NULL;
	json_t *args = NULL, *input;

	(void)state;
	setenv("HOME", dir, 1);
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	hook(l, DOCKET_CLIENT_CLAUDE, read);
	assert_int_equal(docket_ledger_read_json(l, &ro, intent_args_cb, &ia), 0);
	assert_non_null(ia.args);
	assert_string_equal(json_string_value(json_object_get(ia.args, "path")), "/w/a.c");
	assert_int_equal(json_integer_value(json_object_get(ia.args, "offset")), 10);
	assert_int_equal(json_integer_value(json_object_get(ia.args, "limit")), 5);
	json_decref(ia.args);
	hook(l, DOCKET_CLIENT_CLAUDE, whole);
	/* a range that is no number is not recorded as one */
	input = test_json("{\"file_path\":\"/w/b.c\",\"offset\":\"x\",\"limit\":-1}");
	assert_int_equal(docket_import_map_tool(&tool, &args, DOCKET_IMPORT_CLAUDE, "Read", input, "/w"), 0);
	assert_string_equal(tool, "read_file");
	assert_null(json_object_get(args, "offset"));
	assert_null(json_object_get(args, "limit"));
	json_decref(args);
	json_decref(input);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* ---- one decision builder: a hook and serve store the same decision ---- */

typedef struct intent_find {
	const char *invocation;
	json_t *found;
} intent_find;

static int intent_cb(void *ctx, uint64_t seq, json_t *ev)
{
	intent_find *f = ctx;
	const char *type = json_string_value(json_object_get(ev, "type"));
	const char *inv = json_string_value(json_object_get(ev, "invocation"));

	(void)seq;
	if (type && strcmp(type, "tool.intent") == 0 && inv && strcmp(inv, f->invocation) == 0) {
		json_decref(f->found);
		f->found = json_incref(ev);
	}
	return 0;
}

/* The stored tool.intent of (session, invocation), decoded: what the ledger
 * holds, without what a read adds (seq, hash, time, epoch). */
static docket_event *stored_intent(docket_ledger *l, const char *session, const char *invocation)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	intent_find f = { invocation, NULL };
	docket_event *ev = NULL;
	static const char *const added[] = { "seq", "hash", "time", "epoch", NULL };

	ro.session = session;
	assert_int_equal(docket_ledger_read_json(l, &ro, intent_cb, &f), 0);
	if (!f.found)
		fail_msg("no tool.intent %s in session %s", invocation, session);
	for (size_t i = 0; added[i]; i++)
		json_object_del(f.found, added[i]);
	if (docket_event_from_json(&ev, f.found) != 0)
		fail_msg("stored intent %s does not decode: %s", invocation, docket_error_last()->message);
	json_decref(f.found);
	return ev;
}

/* Field by field: the two decisions are the same, the revision included. */
static void same_decision(const char *what, const Docket__V1__Decision *h, const Docket__V1__Decision *v)
{
	if (!h || !v)
		fail_msg("%s: decision hook %s, serve %s", what, h ? "present" : "missing", v ? "present" : "missing");
	if (h->verdict != v->verdict)
		fail_msg("%s: verdict hook %d, serve %d", what, (int)h->verdict, (int)v->verdict);
	assert_string_equal(h->source, v->source);
	if (h->n_reasons != v->n_reasons)
		fail_msg("%s: %zu reasons from the hook, %zu from serve", what, h->n_reasons, v->n_reasons);
	for (size_t i = 0; i < h->n_reasons; i++)
		if (strcmp(h->reasons[i], v->reasons[i]) != 0)
			fail_msg("%s: reason %zu hook \"%s\", serve \"%s\"", what, i, h->reasons[i], v->reasons[i]);
	if (h->n_rules != v->n_rules)
		fail_msg("%s: %zu rules from the hook, %zu from serve", what, h->n_rules, v->n_rules);
	for (size_t i = 0; i < h->n_rules; i++)
		if (strcmp(h->rules[i], v->rules[i]) != 0)
			fail_msg("%s: rule %zu hook \"%s\", serve \"%s\"", what, i, h->rules[i], v->rules[i]);
	/* each names the revision of its session that records the policy:
	 * serve's operator policy, the hook's --policy (recorded by the hook
	 * in the append of its first decision) */
	if (h->policy_revision == 0 || h->policy_revision != v->policy_revision)
		fail_msg("%s: policy revision hook %u, serve %u", what, (unsigned)h->policy_revision,
			 (unsigned)v->policy_revision);
}

static void serve_intent(proto_ctx *ctx, proto_conn *conn, const docket_event *hook_ev)
{
	proto_call call;

	memset(&call, 0, sizeof(call));
	call.method = "tool.intent";
	call.params = json_pack("{ss ss ss so}", "session", "v", "invocation", hook_ev->invocation,
				"tool", hook_ev->tool_intent->tool, "args",
				json_loads(hook_ev->tool_intent->args_json, 0, NULL));
	assert_non_null(call.params);
	call.conn = conn;
	call.id = json_integer(1);
	assert_int_equal(proto_execute(ctx, &call, 1), 0);
	if (call.error)
		fail_msg("serve refused %s: %s", hook_ev->invocation, call.err.message);
	json_decref(call.id);
	json_decref(call.params);
	proto_call_dispose(&call);
}

/*
 * The same policy and the same calls through a Claude Code hook (--enforce
 * --policy) and through serve (--policy): the stored decisions are equal,
 * reasons as codes, the deciding rule first, and the policy revision (each
 * session records the policy as its revision 1). An allowed call gets no
 * decision from a hook: the client may still ask about it (invariant 2).
 */
static void test_hook_serve_same_decisions(void **state)
{
	static const char policy_json[] =
		"{\"version\":1,\"approval\":\"on_request\",\"commands\":["
		"{\"pattern\":[\"git\",\"status\"],\"decision\":\"allow\"},"
		"{\"pattern\":[\"rm\"],\"decision\":\"deny\"},"
		"{\"pattern\":[\"git\",\"push\"],\"decision\":\"ask\"}]}";
	static const char *const calls[][3] = {
		{ "t1", "git status", "allowed" },
		{ "t2", "rm -rf build", "denied" },
		{ "t3", "git push", "approval_required" },
		/* the allow rule matches first; the deny rule decides, and comes first */
		{ "t4", "git status && rm -rf build", "denied" },
	};
	char *dir = test_mkdtemp(), path[4200], event[512];
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	proto_conn conn = { .epoch = 0, .trusted = 0, .peer_pid = 0, .peer_uid = -1 };
	json_t *op = test_json(policy_json);
	docket_policy *policy = NULL;
	docket_hook_answer a;
	docket_ledger *l = NULL;
	proto_ctx *ctx = NULL;
	proto_options po;
	proto_call call;

	(void)state;
	setenv("HOME", dir, 1);
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	write_text(dir, "p.yaml", policy_json);
	snprintf(path, sizeof(path), "%s/p.yaml", dir);
	assert_int_equal(docket_policy_load(&policy, path), 0);
	ho.policy = policy;
	memset(&po, 0, sizeof(po));
	po.operator_format = "docket";
	po.operator_policy = op;
	po.workspaces = "/w";
	assert_int_equal(proto_ctx_new(&ctx, l, &po), 0);
	memset(&call, 0, sizeof(call));
	call.method = "runtime.start";
	call.params = test_json("{\"runtime\":\"test/1\"}");
	call.conn = &conn;
	assert_int_equal(proto_execute(ctx, &call, 1), 0);
	if (call.error)
		fail_msg("runtime.start: %s", call.err.message);
	json_decref(proto_reply(ctx, &call));  /* binds the connection to its epoch */
	json_decref(call.params);
	proto_call_dispose(&call);
	memset(&call, 0, sizeof(call));
	call.method = "session.open";
	call.params = test_json("{\"session\":\"v\",\"cwd\":\"/w\"}");
	call.conn = &conn;
	assert_int_equal(proto_execute(ctx, &call, 1), 0);
	if (call.error)
		fail_msg("session.open: %s", call.err.message);
	json_decref(call.params);
	proto_call_dispose(&call);

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		docket_event *h, *v;

		snprintf(event, sizeof(event), "{\"session_id\":\"h\",\"hook_event_name\":\"PreToolUse\","
			 "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"%s\"},\"tool_use_id\":\"%s\","
			 "\"cwd\":\"/w\"}", calls[i][1], calls[i][0]);
		assert_int_equal(docket_hook_handle(l, &ho, event, strlen(event), &a), 0);
		docket_hook_answer_dispose(&a);
		h = stored_intent(l, "h", calls[i][0]);
		serve_intent(ctx, &conn, h);
		v = stored_intent(l, "v", calls[i][0]);
		assert_string_equal(h->tool_intent->tool, v->tool_intent->tool);
		assert_string_equal(h->tool_intent->args_json, v->tool_intent->args_json);
		assert_non_null(v->tool_intent->decision);
		assert_string_equal(docket_verdict_name(v->tool_intent->decision->verdict), calls[i][2]);
		if (strcmp(calls[i][2], "allowed") == 0) {
			assert_null(h->tool_intent->decision);
			assert_int_equal(v->tool_intent->decision->n_rules, 1);
			assert_string_equal(v->tool_intent->decision->rules[0], "command [git, status] -> allow");
		} else {
			same_decision(calls[i][1], h->tool_intent->decision, v->tool_intent->decision);
			for (size_t k = 0; k < h->tool_intent->decision->n_reasons; k++)
				if (!decision_reason_is_code(h->tool_intent->decision->reasons[k]))
					fail_msg("%s: reason \"%s\" is no code", calls[i][1],
						 h->tool_intent->decision->reasons[k]);
			assert_string_equal(h->tool_intent->decision->rules[0],
					    strcmp(calls[i][2], "denied") == 0 ? "command [rm] -> deny"
									 : "command [git, push] -> ask");
		}
		docket_event_free(h);
		docket_event_free(v);
	}
	proto_ctx_free(ctx);
	json_decref(op);
	docket_policy_free(policy);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* ---- the policy a hook enforces is a revision of its session ---- */

static int collect_cb(void *ctx, uint64_t seq, json_t *ev)
{
	(void)seq;
	return json_array_append(ctx, ev) < 0 ? -1 : 0;
}

/* Every event of `session`, in order (a new array). */
static json_t *session_events(docket_ledger *l, const char *session)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	json_t *all = json_array();

	ro.session = session;
	assert_int_equal(docket_ledger_read_json(l, &ro, collect_cb, all), 0);
	return all;
}

/* The events of `type` in `evs` (a new array). */
static json_t *of_type(const json_t *evs, const char *type)
{
	json_t *out = json_array(), *ev;
	size_t i;

	json_array_foreach(evs, i, ev)
		if (strcmp(json_string_value(json_object_get(ev, "type")), type) == 0)
			json_array_append(out, ev);
	return out;
}

/* The decision's policy_revision of the intent of `invocation` in `evs`, -1: no decision. */
static json_int_t decided_under(const json_t *evs, const char *invocation)
{
	json_t *ev;
	size_t i;

	json_array_foreach(evs, i, ev) {
		const char *inv = json_string_value(json_object_get(ev, "invocation"));

		if (inv && strcmp(inv, invocation) == 0 &&
		    strcmp(json_string_value(json_object_get(ev, "type")), "tool.intent") == 0)
			return json_object_get(ev, "decision")
				? json_integer_value(json_object_get(json_object_get(ev, "decision"), "policy_revision"))
				: -1;
	}
	fail_msg("no intent %s", invocation);
	return -1;
}

/* The policy.revised events of `session` (a new array; *evs: all its
 * events), `want` of them. */
static json_t *revisions(docket_ledger *l, const char *session, size_t want, json_t **evs)
{
	json_t *revs;

	*evs = session_events(l, session);
	revs = of_type(*evs, "policy.revised");
	assert_int_equal(json_array_size(revs), want);
	return revs;
}

static uint64_t seq_of(const json_t *ev)
{
	return (uint64_t)json_integer_value(json_object_get(ev, "seq"));
}

#define PRE_CMD(sid, id, cmd) "{\"session_id\":\"" sid "\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":" \
	"\"Bash\",\"tool_input\":{\"command\":\"" cmd "\"},\"tool_use_id\":\"" id "\",\"cwd\":\"/w\"," \
	"\"permission_mode\":\"default\"}"

static void enforce(docket_ledger *l, docket_client client, const docket_policy *p, const char *dir,
		    const char *text)
{
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_hook_answer a;

	ho.client = client;
	ho.policy = p;
	ho.cache_dir = dir;
	assert_int_equal(docket_hook_handle(l, &ho, text, strlen(text), &a), 0);
	docket_hook_answer_dispose(&a);
}

/*
 * A Claude Code session under --enforce: its revision 1 holds docket's
 * policy and Claude's settings (all_of, docket's first); more calls under
 * the same policy add no revision; a policy file that changes mid-session
 * gives revision 2, written in the append of the first decision under it,
 * with the client's layer kept, and later decisions name 2. A Codex
 * session (no settings recorded) records docket's policy alone.
 */
static void test_hook_enforced_revision(void **state)
{
	char *dir = test_mkdtemp(), path[4200];
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_policy *p1 = NULL, *p2 = NULL;
	docket_ledger *l = NULL;
	json_t *evs, *revs, *r1, *r2, *all1, *all2;

	(void)state;
	setenv("HOME", dir, 1);
	setenv("DOCKET_CLAUDE_MANAGED_SETTINGS", "/nonexistent", 1);
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	snprintf(path, sizeof(path), "%s/p.yaml", dir);
	write_text(dir, "p.yaml", "version: 1\ncommands:\n  - pattern: [rm]\n    decision: deny\n");
	assert_int_equal(docket_policy_load(&p1, path), 0);
	enforce(l, DOCKET_CLIENT_CLAUDE, p1, dir, START("e", "startup"));
	enforce(l, DOCKET_CLIENT_CLAUDE, p1, dir, PRE_CMD("e", "t1", "rm -rf build"));
	enforce(l, DOCKET_CLIENT_CLAUDE, p1, dir, PRE_CMD("e", "t2", "rm x"));
	revs = revisions(l, "e", 1, &evs);
	r1 = json_array_get(revs, 0);
	assert_string_equal(json_string_value(json_object_get(r1, "format")), "docket");
	all1 = json_object_get(json_object_get(r1, "policy"), "all_of");
	assert_int_equal(json_array_size(all1), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(all1, 0), "format")), "docket");
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(all1, 0), "policy")), "rm"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(all1, 1), "format")), "claude");
	assert_int_equal(decided_under(evs, "t1"), 1);
	assert_int_equal(decided_under(evs, "t2"), 1);
	json_decref(revs);
	json_decref(evs);

	/* the file changes: the next decision records revision 2 with it */
	write_text(dir, "p.yaml", "version: 1\ncommands:\n  - pattern: [rm]\n    decision: deny\n"
		   "  - pattern: [curl]\n    decision: deny\n");
	assert_int_equal(docket_policy_load(&p2, path), 0);
	enforce(l, DOCKET_CLIENT_CLAUDE, p2, dir, PRE_CMD("e", "t3", "curl x"));
	enforce(l, DOCKET_CLIENT_CLAUDE, p2, dir, PRE_CMD("e", "t4", "rm y"));
	revs = revisions(l, "e", 2, &evs);
	r1 = json_array_get(revs, 0);
	r2 = json_array_get(revs, 1);
	assert_int_equal(json_integer_value(json_object_get(r2, "revision")), 2);
	assert_string_equal(json_string_value(json_object_get(r2, "actor")), "docket");
	all1 = json_object_get(json_object_get(r1, "policy"), "all_of");
	all2 = json_object_get(json_object_get(r2, "policy"), "all_of");
	assert_int_equal(json_array_size(all2), 2);
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(all2, 0), "policy")), "curl"));
	assert_true(json_equal(json_array_get(all1, 1), json_array_get(all2, 1)));  /* Claude's settings kept */
	assert_int_equal(decided_under(evs, "t1"), 1);
	assert_int_equal(decided_under(evs, "t3"), 2);
	assert_int_equal(decided_under(evs, "t4"), 2);
	/* in the decision's own append: right before t3's intent */
	for (size_t i = 0; i < json_array_size(evs); i++)
		if (seq_of(json_array_get(evs, i)) == seq_of(r2))
			assert_string_equal(json_string_value(json_object_get(json_array_get(evs, i + 1), "invocation")), "t3");
	json_decref(revs);
	json_decref(evs);

	/* a Codex session records docket's policy alone, once */
	enforce(l, DOCKET_CLIENT_CODEX, p2, dir, PRE_CMD("x", "c1", "ls"));
	enforce(l, DOCKET_CLIENT_CODEX, p2, dir, PRE_CMD("x", "c2", "rm z"));
	revs = revisions(l, "x", 1, &evs);
	r1 = json_array_get(revs, 0);
	assert_string_equal(json_string_value(json_object_get(r1, "format")), "docket");
	assert_true(json_is_string(json_object_get(r1, "policy")));
	assert_int_equal(decided_under(evs, "c1"), -1);  /* allowed: no decision (the client may still ask) */
	assert_int_equal(decided_under(evs, "c2"), 1);
	json_decref(revs);
	json_decref(evs);

	/* without --enforce nothing of docket's is recorded */
	hook(l, DOCKET_CLIENT_CODEX, PRE_CMD("n", "n1", "rm z"));
	revs = revisions(l, "n", 0, &evs);
	json_decref(revs);
	json_decref(evs);
	docket_policy_free(p1);
	docket_policy_free(p2);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command_quoting),
		cmocka_unit_test(test_merge_keeps_user_settings),
		cmocka_unit_test(test_merge_refuses_odd_documents),
		cmocka_unit_test(test_effective_settings),
		cmocka_unit_test(test_hook_events),
		cmocka_unit_test(test_hook_resumed_session),
		cmocka_unit_test(test_hook_killed_mid_call),
		cmocka_unit_test(test_hook_subagent),
		cmocka_unit_test(test_hook_messages),
		cmocka_unit_test(test_hook_headless_ask),
		cmocka_unit_test(test_hook_serve_same_decisions),
		cmocka_unit_test(test_hook_read_range),
		cmocka_unit_test(test_hook_enforced_revision),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
