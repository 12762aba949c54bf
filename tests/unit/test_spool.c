/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_spool.c: the ledger's spool (ledger/spool.c, docs/write-path.md §3).
 *
 *  - a held writer lock (a child process with a write transaction open): a
 *    denied call is answered deny within the budget, its records go to the
 *    spool and reach the chain with the next writer;
 *  - folding keeps the spool's order; a refused entry (and one that is not
 *    an event) becomes a ledger.incident, and the others still fold;
 *  - a timed append that gave up never writes, even once it gets the lock;
 *  - crash points: a hook killed before the rename leaves no entry; after
 *    the put, one durable entry; a writer killed after its commit (before
 *    or between the unlinks) leaves files that the next fold removes
 *    without appending them twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "docket/ledger.h"
#include "docket/policy.h"
#include "integrations/integrations.h"
#include "ledger/ledger_internal.h"
#include "ledger/ledger_sys.h"
#include "ledger/spool.h"
#include "testutil.h"
#include "util/crash.h"

/* ---- helpers ---- */

static docket_ledger *open_ledger(const char *dir)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;

	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	return l;
}

static void append_text(docket_ledger *l, const char *text)
{
	json_t *ev = test_json(text);

	assert_int_equal(docket_ledger_append_json(l, &ev, 1, NULL), 0);
	json_decref(ev);
}

static void spool_text(const char *dir, const char *text)
{
	json_t *ev = test_json(text);

	assert_int_equal(docket_spool_put(dir, &ev, 1), 0);
	json_decref(ev);
}

static size_t spool_count(const char *dir)
{
	size_t n = 0;

	assert_int_equal(docket_spool_count(dir, &n), 0);
	return n;
}

typedef struct collected {
	json_t *all;
} collected;

static int collect_cb(void *ctx, uint64_t seq, json_t *ev)
{
	(void)seq;
	json_array_append(((collected *)ctx)->all, ev);
	return 0;
}

/* Every event of the ledger, in order (a JSON array). */
static json_t *events_of(docket_ledger *l)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	collected c = { json_array() };

	assert_int_equal(docket_ledger_read_json(l, &ro, collect_cb, &c), 0);
	return c.all;
}

/* How many events of `type` (for `invocation` unless NULL) the array holds. */
static int count_type(const json_t *evs, const char *type, const char *invocation)
{
	size_t i;
	json_t *e;
	int n = 0;

	json_array_foreach(evs, i, e) {
		const char *t = json_string_value(json_object_get(e, "type"));
		const char *inv = json_string_value(json_object_get(e, "invocation"));

		if (t && strcmp(t, type) == 0 && (!invocation || (inv && strcmp(inv, invocation) == 0)))
			n++;
	}
	return n;
}

static uint64_t now_ms(void)
{
	return docket_spool_now_ms();
}

/* ---- a child that holds the writer lock ---- */

typedef struct holder {
	pid_t pid;
	int release;  /* write end: closing it lets the child go */
} holder;

static holder hold_lock(const char *dir)
{
	int ready[2], go[2];
	holder h;
	char c;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	h.pid = fork();
	assert_true(h.pid >= 0);
	if (h.pid == 0) {
		MDB_env *env = NULL;
		MDB_txn *txn = NULL;

		close(ready[0]);
		close(go[1]);
		if (mdb_env_create(&env) != 0 || mdb_env_set_maxdbs(env, 16) != 0 ||
		    mdb_env_open(env, dir, MDB_NOTLS, 0600) != 0 || mdb_txn_begin(env, NULL, 0, &txn) != 0)
			_exit(3);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		while (read(go[0], &c, 1) > 0)
			;
		mdb_txn_abort(txn);
		mdb_env_close(env);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	h.release = go[1];
	return h;
}

/* A child that is a docket writer in a long write transaction (a long
 * `record`, `compact`): docket's writer lock and LMDB's. */
static holder hold_lock_docket(const char *dir)
{
	int ready[2], go[2];
	holder h;
	char c;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	h.pid = fork();
	assert_true(h.pid >= 0);
	if (h.pid == 0) {
		docket_ledger *l = NULL;
		MDB_txn *txn = NULL;

		close(ready[0]);
		close(go[1]);
		if (docket_ledger_open(&l, dir, NULL) != 0 || store_txn_begin(&txn, l, 0) != 0 ||
		    write(ready[1], "r", 1) != 1)
			_exit(3);
		while (read(go[0], &c, 1) > 0)
			;
		store_txn_abort(l, txn);
		docket_ledger_free(l);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	h.release = go[1];
	return h;
}

static void release_lock(holder *h)
{
	int status;

	close(h->release);
	assert_int_equal(waitpid(h->pid, &status, 0), h->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Wait until no thread of this process waits for the writer lock. */
static void wait_unabandoned(void)
{
	for (int i = 0; i < 500 && docket_spool_waiting(); i++)
		usleep(10000);
	assert_int_equal(docket_spool_waiting(), 0);
}

typedef struct sess_ok {
	int closed;
} sess_ok;

static int closed_cb(void *ctx, const docket_session_info *info)
{
	((sess_ok *)ctx)->closed = info->closed_seq != 0;
	return 0;
}

/* ---- tests ---- */

static const char *const deny_pre =
	"{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
	"\"tool_input\":{\"command\":\"rm -rf build\"},\"tool_use_id\":\"t1\",\"cwd\":\"/w\"}";

static docket_policy *deny_rm_policy(const char *dir)
{
	char path[4096], src[4200];
	docket_policy *p = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/policy.json", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("{\"permissions\":{\"deny\":[\"Bash(rm:*)\"]}}\n", f);
	fclose(f);
	snprintf(src, sizeof(src), "claude:%s", path);
	assert_int_equal(docket_policy_load(&p, src), 0);
	return p;
}

static void test_held_lock_denies_and_spools(void **state)
{
	char *dir = test_mkdtemp();
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_policy *policy = deny_rm_policy(dir);
	docket_hook_answer a;
	docket_ledger *l = open_ledger(dir);
	uint64_t t0, took;
	holder h;
	json_t *evs;

	(void)state;
	setenv("HOME", dir, 1);
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"claude-code\"}");
	docket_ledger_free(l);
	h = hold_lock(dir);
	/* the ledger opens while another process holds the writer lock */
	t0 = now_ms();
	l = open_ledger(dir);
	ho.policy = policy;
	ho.cache_dir = dir;
	ho.spool_path = dir;
	ho.deadline_ms = now_ms() + 300;
	assert_int_equal(docket_hook_handle(l, &ho, deny_pre, strlen(deny_pre), &a), 0);
	took = now_ms() - t0;
	/* deny, naming docket and the rule, within the budget */
	assert_non_null(a.out);
	assert_non_null(strstr(a.out, "\"permissionDecision\":\"deny\""));
	assert_non_null(strstr(a.out, "docket policy"));
	assert_non_null(strstr(a.out, "Bash(rm:*)"));
	assert_true(took < 1500);
	assert_true(a.spooled >= 3);  /* the revision, the intent and its denial */
	assert_int_equal(spool_count(dir), a.spooled);
	docket_hook_answer_dispose(&a);
	/* nothing reached the chain yet */
	evs = events_of(l);
	assert_int_equal(count_type(evs, "tool.intent", "t1"), 0);
	json_decref(evs);
	release_lock(&h);
	wait_unabandoned();
	/* the next writer folds the spool before its own event */
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"other\",\"runtime\":\"x\"}");
	assert_int_equal(spool_count(dir), 0);
	evs = events_of(l);
	assert_int_equal(count_type(evs, "tool.intent", "t1"), 1);
	assert_int_equal(count_type(evs, "tool.completed", "t1"), 1);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	/* order: the spooled call, then the writer's own event */
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, json_array_size(evs) - 1),
							      "session")), "other");
	/* the policy the hook enforces went to the spool with the call, as
	 * revision 1 of the session, and the decision names it */
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 1), "type")), "policy.revised");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(evs, 1), "revision")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 1), "actor")), "docket");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
				    json_array_get(evs, 2), "decision"), "verdict")), "denied");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
				    json_array_get(evs, 2), "decision"), "policy_revision")), 1);
	json_decref(evs);
	docket_ledger_free(l);
	docket_policy_free(policy);
	test_rmdir_free(dir);
}

/* An append that gave up at its deadline writes nothing, even once the
 * lock is free; an append with time to spare commits. */
static void test_timed_append_gives_up_cleanly(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	json_t *ev = test_json("{\"type\":\"session.opened\",\"session\":\"late\",\"runtime\":\"x\"}");
	json_t *evs;
	holder h;
	int busy = 0;

	(void)state;
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	h = hold_lock(dir);
	assert_int_equal(docket_ledger_append_json_by(l, &ev, 1, now_ms() + 100, &busy), DOCKET_ESTORAGE);
	assert_int_equal(busy, 1);
	assert_int_equal(docket_spool_waiting(), 1);
	/* while one waits, another gives up at once */
	busy = 0;
	assert_int_equal(docket_ledger_append_json_by(l, &ev, 1, now_ms() + 10000, &busy), DOCKET_ESTORAGE);
	assert_int_equal(busy, 1);
	release_lock(&h);
	wait_unabandoned();
	evs = events_of(l);
	assert_int_equal(json_array_size(evs), 1);
	json_decref(evs);
	/* free lock: it commits */
	assert_int_equal(docket_ledger_append_json_by(l, &ev, 1, now_ms() + 1000, &busy), 0);
	assert_int_equal(busy, 0);
	evs = events_of(l);
	assert_int_equal(json_array_size(evs), 2);
	json_decref(evs);
	/* a refused append says why, and is no "busy" */
	json_decref(ev);
	ev = test_json("{\"type\":\"tool.dispatched\",\"session\":\"s\",\"invocation\":\"none\"}");
	assert_int_equal(docket_ledger_append_json_by(l, &ev, 1, now_ms() + 1000, &busy), DOCKET_ETRANSITION);
	assert_int_equal(busy, 0);
	json_decref(ev);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

static void test_fold_order_and_incidents(void **state)
{
	char *dir = test_mkdtemp();
	char path[4200];
	docket_ledger *l = open_ledger(dir);
	json_t *evs, *inc = NULL;
	size_t i;
	json_t *e;
	int fd, incidents = 0;

	(void)state;
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	spool_text(dir, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"a\",\"tool\":\"t\"}");
	spool_text(dir, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"b\",\"tool\":\"t\"}");
	/* refused: nothing about an invocation precedes its intent (invariant 1) */
	spool_text(dir, "{\"type\":\"tool.dispatched\",\"session\":\"s\",\"invocation\":\"nope\"}");
	spool_text(dir, "{\"type\":\"tool.dispatched\",\"session\":\"s\",\"invocation\":\"a\"}");
	/* not an event at all, named like an entry */
	snprintf(path, sizeof(path), "%s/spool/ffffffffffffffff-0000000000-00000000.json", dir);
	assert_true((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0);
	assert_int_equal(write(fd, "garbage\n", 8), 8);
	close(fd);
	/* a temporary file is not an entry */
	snprintf(path, sizeof(path), "%s/spool/.tmp-x.json", dir);
	assert_true((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0);
	close(fd);
	assert_int_equal(spool_count(dir), 5);
	assert_int_equal(docket_spool_has(dir, "tool.intent", "s", "b"), 1);
	assert_int_equal(docket_spool_has(dir, "tool.intent", "s", "c"), 0);
	assert_int_equal(docket_spool_has(dir, "tool.intent", "other", NULL), 0);
	append_text(l, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"own\",\"tool\":\"t\"}");
	assert_int_equal(spool_count(dir), 0);
	evs = events_of(l);
	/* opened, incident(garbage: an entry file, folded before the journal),
	 * a, b, incident(nope), dispatched a, own */
	assert_int_equal(json_array_size(evs), 7);
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 1), "type")), "ledger.incident");
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 2), "invocation")), "a");
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 3), "invocation")), "b");
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 5), "type")), "tool.dispatched");
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 6), "invocation")), "own");
	json_array_foreach(evs, i, e) {
		const char *t = json_string_value(json_object_get(e, "type"));

		if (!t || strcmp(t, "ledger.incident") != 0)
			continue;
		incidents++;
		assert_string_equal(json_string_value(json_object_get(e, "kind")), "spool_refused");
		assert_non_null(json_string_value(json_object_get(e, "file")));
		assert_non_null(json_string_value(json_object_get(e, "error")));
		assert_null(json_object_get(e, "session"));
		if (strstr(json_string_value(json_object_get(e, "entry")), "\"nope\""))
			inc = e;
	}
	assert_int_equal(incidents, 2);
	/* the refused entry's incident keeps its text and names its record */
	assert_non_null(inc);
	assert_non_null(strstr(json_string_value(json_object_get(inc, "file")), ".json"));
	json_decref(evs);
	/* an incident is an event like any other: it parses back, and a kind is required */
	{
		json_t *bad = test_json("{\"type\":\"ledger.incident\",\"file\":\"x\"}");

		assert_int_equal(docket_ledger_append_json(l, &bad, 1, NULL), DOCKET_EINVALID);
		json_decref(bad);
		bad = test_json("{\"type\":\"ledger.incident\",\"kind\":\"k\",\"session\":\"s\"}");
		assert_int_equal(docket_ledger_append_json(l, &bad, 1, NULL), DOCKET_EINVALID);
		json_decref(bad);
	}
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* A child that dies at `point` while putting one entry (an intent for
 * invocation `inv`); returns the signal. */
static int put_crashing_at(const char *dir, const char *point, const char *inv)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		json_t *ev = json_pack("{ss ss ss ss}", "type", "tool.intent", "session", "s", "invocation",
				       inv, "tool", "t");

		docket_crash_arm(point);
		_exit(docket_spool_put(dir, &ev, 1) == 0 ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

/* A child that dies at `point` while folding the spool into its own append. */
static int fold_crashing_at(const char *dir, const char *point)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
		docket_ledger *l = NULL;
		json_t *ev = json_pack("{ss ss ss}", "type", "session.opened", "session", "trigger", "runtime", "x");

		docket_crash_arm(point);
		if (docket_ledger_open(&l, dir, &oo) == 0 && docket_ledger_append_json(l, &ev, 1, NULL) == 0)
			_exit(0);
		_exit(3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

static void test_crash_points(void **state)
{
	static const char *const fold_points[] = { "append.before_commit", "append.after_commit",
						   "spool.before_reclaim" };
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	json_t *evs;

	(void)state;
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	docket_ledger_free(l);
	/* killed before its append: no entry */
	assert_int_equal(put_crashing_at(dir, "spool.before_write", "a"), SIGKILL);
	assert_int_equal(spool_count(dir), 0);
	/* killed between its append and its sync: the record is written (a
	 * process's death keeps it; a power cut might not, and its hook never
	 * answered): it folds like any other */
	assert_int_equal(put_crashing_at(dir, "spool.before_sync", "b"), SIGKILL);
	assert_int_equal(spool_count(dir), 1);
	/* killed after the put: the entry is there, durable */
	assert_int_equal(put_crashing_at(dir, "spool.after_put", "c"), SIGKILL);
	assert_int_equal(spool_count(dir), 2);
	for (size_t p = 0; p < sizeof(fold_points) / sizeof(fold_points[0]); p++) {
		json_t *two[2];
		char inv[16];

		/* two more entries, then a writer killed at the point while folding */
		snprintf(inv, sizeof(inv), "p%zu", p);
		two[0] = json_pack("{ss ss ss ss}", "type", "tool.intent", "session", "s", "invocation", inv, "tool", "t");
		two[1] = json_pack("{ss ss ss ss}", "type", "tool.completed", "session", "s", "invocation", inv,
				   "status", "denied");
		assert_int_equal(docket_spool_put(dir, two, 2), 0);
		json_decref(two[0]);
		json_decref(two[1]);
		assert_int_equal(fold_crashing_at(dir, fold_points[p]), SIGKILL);
		/* the next writer folds what is left: each entry once */
		l = open_ledger(dir);
		append_text(l, "{\"type\":\"runtime.started\",\"runtime\":\"x\"}");
		assert_int_equal(spool_count(dir), 0);
		evs = events_of(l);
		assert_int_equal(count_type(evs, "tool.intent", "b"), 1);
		assert_int_equal(count_type(evs, "tool.intent", "c"), 1);
		assert_int_equal(count_type(evs, "tool.intent", inv), 1);
		assert_int_equal(count_type(evs, "tool.completed", inv), 1);
		assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
		json_decref(evs);
		docket_ledger_free(l);
	}
	test_rmdir_free(dir);
}

/* A whole call while another process holds the lock: each record once, in
 * order; the events after the first wait only briefly; Stop does not wait
 * for an import. */
static void test_hook_call_across_spool(void **state)
{
	char *dir = test_mkdtemp();
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_hook_answer a;
	docket_ledger *l = open_ledger(dir);
	char stop[4400];
	const char *events[] = {
		"{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
		"\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"t1\",\"cwd\":\"/w\"}",
		"{\"session_id\":\"s\",\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\","
		"\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"t1\",\"cwd\":\"/w\","
		"\"tool_response\":{\"stdout\":\"a\"}}",
		stop,
		"{\"session_id\":\"s\",\"hook_event_name\":\"SessionEnd\",\"reason\":\"exit\"}",
	};
	const char *note = "{\"session_id\":\"s\",\"hook_event_name\":\"Notification\"}";
	uint64_t t0;
	holder h;
	json_t *evs;
	sess_ok closed = { 0 };

	(void)state;
	setenv("HOME", dir, 1);
	snprintf(stop, sizeof(stop), "{\"session_id\":\"s\",\"hook_event_name\":\"Stop\","
		 "\"transcript_path\":\"%s/none.jsonl\"}", dir);
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"claude-code\"}");
	h = hold_lock(dir);
	/* Claude Code's events (a Codex PostToolUse without an exit code leaves
	 * its call dispatched until the rollout says more: issue 27's outcomes) */
	ho.client = DOCKET_CLIENT_CLAUDE;
	ho.spool_path = dir;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		t0 = now_ms();
		ho.deadline_ms = t0 + 300;
		assert_int_equal(docket_hook_handle(l, &ho, events[i], strlen(events[i]), &a), 0);
		/* the first waits for the lock until its deadline; the others follow the spool at once */
		assert_true(now_ms() - t0 < (i == 0 ? 1500u : 150u));
		docket_hook_answer_dispose(&a);
	}
	/* intent; dispatched + completed; session.closed */
	assert_int_equal(spool_count(dir), 4);
	release_lock(&h);
	wait_unabandoned();
	/* an event that records nothing itself folds what waits */
	ho.deadline_ms = now_ms() + 300;
	assert_int_equal(docket_hook_handle(l, &ho, note, strlen(note), &a), 0);
	docket_hook_answer_dispose(&a);
	assert_int_equal(spool_count(dir), 0);
	evs = events_of(l);
	assert_int_equal(count_type(evs, "tool.intent", "t1"), 1);
	assert_int_equal(count_type(evs, "tool.dispatched", "t1"), 1);
	assert_int_equal(count_type(evs, "tool.completed", "t1"), 1);
	assert_int_equal(count_type(evs, "session.closed", NULL), 1);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	json_decref(evs);
	assert_int_equal(docket_ledger_session(l, "s", closed_cb, &closed), 0);
	assert_int_equal(closed.closed, 1);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* 1 when `dir`/spool/`name` exists. */
static int spool_file_exists(const char *dir, const char *name)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/spool/%s", dir, name);
	return stat(path, &st) == 0;
}

/* 1 when spool/.held exists: a hook waited for the writer lock in vain. */
static int held_marked(const char *dir)
{
	return spool_file_exists(dir, ".held");
}

/*
 * A docket writer in a long transaction is seen without waiting: while the
 * spool holds entries, hook events spool at once and no event tries LMDB's
 * lock (none waits in vain: spool/.held is never made), and an event that
 * writes nothing leaves the fold to the next writer; the writer lock is
 * free again once that transaction ends, and the next event folds the lot.
 * (Before, every event after the first 200 ms waited 20 ms for the lock.)
 */
static void test_docket_writer_seen_without_waiting(void **state)
{
	char *dir = test_mkdtemp();
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_hook_answer a;
	docket_ledger *l = open_ledger(dir);
	const char *events[] = {
		"{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
		"\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"t2\",\"cwd\":\"/w\"}",
		"{\"session_id\":\"s\",\"hook_event_name\":\"Notification\"}",
		"{\"session_id\":\"s\",\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\","
		"\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"t2\",\"cwd\":\"/w\","
		"\"tool_response\":{\"stdout\":\"a\"}}",
	};
	holder h;
	json_t *evs;

	(void)state;
	setenv("HOME", dir, 1);
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"claude-code\"}");
	/* written by an earlier hook that found the lock held */
	spool_text(dir, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"t1\",\"tool\":\"shell\","
		   "\"args\":{\"command\":[\"true\"]}}");
	assert_int_equal(docket_spool_writer_busy(dir), 0);
	h = hold_lock_docket(dir);
	assert_int_equal(docket_spool_writer_busy(dir), 1);
	ho.client = DOCKET_CLIENT_CLAUDE;
	ho.spool_path = dir;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		ho.deadline_ms = now_ms() + 300;
		assert_int_equal(docket_hook_handle(l, &ho, events[i], strlen(events[i]), &a), 0);
		docket_hook_answer_dispose(&a);
		assert_int_equal(docket_spool_waiting(), 0);  /* no thread waits for the lock */
		assert_int_equal(held_marked(dir), 0);
	}
	/* t1; t2's intent; its dispatch and outcome */
	assert_int_equal(spool_count(dir), 4);
	release_lock(&h);
	assert_int_equal(docket_spool_writer_busy(dir), 0);
	ho.deadline_ms = now_ms() + 300;
	assert_int_equal(docket_hook_handle(l, &ho, events[1], strlen(events[1]), &a), 0);
	docket_hook_answer_dispose(&a);
	assert_int_equal(spool_count(dir), 0);
	evs = events_of(l);
	assert_int_equal(count_type(evs, "tool.intent", NULL), 2);
	assert_int_equal(count_type(evs, "tool.completed", "t2"), 1);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/*
 * The first event while a docket writer holds the lock and the spool is
 * empty does not wait for it: one append + fdatasync to the spool's journal
 * is cheaper than the other writer's commit and its own (before: 50 ms, and
 * before that half its budget). With a budget of 20 s it answers long
 * before 10 s, and no thread waits for the lock.
 */
static void test_docket_writer_first_wait_is_short(void **state)
{
	char *dir = test_mkdtemp();
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_hook_answer a;
	docket_ledger *l = open_ledger(dir);
	const char *pre = "{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
			  "\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"t1\",\"cwd\":\"/w\"}";
	uint64_t t0;
	holder h;

	(void)state;
	setenv("HOME", dir, 1);
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"claude-code\"}");
	h = hold_lock_docket(dir);
	ho.client = DOCKET_CLIENT_CLAUDE;
	ho.spool_path = dir;
	t0 = now_ms();
	ho.deadline_ms = t0 + 10000;
	assert_int_equal(docket_hook_handle(l, &ho, pre, strlen(pre), &a), 0);
	assert_true(now_ms() - t0 < 5000);
	assert_int_equal(a.spooled, 1);
	assert_int_equal(docket_spool_waiting(), 0);
	docket_hook_answer_dispose(&a);
	release_lock(&h);
	wait_unabandoned();
	assert_int_equal(docket_spool_fold(l), 0);
	assert_int_equal(spool_count(dir), 0);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* The incidents `show` lists for `session`: their count. */
static size_t incidents_of(docket_ledger *l, const char *session)
{
	json_t *all = NULL;
	size_t n;

	assert_int_equal(docket_spool_incidents(l, session, &all), 0);
	n = json_array_size(all);
	json_decref(all);
	return n;
}

/* Put (v non-NULL) or delete a meta record, as a damaged index would be. */
static void meta_set(docket_ledger *l, const char *key, const char *v)
{
	MDB_txn *txn = NULL;

	assert_int_equal(store_txn_begin(&txn, l, 0), 0);
	if (v)
		assert_int_equal(store_meta_put(txn, l, key, v, strlen(v)), 0);
	else
		assert_int_equal(store_meta_del(txn, l, key), 0);
	assert_int_equal(store_txn_commit(l, txn), 0);
}

/*
 * The incident index is a projection of the ledger.incident events: a
 * reindex makes it again when it is lost, and drops what no event says
 * (before, reindex left meta alone: a lost index stayed lost).
 */
static void test_reindex_rebuilds_incidents(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);

	(void)state;
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	spool_text(dir, "{\"type\":\"tool.dispatched\",\"session\":\"s\",\"invocation\":\"gone\"}");
	spool_text(dir, "{\"type\":\"tool.dispatched\",\"session\":\"s\",\"invocation\":\"nope\"}");
	assert_int_equal(docket_spool_fold(l), 0);
	assert_int_equal(incidents_of(l, "s"), 2);
	meta_set(l, "incidents:s", NULL);
	meta_set(l, "incidents:ghost", "12345678");
	assert_int_equal(incidents_of(l, "s"), 0);
	assert_int_equal(docket_ledger_reindex(l), 0);
	assert_int_equal(incidents_of(l, "s"), 2);
	assert_int_equal(incidents_of(l, "ghost"), 0);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* Claude Code, a session that starts while the lock is held: every event
 * (SessionStart, a denied call, the end) goes to the spool, the call is
 * denied, and the fold gives the whole session, closed, with no incident. */
static void test_claude_session_in_spool(void **state)
{
	char *dir = test_mkdtemp();
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_policy *policy = deny_rm_policy(dir);
	docket_hook_answer a;
	docket_ledger *l = open_ledger(dir);
	const char *events[] = {
		"{\"session_id\":\"c\",\"hook_event_name\":\"SessionStart\",\"cwd\":\"/w\"}",
		"{\"session_id\":\"c\",\"hook_event_name\":\"PreToolUse\",\"permission_mode\":\"default\","
		"\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf build\"},\"tool_use_id\":\"t1\",\"cwd\":\"/w\"}",
		"{\"session_id\":\"c\",\"hook_event_name\":\"PreToolUse\",\"permission_mode\":\"default\","
		"\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"t2\",\"cwd\":\"/w\"}",
		"{\"session_id\":\"c\",\"hook_event_name\":\"PostToolUse\",\"permission_mode\":\"default\","
		"\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"t2\",\"cwd\":\"/w\","
		"\"tool_response\":{\"stdout\":\"a\"}}",
		"{\"session_id\":\"c\",\"hook_event_name\":\"Stop\",\"permission_mode\":\"default\"}",
		"{\"session_id\":\"c\",\"hook_event_name\":\"SessionEnd\",\"reason\":\"exit\"}",
	};
	holder h;
	json_t *evs;
	sess_ok closed = { 0 };

	(void)state;
	setenv("HOME", dir, 1);
	setenv("DOCKET_CLAUDE_MANAGED_SETTINGS", "/nonexistent", 1);
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"other\",\"runtime\":\"x\"}");
	h = hold_lock(dir);
	ho.policy = policy;
	ho.cache_dir = dir;
	ho.spool_path = dir;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		ho.deadline_ms = now_ms() + 200;
		assert_int_equal(docket_hook_handle(l, &ho, events[i], strlen(events[i]), &a), 0);
		if (i == 1)
			assert_non_null(strstr(a.out, "\"permissionDecision\":\"deny\""));
		docket_hook_answer_dispose(&a);
	}
	release_lock(&h);
	wait_unabandoned();
	append_text(l, "{\"type\":\"runtime.started\",\"runtime\":\"x\"}");
	assert_int_equal(spool_count(dir), 0);
	evs = events_of(l);
	assert_int_equal(count_type(evs, "session.opened", NULL), 2);
	assert_int_equal(count_type(evs, "policy.revised", NULL), 1);
	assert_int_equal(count_type(evs, "tool.intent", "t1"), 1);
	assert_int_equal(count_type(evs, "tool.completed", "t1"), 1);
	assert_int_equal(count_type(evs, "tool.intent", "t2"), 1);
	assert_int_equal(count_type(evs, "tool.dispatched", "t2"), 1);
	assert_int_equal(count_type(evs, "tool.completed", "t2"), 1);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	json_decref(evs);
	assert_int_equal(docket_ledger_session(l, "c", closed_cb, &closed), 0);
	assert_int_equal(closed.closed, 1);
	docket_ledger_free(l);
	docket_policy_free(policy);
	test_rmdir_free(dir);
}

/* A spool larger than one timed transaction folds: a hook folds the oldest
 * DOCKET_SPOOL_FOLD_CAP on their own and spools its own records after the
 * rest; the next event folds what is left; the order holds. */
static void test_large_spool_folds_in_order(void **state)
{
	char *dir = test_mkdtemp();
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_hook_answer a;
	docket_ledger *l = open_ledger(dir);
	const size_t many = DOCKET_SPOOL_FOLD_CAP + 44;
	const char *pre = "{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
			  "\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"own\",\"cwd\":\"/w\"}";
	const char *note = "{\"session_id\":\"s\",\"hook_event_name\":\"Notification\"}";
	json_t *evs;

	(void)state;
	setenv("HOME", dir, 1);
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	for (size_t i = 0; i < many; i++) {
		char inv[32];
		json_t *ev;

		snprintf(inv, sizeof(inv), "c%zu", i);
		ev = json_pack("{ss ss ss ss}", "type", "tool.intent", "session", "s", "invocation", inv, "tool", "t");

		assert_non_null(ev);
		assert_int_equal(docket_spool_put(dir, &ev, 1), 0);
		json_decref(ev);
	}
	ho.client = DOCKET_CLIENT_CODEX;
	ho.spool_path = dir;
	ho.deadline_ms = now_ms() + 1000;
	assert_int_equal(docket_hook_handle(l, &ho, pre, strlen(pre), &a), 0);
	assert_int_equal(a.spooled, 1);
	docket_hook_answer_dispose(&a);
	/* the oldest folded on their own (the journal's records count until
	 * every one of them is folded and it is reclaimed) */
	evs = events_of(l);
	assert_int_equal(json_array_size(evs), 1 + DOCKET_SPOOL_FOLD_CAP);
	json_decref(evs);
	ho.deadline_ms = now_ms() + 1000;
	assert_int_equal(docket_hook_handle(l, &ho, note, strlen(note), &a), 0);
	docket_hook_answer_dispose(&a);
	assert_int_equal(spool_count(dir), 0);
	evs = events_of(l);
	assert_int_equal(json_array_size(evs), 1 + many + 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 1), "invocation")), "c0");
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, many), "invocation")), "c299");
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, many + 1), "invocation")), "own");
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}


/* A reader folds every record first, however many wait: with more than two
 * timed transactions' worth in the journal (DOCKET_SPOOL_FOLD_CAP each, the
 * journal's count unchanged until the last), the fold goes on while rounds
 * append; before, it stopped after the first and the ledger was short. */
static void test_fold_all_past_the_cap(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	const size_t many = 2 * DOCKET_SPOOL_FOLD_CAP + 17;
	docket_ledger_info info;
	int busy = -1;

	(void)state;
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	for (size_t i = 0; i < many; i++) {
		char text[160];

		snprintf(text, sizeof(text),
			 "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"c%zu\",\"tool\":\"t\"}", i);
		spool_text(dir, text);
	}
	assert_int_equal(spool_count(dir), many);
	assert_int_equal(docket_spool_fold_all_by(l, now_ms() + 5000, &busy), 0);
	assert_int_equal(busy, 0);
	assert_int_equal(docket_ledger_info_get(l, &info), 0);
	assert_int_equal(info.events, 1 + many);
	assert_int_equal(info.pending, many);
	assert_int_equal(spool_count(dir), 0);
	/* nothing left: a second fold appends nothing */
	assert_int_equal(docket_spool_fold_all_by(l, now_ms() + 5000, &busy), 0);
	assert_int_equal(docket_ledger_info_get(l, &info), 0);
	assert_int_equal(info.events, 1 + many);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* Write `bytes` raw at the end of the spool's journal (made when missing). */
static void journal_raw(const char *dir, const char *bytes)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/spool", dir);
	(void)mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/spool/journal", dir);
	assert_true((fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600)) >= 0);
	assert_int_equal(write(fd, bytes, strlen(bytes)), (ssize_t)strlen(bytes));
	close(fd);
}

/* The journal holds records (a reclaimed one is emptied, not unlinked). */
static int journal_exists(const char *dir)
{
	return spool_file_exists(dir, "journal") && docket_spool_nonempty(dir);
}

/*
 * The journal: a record a crash cut short (no newline before the next
 * record), bytes that are no record, a record without a name are skipped;
 * a named record that is no event is an incident; the unterminated record
 * at the end is left while it may be being written. A fold of every record
 * reclaims the journal, unless a writer holds it (its shared lock); the
 * next put makes a new one, and the records folded before are not folded
 * again (their names are marked).
 */
static void test_journal_records(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	char path[4200];
	json_t *evs;
	int fd;

	(void)state;
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	spool_text(dir, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"a\",\"tool\":\"t\"}");
	journal_raw(dir, "\x1e" "0000000000000001-0000000001-00000001.json {\"type\":\"tool.intent\",\"sess"
		    "\x1e" "0000000000000001-0000000001-00000002.json not json\n"
		    "stray bytes\n"
		    "\x1e" "NoName {\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"n\",\"tool\":\"t\"}\n");
	spool_text(dir, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"b\",\"tool\":\"t\"}");
	journal_raw(dir, "\x1e" "0000000000000001-0000000001-00000003.json {\"type\":\"tool.in");
	/* a, the one that is no JSON, b */
	assert_int_equal(spool_count(dir), 3);
	assert_int_equal(docket_spool_has(dir, "tool.intent", "s", "b"), 1);
	assert_int_equal(docket_spool_has(dir, "tool.intent", "s", "n"), 0);
	/* a writer appending holds the journal (its shared lock, on an open
	 * file of its own): folded, not reclaimed */
	snprintf(path, sizeof(path), "%s/spool/journal", dir);
	assert_true((fd = open(path, O_RDONLY)) >= 0);
	assert_int_equal(flock(fd, LOCK_SH), 0);
	assert_int_equal(docket_spool_fold(l), 0);
	close(fd);
	assert_int_equal(journal_exists(dir), 1);
	/* the next fold folds nothing again and reclaims it */
	assert_int_equal(docket_spool_fold(l), 0);
	assert_int_equal(journal_exists(dir), 0);
	assert_int_equal(spool_count(dir), 0);
	spool_text(dir, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"c\",\"tool\":\"t\"}");
	assert_int_equal(journal_exists(dir), 1);
	append_text(l, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"own\",\"tool\":\"t\"}");
	assert_int_equal(journal_exists(dir), 0);
	evs = events_of(l);
	/* opened, a, incident(not json), b, c, own */
	assert_int_equal(json_array_size(evs), 6);
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 1), "invocation")), "a");
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 2), "type")), "ledger.incident");
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(evs, 2), "entry")), "not json"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 3), "invocation")), "b");
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 4), "invocation")), "c");
	assert_int_equal(count_type(evs, "tool.intent", "n"), 0);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

#define REC(n, json) "\x1e" "0000000000000002-0000000001-0000000" n ".json " json "\n"

/*
 * A lookup reads a docket-written record's leading type and session
 * without parsing it, and parses every record it cannot rule out so: the
 * answers are those of a parse of each record, whatever the layout,
 * escapes or spacing. A view is one snapshot: what is spooled after it is
 * seen after a reset.
 */
static void test_spool_find_exact(void **state)
{
	char *dir = test_mkdtemp();
	docket_spool_view *v = docket_spool_view_new();
	json_t *found = NULL;

	(void)state;
	journal_raw(dir, REC("1", "{\"session\":\"first\",\"type\":\"session.closed\"}")
		    REC("2", "{\"type\":\"session.clos\\u0065d\",\"session\":\"escaped\"}")
		    REC("3", "{\"type\":\"tool.intent\",\"session\":\"s\\/x\",\"invocation\":\"i\"}")
		    REC("4", "{\"type\" : \"session.opened\", \"session\":\"spaced\"}")
		    REC("5", "{\"type\":\"tool.intent\",\"session\":\"decoy\",\"note\":\"session.closed\"}")
		    REC("6", "{\"type\":\"session.closed\",\"session\":\"other\"}")
		    REC("7", "{\"type\":\"tool.intent\",\"type\":\"session.closed\",\"session\":\"dup\"}")
		    REC("8", "{\"type\":\"session.closed\",\"session\":\"\\u0064ecoy\"}"));
	assert_int_equal(docket_spool_has(dir, "session.closed", "first", NULL), 1);
	assert_int_equal(docket_spool_has(dir, "session.closed", "escaped", NULL), 1);
	assert_int_equal(docket_spool_has(dir, "tool.intent", "s/x", "i"), 1);
	assert_int_equal(docket_spool_has(dir, "tool.intent", "s/x", "j"), 0);
	assert_int_equal(docket_spool_has(dir, "session.opened", "spaced", NULL), 1);
	assert_int_equal(docket_spool_has(dir, "tool.intent", "decoy", NULL), 1);
	/* a value elsewhere in a record is not its type */
	assert_int_equal(docket_spool_has(dir, "session.closed", "other", NULL), 1);
	/* a record with two types is no event (refused when parsed) */
	assert_int_equal(docket_spool_has(dir, "session.closed", "dup", NULL), 0);
	assert_int_equal(docket_spool_has(dir, "tool.intent", "dup", NULL), 0);
	/* an escaped session: "decoy" spelled \u0064ecoy is found */
	assert_int_equal(docket_spool_has(dir, "session.closed", "decoy", NULL), 1);
	assert_int_equal(docket_spool_has(dir, "session.closed", "nobody", NULL), 0);
	/* a view answers the same, from one read */
	assert_non_null(v);
	assert_int_equal(docket_spool_view_find(v, dir, "session.closed", "escaped", NULL, &found), 1);
	assert_string_equal(json_string_value(json_object_get(found, "session")), "escaped");
	json_decref(found);
	assert_int_equal(docket_spool_view_find(v, dir, "session.closed", "late", NULL, NULL), 0);
	spool_text(dir, "{\"type\":\"session.closed\",\"session\":\"late\"}");
	assert_int_equal(docket_spool_view_find(v, dir, "session.closed", "late", NULL, NULL), 0);
	docket_spool_view_reset(v);
	assert_int_equal(docket_spool_view_find(v, dir, "session.closed", "late", NULL, NULL), 1);
	assert_int_equal(docket_spool_view_find(v, dir, "session.closed", "dup", NULL, NULL), 0);
	docket_spool_view_free(v);
	test_rmdir_free(dir);
}

static void test_spool_put_fails_closed(void **state)
{
	char *dir = test_mkdtemp();
	char sub[4200];
	json_t *ev = test_json("{\"type\":\"session.closed\",\"session\":\"s\"}");
	json_t *none = NULL;

	(void)state;
	/* a ledger path that cannot hold a spool (a file where the directory should be) */
	snprintf(sub, sizeof(sub), "%s/file", dir);
	assert_int_equal(close(open(sub, O_WRONLY | O_CREAT, 0600)), 0);
	assert_int_equal(docket_spool_put(sub, &ev, 1), DOCKET_ESTORAGE);
	/* an event that could not be built (out of memory) is no entry */
	assert_int_equal(docket_spool_put(dir, &none, 1), DOCKET_ENOMEM);
	assert_int_equal(spool_count(dir), 0);
	json_decref(ev);
	test_rmdir_free(dir);
}

/* ---- spool first (docs/write-path.md §3) ---- */

/* No user or managed Claude settings but those under `dir`. */
static void claude_env(const char *dir)
{
	setenv("HOME", dir, 1);
	setenv("DOCKET_CLAUDE_MANAGED_SETTINGS", "/nonexistent", 1);
}

/* Feed hook events with spool first (no fold after them: the folder has
 * not run); every one answers 0. */
static void feed_spool_first(docket_ledger *l, const char *dir, const docket_policy *policy,
			     const char *const *events, size_t n)
{
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_hook_answer a;

	ho.policy = policy;
	ho.cache_dir = dir;
	ho.spool_path = dir;
	ho.spool_first = 1;
	for (size_t i = 0; i < n; i++) {
		ho.deadline_ms = now_ms() + 500;
		assert_int_equal(docket_hook_handle(l, &ho, events[i], strlen(events[i]), &a), 0);
		assert_int_equal(a.exit_code, 0);
		docket_hook_answer_dispose(&a);
	}
}

/* The events of the ledger after folding what the spool holds. */
static json_t *folded_events(docket_ledger *l, const char *dir)
{
	assert_int_equal(docket_spool_fold(l), 0);
	assert_int_equal(docket_spool_nonempty(dir), 0);
	return events_of(l);
}

#define CLAUDE(sid, name, rest) "{\"session_id\":\"" sid "\",\"hook_event_name\":\"" name "\",\"cwd\":\"/w\"" rest "}"
#define BASH(cmd, id) ",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"" cmd "\"},\"tool_use_id\":\"" id "\""

/* A spool-first event writes nothing to the ledger: its records are in the
 * journal (durable) when it answers, and one fold puts each in the chain once. */
static void test_spool_first_records_in_journal(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	const char *ev[] = { CLAUDE("s", "PreToolUse", BASH("ls", "t1")) };
	docket_ledger_info info;
	json_t *evs;

	(void)state;
	claude_env(dir);
	feed_spool_first(l, dir, NULL, ev, 1);
	assert_int_equal(docket_ledger_info_get(l, &info), 0);
	assert_int_equal(info.events, 0);
	assert_true(docket_spool_nonempty(dir));
	assert_int_equal(spool_count(dir), 2);  /* session.opened, tool.intent */
	evs = folded_events(l, dir);
	assert_int_equal(count_type(evs, "session.opened", NULL), 1);
	assert_int_equal(count_type(evs, "tool.intent", "t1"), 1);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* A re-delivered PreToolUse (the same tool_use_id again), while its intent
 * is still in the spool and again once it is folded: the fold takes the
 * second intent as the duplicate it is, no second intent and no incident. */
static void test_spool_first_redelivered_pre(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	const char *pre[] = { CLAUDE("s", "PreToolUse", BASH("ls", "t1")), CLAUDE("s", "PreToolUse", BASH("ls", "t1")) };
	json_t *evs;

	(void)state;
	claude_env(dir);
	feed_spool_first(l, dir, NULL, pre, 2);
	evs = folded_events(l, dir);
	assert_int_equal(count_type(evs, "tool.intent", "t1"), 1);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	json_decref(evs);
	feed_spool_first(l, dir, NULL, pre, 1);
	evs = folded_events(l, dir);
	assert_int_equal(count_type(evs, "tool.intent", "t1"), 1);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* A session closed in the spool and used again (claude --resume) goes on
 * in a continuation, while the lock is held (nothing folds): no event of
 * the closed session is refused when folded. */
static void test_spool_first_resume_sees_closed(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	const char *evs_in[] = {
		CLAUDE("r", "PreToolUse", BASH("ls", "t1")),
		CLAUDE("r", "PostToolUse", BASH("ls", "t1") ",\"tool_response\":\"a\""),
		CLAUDE("r", "SessionEnd", ",\"reason\":\"exit\""),
		CLAUDE("r", "PreToolUse", BASH("pwd", "t2")),
	};
	holder h;
	json_t *evs;
	sess_ok closed = { 0 };

	(void)state;
	claude_env(dir);
	h = hold_lock(dir);
	feed_spool_first(l, dir, NULL, evs_in, 4);
	release_lock(&h);
	wait_unabandoned();
	evs = folded_events(l, dir);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	assert_int_equal(count_type(evs, "session.opened", NULL), 2);
	assert_int_equal(count_type(evs, "tool.intent", "t2"), 1);
	json_decref(evs);
	assert_int_equal(docket_ledger_session(l, "r", closed_cb, &closed), 0);
	assert_int_equal(closed.closed, 1);
	closed.closed = 0;
	assert_int_equal(docket_ledger_session(l, "r/continued-2", closed_cb, &closed), 0);
	assert_int_equal(closed.closed, 0);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* A call asked about (PermissionRequest) whose approval is still in the
 * spool is settled when it runs: the PostToolUse folds first. */
static void test_spool_first_ask_settled(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	const char *evs_in[] = {
		CLAUDE("q", "PreToolUse", BASH("npm i", "t1")),
		CLAUDE("q", "PermissionRequest", BASH("npm i", "t1")),
		CLAUDE("q", "PostToolUse", BASH("npm i", "t1") ",\"tool_response\":\"ok\""),
	};
	json_t *evs;

	(void)state;
	claude_env(dir);
	feed_spool_first(l, dir, NULL, evs_in, 2);
	/* a writer waited in vain a moment ago: the PostToolUse does not fold
	 * first on its own account, only for the spooled approval */
	docket_spool_mark_held(dir);
	feed_spool_first(l, dir, NULL, evs_in + 2, 1);
	evs = folded_events(l, dir);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	assert_int_equal(count_type(evs, "approval.requested", "t1"), 1);
	assert_int_equal(count_type(evs, "approval.settled", "t1"), 1);
	assert_int_equal(count_type(evs, "tool.completed", "t1"), 1);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* Under --enforce the revision docket recorded is in the spool (the lock is
 * held): the next call's decision names it, and no second one is written. */
static void test_spool_first_revision(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	docket_policy *policy = deny_rm_policy(dir);
	const char *evs_in[] = {
		CLAUDE("v", "PreToolUse", BASH("ls", "t1")),
		CLAUDE("v", "PreToolUse", BASH("pwd", "t2")),
	};
	holder h;
	json_t *evs;

	(void)state;
	claude_env(dir);
	h = hold_lock(dir);
	feed_spool_first(l, dir, policy, evs_in, 2);
	release_lock(&h);
	wait_unabandoned();
	evs = folded_events(l, dir);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	assert_int_equal(count_type(evs, "policy.revised", NULL), 1);
	assert_int_equal(count_type(evs, "tool.intent", "t2"), 1);
	json_decref(evs);
	docket_ledger_free(l);
	docket_policy_free(policy);
	test_rmdir_free(dir);
}

/* The client was killed mid-call (its intent still in the spool): the next
 * process's SessionStart folds first and settles the call (in doubt). */
static void test_spool_first_killed_mid_call(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	const char *evs_in[] = {
		CLAUDE("k", "SessionStart", ",\"source\":\"startup\""),
		CLAUDE("k", "PreToolUse", BASH("make", "t1")),
		CLAUDE("k", "SessionStart", ",\"source\":\"resume\""),
	};
	json_t *evs;

	(void)state;
	claude_env(dir);
	feed_spool_first(l, dir, NULL, evs_in, 2);
	/* a writer waited in vain a moment ago: only a whole-session event
	 * waits for the lock and folds first */
	docket_spool_mark_held(dir);
	feed_spool_first(l, dir, NULL, evs_in + 2, 1);
	evs = folded_events(l, dir);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	assert_int_equal(count_type(evs, "tool.dispatched", "t1"), 1);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* The detached fold: a crash before it, or anywhere in it, leaves every
 * record for the next fold, which puts each in the chain exactly once. */
static void test_detached_fold_crash_points(void **state)
{
	static const char *const points[] = { "spool.detached_fold", "append.before_commit", "append.after_commit",
					      "spool.before_reclaim", NULL };
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	json_t *evs;

	(void)state;
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	for (size_t p = 0; p < sizeof(points) / sizeof(points[0]); p++) {
		char text[128];
		int status;
		pid_t pid;

		snprintf(text, sizeof(text),
			 "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"d%zu\",\"tool\":\"t\"}", p);
		spool_text(dir, text);
		docket_crash_arm(points[p]);
		pid = docket_spool_fold_detached(dir, 500, 0, NULL);
		docket_crash_arm(NULL);
		assert_true(pid > 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (points[p]) {
			assert_true(WIFSIGNALED(status));
			assert_int_equal(WTERMSIG(status), SIGKILL);
		} else {
			/* no crash: the child folded it all and reclaimed the journal */
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
			assert_int_equal(docket_spool_nonempty(dir), 0);
		}
	}
	evs = folded_events(l, dir);
	for (size_t p = 0; p < sizeof(points) / sizeof(points[0]); p++) {
		char inv[16];

		snprintf(inv, sizeof(inv), "d%zu", p);
		assert_int_equal(count_type(evs, "tool.intent", inv), 1);
	}
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* Each intent PREFIX0 .. PREFIX<n-1> is in `evs` once. */
static void assert_intents_once(const json_t *evs, const char *prefix, int n)
{
	for (int i = 0; i < n; i++) {
		char inv[16];

		snprintf(inv, sizeof(inv), "%s%d", prefix, i);
		assert_int_equal(count_type(evs, "tool.intent", inv), 1);
	}
}

/* Wait (up to 5 s) until pred(dir) is `want`. */
static int wait_until(int (*pred)(const char *), const char *dir, int want)
{
	for (int i = 0; i < 500; i++) {
		if (pred(dir) == want)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* A lingering folder folds the records that land after it started, with
 * no reader or writer folding (the journal empties on its own), and goes
 * once `linger_ms` pass without one. */
static void test_lingering_folder_folds_what_lands(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	json_t *evs;
	int status;
	pid_t pid;

	(void)state;
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	/* as a hook: its record first (a folder lingers where a spool is) */
	spool_text(dir, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"first\",\"tool\":\"t\"}");
	pid = docket_spool_fold_detached(dir, 500, 300, NULL);
	assert_true(pid > 0);
	assert_true(wait_until(docket_spool_folder_alive, dir, 1));
	for (int i = 0; i < 20; i++) {
		char text[128];

		snprintf(text, sizeof(text),
			 "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"l%d\",\"tool\":\"t\"}", i);
		spool_text(dir, text);
		if (i % 5 == 0)
			usleep(20000);  /* some land alone, some in bursts */
	}
	assert_true(wait_until(docket_spool_nonempty, dir, 0));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(docket_spool_folder_alive(dir), 0);
	evs = events_of(l);
	assert_intents_once(evs, "l", 20);
	assert_int_equal(count_type(evs, "tool.intent", "first"), 1);
	assert_int_equal(count_type(evs, "ledger.incident", NULL), 0);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* The race invariant 2 is about, made wide: a folder that found the spool
 * quiet pauses before it lets go of the lock (crash point
 * "spool.folder_going~300"); a record made durable then, by a writer that
 * found the lock held and forked nothing, is folded by that folder all
 * the same. */
static void test_going_folder_folds_the_last_record(void **state)
{
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	json_t *evs;
	int status;
	pid_t pid;

	(void)state;
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	spool_text(dir, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"a\",\"tool\":\"t\"}");
	docket_crash_arm("spool.folder_going~300");
	pid = docket_spool_fold_detached(dir, 500, 50, NULL);
	docket_crash_arm(NULL);
	assert_true(pid > 0);
	assert_true(wait_until(docket_spool_nonempty, dir, 0));  /* "a" folded */
	usleep(150000);  /* 50 ms quiet: the folder pauses, the lock still held */
	spool_text(dir, "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"b\",\"tool\":\"t\"}");
	assert_int_equal(docket_spool_folder_alive(dir), 1);  /* so no folder is forked for "b" */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(docket_spool_nonempty(dir), 0);
	evs = events_of(l);
	assert_int_equal(count_type(evs, "tool.intent", "a"), 1);
	assert_int_equal(count_type(evs, "tool.intent", "b"), 1);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* Folders that come and go while records land (a hook's order: the record
 * durable, then "is a folder alive?", else fork one) leave no record
 * behind: once the last folder is gone the journal is empty, though
 * nothing else folded (spool_folder.c, invariant 2). */
static void test_folders_leave_no_record_behind(void **state)
{
	enum { N = 150 };
	char *dir = test_mkdtemp();
	docket_ledger *l = open_ledger(dir);
	pid_t pids[N];
	int forks = 0, status;
	json_t *evs;

	(void)state;
	append_text(l, "{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"x\"}");
	for (int i = 0; i < N; i++) {
		char text[128];

		snprintf(text, sizeof(text),
			 "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"g%d\",\"tool\":\"t\"}", i);
		spool_text(dir, text);
		if (!docket_spool_folder_alive(dir) && (pids[forks] = docket_spool_fold_detached(dir, 500, 1, NULL)) > 0)
			forks++;
		if (i % 3 == 0)
			usleep((useconds_t)(i % 7) * 700);
	}
	for (int i = 0; i < forks; i++)
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
	assert_true(forks > 1);
	assert_int_equal(docket_spool_nonempty(dir), 0);
	evs = events_of(l);
	assert_intents_once(evs, "g", N);
	json_decref(evs);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_lock_denies_and_spools),
		cmocka_unit_test(test_timed_append_gives_up_cleanly),
		cmocka_unit_test(test_fold_order_and_incidents),
		cmocka_unit_test(test_crash_points),
		cmocka_unit_test(test_hook_call_across_spool),
		cmocka_unit_test(test_docket_writer_seen_without_waiting),
		cmocka_unit_test(test_docket_writer_first_wait_is_short),
		cmocka_unit_test(test_reindex_rebuilds_incidents),
		cmocka_unit_test(test_claude_session_in_spool),
		cmocka_unit_test(test_large_spool_folds_in_order),
		cmocka_unit_test(test_fold_all_past_the_cap),
		cmocka_unit_test(test_spool_first_redelivered_pre),
		cmocka_unit_test(test_spool_put_fails_closed),
		cmocka_unit_test(test_journal_records),
		cmocka_unit_test(test_spool_first_records_in_journal),
		cmocka_unit_test(test_spool_first_resume_sees_closed),
		cmocka_unit_test(test_spool_first_ask_settled),
		cmocka_unit_test(test_spool_first_revision),
		cmocka_unit_test(test_spool_first_killed_mid_call),
		cmocka_unit_test(test_detached_fold_crash_points),
		cmocka_unit_test(test_lingering_folder_folds_what_lands),
		cmocka_unit_test(test_folders_leave_no_record_behind),
		cmocka_unit_test(test_going_folder_folds_the_last_record),
		cmocka_unit_test(test_spool_find_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
