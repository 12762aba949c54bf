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
 * Power-loss mode (--power SHIM, issue 11): SIGKILL keeps the page cache,
 * so it cannot show a missing fsync. Each trial runs docket serve with the
 * pwrcut.c shim preloaded, which logs every write and sync of data.mdb and
 * cuts the power (SIGKILL) just before a random one of them; the runtime
 * dies with it. The torture then rebuilds data.mdb from its copy before the
 * trial and the log, as a power cut could leave it (power_reconstruct:
 * everything before the last completed sync and every O_DSYNC write, plus a
 * random choice of the later writes: none, all, a prefix, or a random
 * subset with torn sectors), drops lock.mdb, and runs every check above on
 * that file. With --nosync-mutant the shim turns every sync into a no-op
 * (what MDB_NOSYNC amounts to) and the torture expects to catch a loss: it
 * exits 0 when a check fails, 1 when every trial passed.
 *
 * Window mode (--power SHIM --window, issue 34): serve acknowledges a
 * commit only after the next sync of the data file (its meta page is
 * written unsynced: write-path.md §4). Each trial cuts the power just
 * before the N-th sync instead of a random operation, every sync is slowed
 * by a few milliseconds (a reply sent before its sync would reach its
 * client), and a second client opens and closes sessions of its own the
 * whole time, so that one batch waits for its sync while the next is
 * committed. Every check above runs after each cut.
 *
 * Acks are checked by seq, event type, session and invocation. A runtime
 * that does not finish, or a serve that does not stop on SIGTERM, is a
 * failure reported as such, not something to kill quietly.
 *
 * usage: torture [--power SHIM [--nosync-mutant|--window]] DOCKET SIM_RUNTIME KILLS [SEED]
 * Runs trials until KILLS of them killed docket or the runtime (power
 * mode: until KILLS power cuts).
 * Long runs rotate to a fresh ledger every 200 trials so per-trial checks
 * stay cheap; every check still runs after every trial.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "docket/ledger.h"
#include "ledger/ledger_internal.h"

#define SEGMENT 200
/* A runtime runs at most this long (ms) before it counts as hung. */
#define HANG_MS 60000

typedef struct torture {
	const char *docket, *sim;
	char dir[512], ledger[600], sock[600], receipts[600], acks[600];
	unsigned seed;
	int segment;
	/* what the checks have seen so far in this segment */
	json_t *dispatch_tokens;   /* token -> true */
	uint64_t scanned;          /* events scanned for tokens */
	long kills, docket_kills, runtime_kills, crash_points, clean_exits;
	/* power-loss mode */
	const char *shim;          /* pwrcut.so, NULL: kill mode */
	int mutant;                /* --nosync-mutant: expect a failure */
	int window;                /* --window: cuts before syncs, slow syncs, a second client */
	char plog[600], asan[1200];
	long cuts, unsynced_kept, unsynced_dropped, torn, trials;
} torture;

static int expect_failure;
static const char *work_dir;  /* removed when the mutant is caught */
static int in_child;          /* in check_trial's child: a finding is exit 10 */

static unsigned rnd(torture *t, unsigned n)
{
	t->seed = t->seed * 1103515245u + 12345u;
	return (t->seed >> 16) % n;
}

/* A check failed: "torture: FAIL: <what> <detail>", exit 1 (with
 * --nosync-mutant that is the expected outcome: exit 0). */
/* Operations the power-cut shim logged, over all trials of this process. */
static long shim_ops_logged;

static void broken(const char *what, const char *detail);

static void fail(const char *what, const char *detail_in)
{
	char detail[1024];

	snprintf(detail, sizeof(detail), "%s", detail_in);
	detail[strcspn(detail, "\n")] = '\0';
	if (expect_failure && shim_ops_logged == 0)
		broken("the NOSYNC mutant 'lost' data but the shim logged nothing, so the loss proves nothing:", what);
	if (expect_failure && in_child) {
		printf("torture: the NOSYNC mutant lost data: %s %s\n", what, detail);
		fflush(stdout);
		_exit(10);
	}
	if (expect_failure) {
		char cmd[700];

		printf("torture: the NOSYNC mutant was caught: %s %s\n", what, detail);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "torture: could not remove %s\n", work_dir);
		exit(0);
	}
	fprintf(stderr, "torture: FAIL: %s %s\n", what, detail);
	exit(1);
}

/* The harness itself broke (not a finding): exit 2 in every mode. */
static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "torture: BROKEN: %s %s\n", what, detail);
	exit(2);
}

/* `power_at`: with the shim, cut the power before this operation (0: never). */
static pid_t spawn(torture *t, char *const argv[], const char *crash_env, unsigned long power_at)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* a torture that fails or is killed takes its serve and runtime
		 * with it: an orphan holding meson's pipe would hang the suite */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
			_exit(127);
		if (crash_env)
			setenv("DOCKET_CRASH_POINT", crash_env, 1);
		else
			unsetenv("DOCKET_CRASH_POINT");
		if (power_at) {
			char at[32];

			snprintf(at, sizeof(at), "%lu", power_at);
			setenv("LD_PRELOAD", t->shim, 1);
			setenv("PWRCUT_LOG", t->plog, 1);
			setenv(t->window ? "PWRCUT_SYNC_AT" : "PWRCUT_AT", at, 1);
			if (t->window)
				setenv("PWRCUT_SLOW_SYNC_MS", "3", 1);
			if (t->mutant)
				setenv("PWRCUT_NOSYNC", "1", 1);
			/* a preloaded shim comes before the sanitizer runtime */
			setenv("ASAN_OPTIONS", t->asan, 1);
		}
		if (!getenv("TORTURE_VERBOSE")) {
			FILE *devnull = freopen("/dev/null", "w", stderr);

			(void)devnull;
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* `docket -L LEDGER serve --socket SOCK` under spawn(). */
static pid_t spawn_serve(torture *t, const char *crash_env, unsigned long power_at)
{
	char *argv[] = { (char *)t->docket, "-L", t->ledger, "serve", "--socket", t->sock, NULL };

	return spawn(t, argv, crash_env, power_at);
}

/* Wait up to 10 s for serve's socket; -1 if serve ended first (its status
 * in *status) or never made it. */
static int wait_socket_status(const char *path, pid_t serve, int *status, int *ended)
{
	struct stat st;

	*ended = 0;
	for (int i = 0; i < 10000; i++) {
		if (stat(path, &st) == 0)
			return 0;
		if (waitpid(serve, status, WNOHANG) == serve) {
			*ended = 1;
			return -1;
		}
		usleep(1000);
	}
	return -1;
}

static int wait_socket(const char *path, pid_t serve)
{
	int status, ended;

	return wait_socket_status(path, serve, &status, &ended);
}

/* Wait for `pid` up to `ms`; a process still running then is a failure. */
static int reap_or_fail(pid_t pid, int ms, const char *what, const char *detail)
{
	int status = 0;

	for (int i = 0; i < ms; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fail(what, detail);
	return status;
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
		broken("cannot init", t->ledger);
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
		fail("the ledger does not open:", docket_error_last()->message);
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

		if (line[strspn(line, " \n")] == '\0')
			continue; /* the executor's padding to a page boundary (sim_runtime.c receipt_align) */
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

/* The event type a serve method appends (the one its reply's seq names). */
static const char *method_event(const char *method)
{
	static const char *const map[][2] = {
		{ "runtime.start", "runtime.started" }, { "session.open", "session.opened" },
		{ "policy.set", "policy.revised" }, { "tool.intent", "tool.intent" },
		{ "approval.request", "approval.requested" }, { "approval.settle", "approval.settled" },
		{ "tool.dispatch", "tool.dispatched" }, { "tool.complete", "tool.completed" },
		{ "session.close", "session.closed" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i][0], method) == 0)
			return map[i][1];
	return NULL;
}

/* 1 when `want` ("-": none) is what the event carries in `field`. */
static int field_is(json_t *ev, const char *field, const char *want)
{
	const char *got = json_string_value(json_object_get(ev, field));

	if (strcmp(want, "-") == 0)
		return 1;
	return got && strcmp(got, want) == 0;
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
		if (!method_event(method))
			broken("an ack of an unknown method", line);
		if (!field_is(ev, "type", method_event(method)) || !field_is(ev, "session", session) ||
		    !field_is(ev, "invocation", inv))
			fail("an acknowledged seq holds another event", line);
		json_decref(ev);
	}
	fclose(f);
}

static void check_verify(docket_ledger *l)
{
	docket_verify_report rep;

	if (docket_ledger_verify(l, &rep) != 0)
		fail("verify could not run:", docket_error_last()->message);
	if (!rep.ok)
		fail("verify failed", rep.problem);
}

static void check_trial_here(torture *t)
{
	docket_ledger *l = open_ledger(t->ledger);

	check_receipts(t, l);
	check_acks(t, l);
	check_verify(l);
	docket_ledger_free(l);
}

/*
 * The checks. The NOSYNC mutant leaves files a real power cut could leave
 * in any shape, and LMDB trusts its pages: there the checks run in a child,
 * and a crash while reading the ledger is one more way the loss is caught
 * (the child's findings end it with exit 10, its stdout saying which).
 */
static void check_trial(torture *t)
{
	int status = 0;
	pid_t pid;

	if (!t->mutant) {
		check_trial_here(t);
		return;
	}
	fflush(stdout);
	if ((pid = fork()) == 0) {
		in_child = 1;
		check_trial_here(t);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 10)
		fail("(a check above)", "");
	fail("reading the ledger after the cut crashed:",
	     WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "it ended with an unexpected status");
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
	char seed[32], crash[64], *sim_argv[10];
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
	serve = spawn_serve(t, docket_crash, 0);
	if (wait_socket(t->sock, serve) < 0)
		broken("docket serve did not start on", t->sock);
	sim_argv[0] = (char *)t->sim;
	sim_argv[1] = t->sock;
	sim_argv[2] = t->receipts;
	sim_argv[3] = t->acks;
	sim_argv[4] = seed;
	sim_argv[5] = "2";
	sim_argv[6] = "5";
	sim_argv[7] = (char *)runtime_crash;
	sim_argv[8] = NULL;
	rt = spawn(t, sim_argv, NULL, 0);
	if (mode <= 2) {
		usleep(1000 * (1 + rnd(t, 40)));
		if (mode == 0 || mode == 2)
			kill(serve, SIGKILL);
		if (mode == 1 || mode == 2)
			kill(rt, SIGKILL);
	}
	rst = reap_or_fail(rt, HANG_MS, "the runtime hung: it did not finish within 60 s in", t->ledger);
	/* docket may still run (no kill yet, or a crash point never reached):
	 * stop it either way; that stop is not counted as a kill */
	if (waitpid(serve, &sst, WNOHANG) == serve) {
		docket_killed = WIFSIGNALED(sst) && WTERMSIG(sst) == SIGKILL;
	} else if (rnd(t, 2)) {
		kill(serve, SIGTERM);
		sst = reap_or_fail(serve, 20000, "docket serve did not stop within 20 s of SIGTERM in", t->ledger);
	} else {
		kill(serve, SIGKILL);
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

/* ---- power loss ---- */

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n = 0;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    !(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		broken("cannot read", path);
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static uint64_t be64_at(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

typedef struct pwr_op {
	char op;             /* W T S */
	int dsync;
	uint64_t off, len;
	const uint8_t *data;
} pwr_op;

/* The shim's log as operations; a record cut short by the power cut ends it. */
static size_t parse_log(const uint8_t *log, size_t len, pwr_op **out)
{
	size_t n = 0, cap = 0, i = 0;
	pwr_op *ops = NULL;

	while (i + 28 <= len && memcmp(log + i, "PWR1", 4) == 0) {
		uint64_t dlen = be64_at(log + i + 16);

		if (dlen > len - i - 28 || memcmp(log + i + 24 + dlen, "END1", 4) != 0)
			break;
		if (n == cap && !(ops = realloc(ops, (cap = cap ? 2 * cap : 256) * sizeof(*ops))))
			broken("out of memory", "");
		ops[n].op = (char)log[i + 4];
		ops[n].dsync = log[i + 5] & 1;
		ops[n].off = be64_at(log + i + 8);
		ops[n].len = dlen;
		ops[n].data = log + i + 24;
		n++;
		i += 28 + dlen;
	}
	*out = ops;
	return n;
}

static void file_put(uint8_t **file, size_t *size, size_t *cap, uint64_t off, const uint8_t *p, uint64_t n)
{
	if (off + n > *cap) {
		*cap = (size_t)(off + n) * 2;
		if (!(*file = realloc(*file, *cap)))
			broken("out of memory", "");
	}
	if (off > *size)
		memset(*file + *size, 0, (size_t)(off - *size));
	memcpy(*file + off, p, (size_t)n);
	if (off + n > *size)
		*size = (size_t)(off + n);
}

/* A write, whole or (torn) only some of its 512-byte sectors. */
static void apply_write(torture *t, uint8_t **file, size_t *size, size_t *cap, const pwr_op *op, int tear)
{
	uint64_t at = op->off, end = op->off + op->len;

	if (!tear) {
		file_put(file, size, cap, op->off, op->data, op->len);
		return;
	}
	t->torn++;
	while (at < end) {
		uint64_t next = (at / 512 + 1) * 512;

		if (next > end)
			next = end;
		if (rnd(t, 2))
			file_put(file, size, cap, at, op->data + (at - op->off), next - at);
		at = next;
	}
}

/*
 * data.mdb as a power cut during the trial could leave it (the file-system
 * model of docs/architecture.md): the copy from before the trial, then
 * every logged operation in order that is durable (before the last
 * completed sync, or a write through an O_DSYNC descriptor) and, of the
 * others, those this trial's choice keeps: none, all, a prefix, or each
 * one with probability 1/2 and possibly torn.
 */
static void power_reconstruct(torture *t, const uint8_t *base, size_t base_len)
{
	size_t log_len, size = base_len, cap = base_len + 1, n, last_sync = 0;
	uint8_t *log = slurp(t->plog, &log_len), *file = malloc(base_len + 1);
	unsigned choice = rnd(t, 4);
	pwr_op *ops = NULL;
	char path[700];
	size_t prefix;
	FILE *f;

	if (!file)
		broken("out of memory", "");
	memcpy(file, base, base_len);
	n = log ? parse_log(log, log_len, &ops) : 0;
	shim_ops_logged += (long)n;
	for (size_t i = 0; i < n; i++)
		if (ops[i].op == 'S')
			last_sync = i + 1;
	prefix = n > last_sync ? last_sync + rnd(t, (unsigned)(n - last_sync + 1)) : n;
	for (size_t i = 0; i < n; i++) {
		int durable = i < last_sync || (ops[i].op == 'W' && ops[i].dsync);
		int keep = durable || choice == 1 || (choice == 2 && i < prefix) || (choice == 3 && rnd(t, 2));

		if (ops[i].op == 'S')
			continue;
		if (!durable)
			keep ? t->unsynced_kept++ : t->unsynced_dropped++;
		if (!keep)
			continue;
		if (ops[i].op == 'T')
			size = ops[i].off < size ? (size_t)ops[i].off : size;
		else
			apply_write(t, &file, &size, &cap, &ops[i], !durable && choice == 3 && rnd(t, 2) == 0);
	}
	snprintf(path, sizeof(path), "%s/data.mdb", t->ledger);
	if (!(f = fopen(path, "wb")) || fwrite(file, 1, size, f) != size || fclose(f) != 0)
		broken("cannot write", path);
	snprintf(path, sizeof(path), "%s/lock.mdb", t->ledger);
	unlink(path); /* shared memory does not survive a power cut */
	free(ops);
	free(log);
	free(file);
}

/*
 * The window mode's second client (a child process): it opens and closes
 * sessions of its own until serve goes away, logging each acknowledged
 * seq to the acks file as the runtime does. Its sessions hold no call, so
 * nothing of it is ever left to recover.
 */
static pid_t spawn_noise(torture *t, int n)
{
	pid_t pid = fork();
	FILE *in, *acks;
	int fd = -1;

	if (pid != 0)
		return pid;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
		_exit(127);
	for (int tries = 0; tries < 200 && fd < 0; tries++) {
		struct sockaddr_un addr;

		memset(&addr, 0, sizeof(addr));
		addr.sun_family = AF_UNIX;
		if (strlen(t->sock) >= sizeof(addr.sun_path))
			_exit(0);
		memcpy(addr.sun_path, t->sock, strlen(t->sock) + 1);
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
			close(fd);
			fd = -1;
			usleep(10000);
		}
	}
	if (fd < 0 || !(in = fdopen(fd, "r+")) || !(acks = fopen(t->acks, "a")))
		_exit(0);
	for (long k = 0;; k++) {
		static const char *const methods[] = { "session.open", "session.close" };
		char *line = NULL;
		size_t cap = 0;

		for (int m = 0; m < 2; m++) {
			json_t *reply, *seq;

			fprintf(in, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":"
				"{\"session\":\"noise-%u-%d-%ld\"%s}}\n", 2 * k + m, methods[m], t->seed, n, k,
				m ? "" : ",\"cwd\":\"/sim\"");
			if (fflush(in) != 0 || getline(&line, &cap, in) <= 0)
				_exit(0); /* serve went away */
			reply = json_loads(line, 0, NULL);
			seq = json_object_get(json_object_get(reply, "result"), "seq");
			if (json_is_integer(seq)) {
				fprintf(acks, "%lld %s noise-%u-%d-%ld -\n", (long long)json_integer_value(seq),
					methods[m], t->seed, n, k);
				fflush(acks);
			}
			json_decref(reply);
		}
		free(line);
	}
}

/* One trial under the shim: serve and runtime until the power cut. */
static void power_trial(torture *t, int n)
{
	char seed[32], path[700], *sim_argv[9];
	unsigned long cut = t->window ? 1 + rnd(t, 40) : 1 + rnd(t, 240);
	pid_t noise = 0;
	uint8_t *base;
	size_t base_len;
	int sst = 0, rst, ended;
	pid_t serve, rt;

	snprintf(path, sizeof(path), "%s/data.mdb", t->ledger);
	if (!(base = slurp(path, &base_len)))
		broken("no data file at", path);
	unlink(t->plog);
	snprintf(seed, sizeof(seed), "%u", t->seed ^ (unsigned)n);
	serve = spawn_serve(t, NULL, cut);
	if (wait_socket_status(t->sock, serve, &sst, &ended) < 0) {
		/* the cut can come while serve is still opening the ledger */
		if (!ended)
			broken("docket serve did not start on", t->sock);
	} else {
		sim_argv[0] = (char *)t->sim;
		sim_argv[1] = t->sock;
		sim_argv[2] = t->receipts;
		sim_argv[3] = t->acks;
		sim_argv[4] = seed;
		sim_argv[5] = "2";
		sim_argv[6] = "5";
		sim_argv[7] = NULL;
		rt = spawn(t, sim_argv, NULL, 0);
		if (t->window)
			noise = spawn_noise(t, n);
		/* the power cut takes the runtime too: as soon as serve is gone */
		int serve_done = 0;

		for (int i = 0; i < HANG_MS && rt; i++) {
			if (waitpid(serve, &sst, WNOHANG) == serve) {
				serve_done = 1;
				kill(rt, SIGKILL);
				waitpid(rt, &rst, 0);
				rt = 0;
			} else if (waitpid(rt, &rst, WNOHANG) == rt) {
				rt = 0;
			} else {
				usleep(1000);
			}
		}
		if (rt)
			reap_or_fail(rt, 0, "the runtime hung: it did not finish within 60 s in", t->ledger);
		if (noise > 0) {
			kill(noise, SIGKILL);
			waitpid(noise, NULL, 0);
		}
		if (!serve_done && waitpid(serve, &sst, WNOHANG) != serve) {
			kill(serve, SIGTERM);
			sst = reap_or_fail(serve, 20000, "docket serve did not stop within 20 s of SIGTERM in",
					   t->ledger);
		}
	}
	if (WIFSIGNALED(sst) && WTERMSIG(sst) == SIGKILL) {
		t->cuts++;
		t->kills++;
	}
	unlink(t->sock);
	power_reconstruct(t, base, base_len);
	free(base);
	check_trial(t);
}

/* A run with no kill: recover everything, start nothing new. */
static void final_run(torture *t)
{
	char *sim_argv[] = { (char *)t->sim, t->sock, t->receipts, t->acks, "1", "0", "0", NULL };
	pid_t serve = spawn_serve(t, NULL, 0), rt;
	int st;

	if (wait_socket(t->sock, serve) < 0)
		fail("docket serve did not start on", t->sock);
	rt = spawn(t, sim_argv, NULL, 0);
	st = reap_or_fail(rt, HANG_MS, "the final recovery run hung in", t->ledger);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char why[700];

		snprintf(why, sizeof(why), "(runtime %s %d) in %s", WIFEXITED(st) ? "exit" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), t->ledger);
		fail("the final recovery run failed", why);
	}
	kill(serve, SIGTERM);
	st = reap_or_fail(serve, 20000, "docket serve did not stop within 20 s of SIGTERM in", t->ledger);
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

	memset(&t, 0, sizeof(t));
	while (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
		if (strcmp(argv[1], "--power") == 0 && argc > 2) {
			t.shim = argv[2];
			argv += 2;
			argc -= 2;
		} else if (strcmp(argv[1], "--window") == 0) {
			t.window = 1;
			argv++;
			argc--;
		} else if (strcmp(argv[1], "--nosync-mutant") == 0) {
			t.mutant = expect_failure = 1;
			argv++;
			argc--;
		} else {
			break;
		}
	}
	if (argc < 4 || ((t.mutant || t.window) && !t.shim) || (t.mutant && t.window)) {
		fprintf(stderr, "usage: torture [--power SHIM [--nosync-mutant|--window]] DOCKET SIM_RUNTIME KILLS [SEED]\n");
		return 2;
	}
	t.docket = argv[1];
	t.sim = argv[2];
	want = atol(argv[3]);
	t.seed = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : (unsigned)time(NULL);
	snprintf(t.dir, sizeof(t.dir), "%s/docket-torture-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(t.dir))
		broken("mkdtemp", strerror(errno));
	work_dir = t.dir;
	snprintf(t.plog, sizeof(t.plog), "%s/pwrcut.log", t.dir);
	snprintf(t.asan, sizeof(t.asan), "%s%sverify_asan_link_order=0",
		 getenv("ASAN_OPTIONS") ? getenv("ASAN_OPTIONS") : "", getenv("ASAN_OPTIONS") ? ":" : "");
	printf("torture: until %ld %s, seed %u, in %s\n", want,
	       t.mutant ? "power cuts of the NOSYNC mutant (a loss must be caught)"
			: t.window ? "power cuts before a sync (window)" : t.shim ? "power-cut trials" : "kill trials",
	       t.seed, t.dir);
	fflush(stdout);
	new_segment(&t);
	for (int n = 0; t.kills < want; n++) {
		if (n && n % SEGMENT == 0) {
			final_run(&t);
			new_segment(&t);
		}
		if (t.shim)
			power_trial(&t, n);
		else
			trial(&t, n);
		trials++;
	}
	final_run(&t);
	/* a shim that interposes nothing (hidden symbols, a static libc) would
	 * make every cut a cut before the trial: say so rather than pass or fail */
	if (t.shim && shim_ops_logged == 0)
		broken("the power-cut shim logged no write or sync of the data file:", t.shim);
	if (t.mutant) {
		printf("torture: FAIL: %d power cuts of the NOSYNC mutant and no check noticed a loss\n", trials);
		return 1;
	}
	if (t.shim)
		printf("torture: %d power-cut trials passed every check: %ld cuts inside serve, %ld unsynced "
		       "writes kept and %ld lost across them, %ld torn, %d ledger segment(s)\n",
		       trials, t.cuts, t.unsynced_kept, t.unsynced_dropped, t.torn, t.segment);
	else
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
