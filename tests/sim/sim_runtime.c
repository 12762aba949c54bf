/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim_runtime.c: a simulated agent runtime for the crash torture.
 *
 * It talks to `docket serve --socket` like a real runtime: runtime.start,
 * then recovery (recover.plan, answers for reconcile-mode calls from the
 * executor's receipts, recover.apply, then the runtime's side of every
 * plan item), then new sessions of random tool calls: allowed (T0+T1
 * fused), approval-required with random settlements, denied, in every
 * recovery mode.
 *
 * The fake executor's side effect is a receipt line "token invocation
 * mode" appended and fsynced to a separate file before the runtime records
 * the outcome. For idempotent calls the executor dedups on the token, as
 * a real idempotent executor would.
 *
 * Every reply carrying a seq is logged to an acks file ("seq type session
 * invocation") so the torture can check that nothing acknowledged is lost.
 *
 * usage: sim_runtime SOCKET RECEIPTS ACKS SEED SESSIONS CALLS [CRASH]
 *   CRASH: a crash point "NAME@N" of this process: after_t1 (dispatched,
 *   not executed), after_exec (executed, no outcome), mid_recovery.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "util/crash.h"

typedef struct sim {
	int fd;
	FILE *in;
	int receipts;
	FILE *acks;
	const char *receipts_path;
	unsigned seed;
	long next_id;
	char run[32];
} sim;

static const char *const modes[] = { "replay_safe", "idempotent", "reconcile", "never_auto_retry" };

static unsigned rnd(sim *s, unsigned n)
{
	s->seed = s->seed * 1103515245u + 12345u;
	return (s->seed >> 16) % n;
}

static void die(const char *what)
{
	fprintf(stderr, "sim_runtime: %s\n", what);
	exit(2);
}

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

/* One request, one reply (the result object, or NULL on a JSON-RPC error). */
static json_t *call(sim *s, const char *method, json_t *params, int *rpc_error)
{
	json_t *req = json_pack("{s:s, s:I, s:s, s:O}", "jsonrpc", "2.0", "id", (json_int_t)++s->next_id,
				"method", method, "params", params);
	char *text = json_dumps(req, JSON_COMPACT);
	char *line = NULL;
	size_t cap = 0;
	json_t *reply, *result;
	size_t len;

	json_decref(req);
	if (!text)
		die("out of memory");
	len = strlen(text);
	text[len] = '\n';
	for (size_t off = 0; off < len + 1;) {
		ssize_t n = write(s->fd, text + off, len + 1 - off);

		if (n <= 0)
			die("docket went away (write)");
		off += (size_t)n;
	}
	free(text);
	if (getline(&line, &cap, s->in) <= 0)
		die("docket went away (read)");
	reply = json_loads(line, 0, NULL);
	free(line);
	if (!reply)
		die("bad reply");
	if ((result = json_object_get(reply, "result"))) {
		json_t *seq = json_object_get(result, "seq");

		json_incref(result);
		if (json_is_integer(seq) && !json_is_true(json_object_get(result, "duplicate"))) {
			fprintf(s->acks, "%lld %s %s %s\n", (long long)json_integer_value(seq), method,
				or_dash(json_string_value(json_object_get(params, "session"))),
				or_dash(json_string_value(json_object_get(params, "invocation"))));
			fflush(s->acks);
		}
		*rpc_error = 0;
	} else {
		*rpc_error = 1;
	}
	json_decref(reply);
	json_decref(params);
	return result;
}

static json_t *must(sim *s, const char *method, json_t *params)
{
	int err;
	json_t *r = call(s, method, params, &err);

	if (err) {
		fprintf(stderr, "sim_runtime: %s refused\n", method);
		exit(3);
	}
	return r;
}

/* ---- the executor ---- */

static int receipt_exists(sim *s, const char *token)
{
	FILE *f = fopen(s->receipts_path, "r");
	char line[512];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strncmp(line, token, strlen(token)) == 0 && line[strlen(token)] == ' ';
	fclose(f);
	return found;
}

/*
 * A SIGKILL can cut a write(2) to a file between two pages (the kernel
 * looks for a fatal signal before each page it copies): the torture once
 * found a receipt cut in the middle of its invocation id. So a receipt
 * never crosses a page boundary: when it would, a line of spaces fills the
 * page first (the checks skip it), and the receipt is written whole or not
 * at all.
 */
static void receipt_align(sim *s, size_t n)
{
	char pad[4096];
	off_t end = lseek(s->receipts, 0, SEEK_END);
	size_t left;

	if (end < 0 || n > 4096 || (size_t)(end % 4096) + n <= 4096)
		return;
	left = 4096 - (size_t)(end % 4096);
	memset(pad, ' ', left - 1);
	pad[left - 1] = '\n';
	if (write(s->receipts, pad, left) != (ssize_t)left)
		die("cannot write a receipt");
}

static void execute(sim *s, const char *token, const char *inv, const char *mode)
{
	char line[512];
	int n;

	if (strcmp(mode, "idempotent") == 0 && receipt_exists(s, token))
		return; /* the executor dedups on the token */
	n = snprintf(line, sizeof(line), "%s %s %s\n", token, inv, mode);
	receipt_align(s, (size_t)n);
	if (write(s->receipts, line, (size_t)n) != n || fsync(s->receipts) != 0)
		die("cannot write a receipt");
}

/* ---- one tool call ---- */

static json_t *ids(const char *session, const char *inv)
{
	return json_pack("{s:s, s:s}", "session", session, "invocation", inv);
}

static void run_and_complete(sim *s, const char *session, const char *inv, const char *token, const char *mode)
{
	json_t *p;

	docket_crash_point("after_t1");
	execute(s, token, inv, mode);
	docket_crash_point("after_exec");
	p = ids(session, inv);
	json_object_set_new(p, "status", json_string("ok"));
	json_object_set_new(p, "exit_code", json_integer(0));
	json_decref(must(s, "tool.complete", p));
}

static void dispatch_run(sim *s, const char *session, const char *inv, const char *mode)
{
	json_t *r = must(s, "tool.dispatch", ids(session, inv));

	run_and_complete(s, session, inv, json_string_value(json_object_get(r, "token")), mode);
	json_decref(r);
}

static void complete_denied(sim *s, const char *session, const char *inv)
{
	json_t *p = ids(session, inv);

	json_object_set_new(p, "status", json_string("denied"));
	json_decref(must(s, "tool.complete", p));
}

/* Settle an open request at random; run the call if approved. */
static void settle(sim *s, const char *session, const char *inv, const char *request, const char *mode)
{
	static const char *const results[] = { "approved", "approved_for_session", "denied", "aborted" };
	const char *result = results[rnd(s, 4)];
	json_t *p = ids(session, inv);

	json_object_set_new(p, "request", json_string(request));
	json_object_set_new(p, "result", json_string(result));
	json_object_set_new(p, "actor", json_string("user:sim"));
	json_decref(must(s, "approval.settle", p));
	if (strncmp(result, "approved", 8) == 0)
		dispatch_run(s, session, inv, mode);
	else
		complete_denied(s, session, inv);
}

static void ask(sim *s, const char *session, const char *inv, const char *mode)
{
	char req[64];
	json_t *p = ids(session, inv);

	snprintf(req, sizeof(req), "r-%s-%ld", s->run, s->next_id);
	json_object_set_new(p, "request", json_string(req));
	json_decref(must(s, "approval.request", p));
	settle(s, session, inv, req, mode);
}

static void new_call(sim *s, const char *session, int k)
{
	static const char *const verdicts[] = { "allowed", "allowed", "allowed", "approval_required", "denied" };
	const char *verdict = verdicts[rnd(s, 5)];
	const char *mode = modes[rnd(s, 4)];
	char inv[96];
	json_t *p, *r;

	snprintf(inv, sizeof(inv), "%s-c%d", session, k);
	p = ids(session, inv);
	json_object_set_new(p, "tool", json_string("shell"));
	json_object_set_new(p, "args", json_pack("{s:[s,s]}", "command", "echo", inv));
	json_object_set_new(p, "recovery", json_string(mode));
	json_object_set_new(p, "decision", json_pack("{s:s, s:s}", "verdict", verdict, "source", "runtime"));
	json_object_set_new(p, "dispatch_if_allowed", json_true());
	r = must(s, "tool.intent", p);
	if (json_is_true(json_object_get(r, "dispatched")))
		run_and_complete(s, session, inv, json_string_value(json_object_get(r, "token")), mode);
	else if (strcmp(verdict, "approval_required") == 0)
		ask(s, session, inv, mode);
	else
		complete_denied(s, session, inv);
	json_decref(r);
}

/* ---- recovery ---- */

/* The executor's answers for the in-doubt reconcile calls of a plan. */
static json_t *answers_for(sim *s, json_t *plan)
{
	json_t *answers = json_object(), *item;
	size_t i;

	json_array_foreach(json_object_get(plan, "items"), i, item) {
		const char *token = json_string_value(json_object_get(item, "token"));

		if (!token || strcmp(json_string_value(json_object_get(item, "state")), "in_doubt") != 0)
			continue;
		if (receipt_exists(s, token))
			json_object_set_new(answers, token, json_pack("{s:s, s:i}", "status", "ok", "exit_code", 0));
		else
			json_object_set_new(answers, token, json_pack("{s:s, s:s}", "status", "cancelled",
								      "error", "the executor never ran it"));
	}
	return answers;
}

static void recover(sim *s)
{
	json_t *plan = must(s, "recover.plan", json_object());
	json_t *params = json_pack("{s:s, s:o}", "approvals", "reprompt", "reconcile", answers_for(s, plan));
	json_t *applied, *item;
	size_t i;

	json_decref(plan);
	applied = must(s, "recover.apply", params);
	docket_crash_point("mid_recovery");
	json_array_foreach(json_object_get(applied, "items"), i, item) {
		const char *session = json_string_value(json_object_get(item, "session"));
		const char *inv = json_string_value(json_object_get(item, "invocation"));
		const char *next = json_string_value(json_object_get(item, "runtime"));
		const char *mode = json_string_value(json_object_get(item, "recovery"));

		if (json_array_size(json_object_get(item, "events")) && !json_is_true(json_object_get(item, "applied")))
			continue; /* moved meanwhile: the next recovery sees it */
		if (strcmp(next, "dispatch") == 0 || strcmp(next, "redispatch") == 0)
			dispatch_run(s, session, inv, mode);
		else if (strcmp(next, "reprompt") == 0)
			settle(s, session, inv, json_string_value(json_object_get(item, "request")), mode);
		else if (strcmp(next, "ask_approval") == 0)
			ask(s, session, inv, mode);
		else if (strcmp(next, "decide") == 0) {
			if (rnd(s, 2))
				dispatch_run(s, session, inv, mode);
			else
				complete_denied(s, session, inv);
		}
	}
	json_decref(applied);
}

static int connect_to(const char *path)
{
	struct sockaddr_un addr;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	/* the socket file exists before we start, but serve may not listen on
	 * it yet (bind comes first): a refusal is retried for up to 2 s, after
	 * that docket is gone */
	for (int tries = 0; fd >= 0 && tries < 200; tries++) {
		if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
			return fd;
		if (errno != EAGAIN && errno != EINTR && errno != ECONNREFUSED)
			break;
		usleep(10000);
	}
	return -1;
}

int main(int argc, char **argv)
{
	sim s;
	int sessions, calls;
	json_t *r;

	if (argc < 7) {
		fprintf(stderr, "usage: sim_runtime SOCKET RECEIPTS ACKS SEED SESSIONS CALLS [CRASH]\n");
		return 2;
	}
	memset(&s, 0, sizeof(s));
	s.receipts_path = argv[2];
	s.seed = (unsigned)strtoul(argv[4], NULL, 10);
	sessions = atoi(argv[5]);
	calls = atoi(argv[6]);
	docket_crash_arm(argc > 7 ? argv[7] : NULL);
	snprintf(s.run, sizeof(s.run), "%u-%d", s.seed, (int)getpid());
	if ((s.fd = connect_to(argv[1])) < 0)
		die("cannot connect");
	if (!(s.in = fdopen(dup(s.fd), "r")))
		die("fdopen");
	if ((s.receipts = open(argv[2], O_WRONLY | O_APPEND | O_CREAT, 0600)) < 0 ||
	    !(s.acks = fopen(argv[3], "a")))
		die("cannot open the receipts or acks file");
	r = must(&s, "runtime.start", json_pack("{s:s}", "runtime", "sim/1"));
	json_decref(r);
	recover(&s);
	for (int i = 0; i < sessions; i++) {
		char session[64];

		snprintf(session, sizeof(session), "s-%s-%d", s.run, i);
		json_decref(must(&s, "session.open", json_pack("{s:s, s:s}", "session", session, "cwd", "/sim")));
		for (int k = 0; k < calls; k++)
			new_call(&s, session, k);
		json_decref(must(&s, "session.close", json_pack("{s:s}", "session", session)));
	}
	fclose(s.acks);
	fclose(s.in);
	close(s.fd);
	close(s.receipts);
	return 0;
}
