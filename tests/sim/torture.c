/* SPDX-License-Identifier: Apache-2.0 */
/*
 * torture.c: crash torture of docket serve and a runtime (DESIGN §6).
 *
 * Each trial starts `docket serve --socket` and the simulated runtime
 * (sim_runtime.c), then kills one or both of them with SIGKILL: at a random
 * moment, or at a named crash point of docket (before/after a commit, in
 * the middle of a batch) or of the runtime (after T1 before execution,
 * after execution before T2, in the middle of recovery). The next trial's
 * runtime starts a new epoch and recovers. After every trial:
 *
 *   1. no invocation in mode never_auto_retry or reconcile has two
 *      receipts, no dispatch token was executed twice, and every receipt
 *      has its tool.dispatched (T1) in the ledger;
 *   2. every event the runtime saw acknowledged is in the ledger;
 *   3. `verify` passes.
 *
 * At the end a clean run recovers everything; then every invocation has
 * exactly one outcome and nothing is pending.
 *
 * usage: torture DOCKET SIM_RUNTIME KILLS [SEED]
 * Runs trials until KILLS of them killed docket or the runtime.
 * Long runs rotate to a fresh ledger every 200 trials so per-trial checks
 * stay cheap; every check still runs after every trial.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "docket/ledger.h"
#include "ledger/ledger_internal.h"

#define SEGMENT 200

typedef struct torture {
	const char *docket, *sim;
	char dir[512], ledger[600], sock[600], receipts[600], acks[600];
	unsigned seed;
	int segment;
	/* what the checks have seen so far in this segment */
	json_t *dispatch_tokens;   /* token -> true */
	uint64_t scanned;          /* events scanned for tokens */
	long kills, docket_kills, runtime_kills, crash_points, clean_exits;
} torture;

static unsigned rnd(torture *t, unsigned n)
{
	t->seed = t->seed * 1103515245u + 12345u;
	return (t->seed >> 16) % n;
}

/* "torture: FAIL: <what> <detail>", exit 1. */
static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "torture: FAIL: %s %s\n", what, detail);
	exit(1);
}

static pid_t spawn(char *const argv[], const char *crash_env)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (crash_env)
			setenv("DOCKET_CRASH_POINT", crash_env, 1);
		else
			unsetenv("DOCKET_CRASH_POINT");
		if (!getenv("TORTURE_VERBOSE")) {
			FILE *devnull = freopen("/dev/null", "w", stderr);

			(void)devnull;
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_socket(const char *path, pid_t serve)
{
	struct stat st;

	for (int i = 0; i < 2000; i++) {
		if (stat(path, &st) == 0)
			return 0;
		if (waitpid(serve, NULL, WNOHANG) == serve)
			return -1;
		usleep(1000);
	}
	return -1;
}

/* Wait for `pid` up to `ms`; SIGKILL it after that. Returns the status. */
static int reap(pid_t pid, int ms)
{
	int status = 0;

	for (int i = 0; i < ms; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return status;
}

static void new_segment(torture *t)
{
	char cmd[1400];

	t->segment++;
	snprintf(t->ledger, sizeof(t->ledger), "%s/ledger-%d", t->dir, t->segment);
	snprintf(t->sock, sizeof(t->sock), "%s/sock-%d", t->dir, t->segment);
	snprintf(t->receipts, sizeof(t->receipts), "%s/receipts-%d", t->dir, t->segment);
	snprintf(t->acks, sizeof(t->acks), "%s/acks-%d", t->dir, t->segment);
	snprintf(cmd, sizeof(cmd), "'%s' -L '%s' init >/dev/null", t->docket, t->ledger);
	if (system(cmd) != 0)
		fail("cannot init", t->ledger);
	json_decref(t->dispatch_tokens);
	t->dispatch_tokens = json_object();
	t->scanned = 0;
}

/* ---- checks ---- */

static docket_ledger *open_ledger(const char *path)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;

	opts.flags = DOCKET_OPEN_READONLY;
	if (docket_ledger_open(&l, path, &opts) != 0)
		fail("cannot open the ledger", docket_error_last()->message);
	return l;
}

static int collect_token(void *ctx, uint64_t seq, json_t *ev)
{
	torture *t = ctx;
	const char *type = json_string_value(json_object_get(ev, "type"));
	const char *token = json_string_value(json_object_get(ev, "token"));

	t->scanned = seq;
	if (type && strcmp(type, "tool.dispatched") == 0 && token)
		json_object_set_new(t->dispatch_tokens, token, json_true());
	return 0;
}

static void check_receipts(torture *t, docket_ledger *l)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	json_t *per_token = json_object(), *per_inv = json_object();
	char line[512];
	FILE *f;

	ro.since = t->scanned + 1;
	if (docket_ledger_read_json(l, &ro, collect_token, t) != 0)
		fail("cannot read the ledger", docket_error_last()->message);
	if (!(f = fopen(t->receipts, "r"))) {
		json_decref(per_token);
		json_decref(per_inv);
		return; /* nothing executed yet */
	}
	while (fgets(line, sizeof(line), f)) {
		char token[128], inv[256], mode[32];
		json_int_t n;

		if (sscanf(line, "%127s %255s %31s", token, inv, mode) != 3)
			fail("bad receipt line", line);
		if (!json_object_get(t->dispatch_tokens, token))
			fail("a receipt without its T1", line);
		n = json_integer_value(json_object_get(per_token, token)) + 1;
		json_object_set_new(per_token, token, json_integer(n));
		if (n > 1)
			fail("a dispatch token executed twice", line);
		n = json_integer_value(json_object_get(per_inv, inv)) + 1;
		json_object_set_new(per_inv, inv, json_integer(n));
		if (n > 1 && (strcmp(mode, "never_auto_retry") == 0 || strcmp(mode, "reconcile") == 0 ||
			      strcmp(mode, "idempotent") == 0))
			fail("dispatched twice in a mode that forbids it", line);
	}
	fclose(f);
	json_decref(per_token);
	json_decref(per_inv);
}

static void check_acks(torture *t, docket_ledger *l)
{
	char line[600];
	FILE *f = fopen(t->acks, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		long long seq;
		char method[64], session[256], inv[256];
		json_t *ev = NULL;

		if (sscanf(line, "%lld %63s %255s %255s", &seq, method, session, inv) != 4)
			continue; /* a line cut by a kill */
		if (ledger_event_json(l, (uint64_t)seq, &ev) != 0)
			fail("an acknowledged event is missing", line);
		if (strcmp(inv, "-") != 0) {
			const char *got = json_string_value(json_object_get(ev, "invocation"));

			if (!got || strcmp(got, inv) != 0)
				fail("an acknowledged seq holds another event", line);
		}
		json_decref(ev);
	}
	fclose(f);
}

static void check_verify(docket_ledger *l)
{
	docket_verify_report rep;

	if (docket_ledger_verify(l, &rep) != 0)
		fail("verify could not run", docket_error_last()->message);
	if (!rep.ok)
		fail("verify failed", rep.problem);
}

static void check_trial(torture *t)
{
	docket_ledger *l = open_ledger(t->ledger);

	check_receipts(t, l);
	check_acks(t, l);
	check_verify(l);
	docket_ledger_free(l);
}

/* Every invocation of the segment has exactly one outcome; nothing pending. */
typedef struct outcome_count {
	json_t *intents, *outcomes;
} outcome_count;

static int count_outcomes(void *ctx, uint64_t seq, json_t *ev)
{
	outcome_count *c = ctx;
	const char *type = json_string_value(json_object_get(ev, "type"));
	const char *inv = json_string_value(json_object_get(ev, "invocation"));
	const char *session = json_string_value(json_object_get(ev, "session"));
	char key[600];
	json_t *target;

	(void)seq;
	if (!type || !inv || !session)
		return 0;
	snprintf(key, sizeof(key), "%s/%s", session, inv);
	target = strcmp(type, "tool.intent") == 0 ? c->intents : strcmp(type, "tool.completed") == 0 ? c->outcomes : NULL;
	if (target)
		json_object_set_new(target, key, json_integer(json_integer_value(json_object_get(target, key)) + 1));
	return 0;
}

static void check_final(torture *t)
{
	docket_ledger *l = open_ledger(t->ledger);
	outcome_count c = { json_object(), json_object() };
	docket_ledger_info info;
	const char *key;
	json_t *v;

	if (docket_ledger_read_json(l, NULL, count_outcomes, &c) != 0)
		fail("cannot read", docket_error_last()->message);
	json_object_foreach(c.intents, key, v) {
		if (json_integer_value(json_object_get(c.outcomes, key)) != 1)
			fail("an invocation does not have exactly one outcome", key);
	}
	if (docket_ledger_info_get(l, &info) != 0 || info.pending != 0)
		fail("calls are still pending after the final recovery", t->ledger);
	check_verify(l);
	docket_ledger_free(l);
	json_decref(c.intents);
	json_decref(c.outcomes);
}

/* ---- trials ---- */

static void trial(torture *t, int n)
{
	static const char *const docket_points[] = { "append.before_commit", "append.after_commit", "append.mid_batch" };
	static const char *const runtime_points[] = { "after_t1", "after_exec", "mid_recovery" };
	char seed[32], crash[64], *serve_argv[8], *sim_argv[10];
	const char *docket_crash = NULL, *runtime_crash = NULL;
	unsigned mode = rnd(t, 5);
	int sst, rst, docket_killed = 0, runtime_killed;
	pid_t serve, rt;

	snprintf(seed, sizeof(seed), "%u", t->seed ^ (unsigned)n);
	if (mode == 3) {
		snprintf(crash, sizeof(crash), "%s@%u", docket_points[rnd(t, 3)], 1 + rnd(t, 12));
		docket_crash = crash;
	} else if (mode == 4) {
		unsigned p = rnd(t, 3);

		snprintf(crash, sizeof(crash), "%s@%u", runtime_points[p], p == 2 ? 1 : 1 + rnd(t, 8));
		runtime_crash = crash;
	}
	serve_argv[0] = (char *)t->docket;
	serve_argv[1] = "-L";
	serve_argv[2] = t->ledger;
	serve_argv[3] = "serve";
	serve_argv[4] = "--socket";
	serve_argv[5] = t->sock;
	serve_argv[6] = NULL;
	serve = spawn(serve_argv, docket_crash);
	if (wait_socket(t->sock, serve) < 0)
		fail("docket serve did not start on", t->sock);
	sim_argv[0] = (char *)t->sim;
	sim_argv[1] = t->sock;
	sim_argv[2] = t->receipts;
	sim_argv[3] = t->acks;
	sim_argv[4] = seed;
	sim_argv[5] = "2";
	sim_argv[6] = "5";
	sim_argv[7] = (char *)runtime_crash;
	sim_argv[8] = NULL;
	rt = spawn(sim_argv, NULL);
	if (mode <= 2) {
		usleep(1000 * (1 + rnd(t, 40)));
		if (mode == 0 || mode == 2)
			kill(serve, SIGKILL);
		if (mode == 1 || mode == 2)
			kill(rt, SIGKILL);
	}
	rst = reap(rt, 20000);
	/* docket may still run (no kill yet, or a crash point never reached):
	 * stop it either way; that stop is not counted as a kill */
	if (waitpid(serve, &sst, WNOHANG) == serve) {
		docket_killed = WIFSIGNALED(sst) && WTERMSIG(sst) == SIGKILL;
	} else {
		kill(serve, rnd(t, 2) ? SIGTERM : SIGKILL);
		sst = reap(serve, 20000);
	}
	runtime_killed = WIFSIGNALED(rst) && WTERMSIG(rst) == SIGKILL;
	t->docket_kills += docket_killed;
	t->runtime_kills += runtime_killed;
	t->kills += docket_killed || runtime_killed;
	if (mode >= 3)
		t->crash_points++;
	if (WIFEXITED(rst) && WEXITSTATUS(rst) == 0)
		t->clean_exits++;
	unlink(t->sock);
	check_trial(t);
}

/* A run with no kill: recover everything, start nothing new. */
static void final_run(torture *t)
{
	char *serve_argv[] = { (char *)t->docket, "-L", t->ledger, "serve", "--socket", t->sock, NULL };
	char *sim_argv[] = { (char *)t->sim, t->sock, t->receipts, t->acks, "1", "0", "0", NULL };
	pid_t serve = spawn(serve_argv, NULL), rt;
	int st;

	if (wait_socket(t->sock, serve) < 0)
		fail("docket serve did not start on", t->sock);
	rt = spawn(sim_argv, NULL);
	st = reap(rt, 60000);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("the final recovery run failed", t->ledger);
	kill(serve, SIGTERM);
	st = reap(serve, 20000);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("docket serve did not stop cleanly on SIGTERM", t->ledger);
	unlink(t->sock);
	check_trial(t);
	check_final(t);
}

int main(int argc, char **argv)
{
	torture t;
	const char *tmp = getenv("TMPDIR");
	long want;
	int trials = 0;
	char cmd[700];

	if (argc < 4) {
		fprintf(stderr, "usage: torture DOCKET SIM_RUNTIME KILLS [SEED]\n");
		return 2;
	}
	memset(&t, 0, sizeof(t));
	t.docket = argv[1];
	t.sim = argv[2];
	want = atol(argv[3]);
	t.seed = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : (unsigned)time(NULL);
	snprintf(t.dir, sizeof(t.dir), "%s/docket-torture-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(t.dir))
		fail("mkdtemp", strerror(errno));
	printf("torture: until %ld kill trials, seed %u, in %s\n", want, t.seed, t.dir);
	fflush(stdout);
	new_segment(&t);
	for (int n = 0; t.kills < want; n++) {
		if (n && n % SEGMENT == 0) {
			final_run(&t);
			new_segment(&t);
		}
		trial(&t, n);
		trials++;
	}
	final_run(&t);
	printf("torture: %d trials passed every check: %ld kill trials (docket killed while serving: %ld, "
	       "runtime killed: %ld), %ld aimed at named crash points, %ld runtimes finished before any kill; "
	       "%d ledger segment(s)\n",
	       trials, t.kills, t.docket_kills, t.runtime_kills, t.crash_points, t.clean_exits, t.segment);
	json_decref(t.dispatch_tokens);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t.dir);
	if (system(cmd) != 0)
		fprintf(stderr, "torture: could not remove %s\n", t.dir);
	return 0;
}
