/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_hook.c: what live capture adds to every tool call. Claude Code and
 * Codex run `docket hook claude` as a new process per hook event, so the
 * cost is exec + ledger open + one durable append. Measured per event, p50
 * and p99, over N events (default 1,000: PreToolUse and PostToolUse pairs)
 * on a warm ledger, beside two baselines taken in the same run:
 *
 *   exec_true     fork+exec of true(1): the floor any command hook pays
 *   exec_version  fork+exec of `docket --version`: docket's own start-up
 *                 (the dynamic loader: libgit2, libcrypto ... relocations)
 *   fdatasync     a 200-byte append + fdatasync on a file in the same
 *                 directory: the floor of one durable write
 *
 * With DOCKET_HOOK_BIN (the lean binary integrate installs: docket-hook-fast
 * where it is built, which hands events to the ledger's hook server and runs
 * docket-hook beside it for the rest; else docket-hook) the
 * same events also go through it, interleaved, as "lean"; then a second pass
 * runs it alone on a warm ledger of its own, interleaved with true(1) only
 * ("lean_alone": what a client that installed it pays, without the full
 * binary's appends to another ledger between its events). Then three more
 * passes of docket-hook alone (issue 27):
 *
 *   enforce       --enforce --policy (a Claude settings file): the policy is
 *                 loaded and evaluated for every event; allowed calls
 *   denied        the same, every call denied (the deny answer, the intent
 *                 and its denial in one append)
 *   spool         another process (a docket writer) holds the ledger's
 *                 writer lock: every record goes to the spool's journal
 *                 (one append + fdatasync per event); the first event makes
 *                 the journal ("spool_first_ms", kept out of the
 *                 percentiles), the next ones append to it;
 *                 after the lock is released, events that write nothing
 *                 fold them, 256 per event ("spool_fold_events", the
 *                 slowest in "spool_fold_max_ms"); the ledger must then
 *                 hold every call
 *
 *   bench_hook DOCKET_BIN [DOCKET_HOOK_BIN] [--quick] [--keep] [--events N]
 *
 * Prints one JSON line (latencies in ms and the ratios to the baselines).
 * --quick (the test) runs 40 events and checks that every hook answered 0
 * and the ledger holds every call, complete.
 */
#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "docket/ledger.h"
#include "ledger/ledger_sys.h"
#include "ledger/spool.h"

/* Run argv with `input` on stdin and stdout to /dev/null; its exit status. */
static int run(char *const *argv, const char *input, size_t len)
{
	int in[2], status = -1;
	pid_t pid;

	if (pipe(in) != 0)
		return -1;
	if ((pid = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(in[0], 0);
		dup2(null, 1);
		close(in[0]);
		close(in[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	if (pid > 0 && len && write(in[1], input, len) != (ssize_t)len)
		bench_fail("write", "short write to the hook's stdin");
	close(in[1]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void event(char *out, size_t cap, const char *name, unsigned i)
{
	snprintf(out, cap,
		 "{\"session_id\":\"bench\",\"transcript_path\":\"/nonexistent/t.jsonl\",\"cwd\":\"/w\","
		 "\"permission_mode\":\"default\",\"hook_event_name\":\"%s\",\"tool_name\":\"Bash\","
		 "\"tool_input\":{\"command\":\"echo %u\"},\"tool_use_id\":\"toolu_%u\"%s}\n",
		 name, i, i, strcmp(name, "PostToolUse") == 0
			 ? ",\"tool_response\":{\"stdout\":\"ok\",\"stderr\":\"\"},\"duration_ms\":3" : "");
}

/* A child that holds the writer lock of the ledger at `path` until
 * `*release` is closed: a docket writer in a long write transaction (a
 * long `record`, `compact`), which holds docket's writer lock as well as
 * LMDB's (store_txn_begin). */
static pid_t hold_lock(const char *path, int *release)
{
	int ready[2], go[2];
	char c;
	pid_t pid;

	if (pipe(ready) != 0 || pipe(go) != 0)
		bench_fail("pipe", "cannot make a pipe");
	if ((pid = fork()) == 0) {
		docket_ledger *l = NULL;
		MDB_txn *txn = NULL;

		close(ready[0]);
		close(go[1]);
		if (docket_ledger_open(&l, path, NULL) != 0 || store_txn_begin(&txn, l, 0) != 0 ||
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
	if (pid < 0 || read(ready[0], &c, 1) != 1)
		bench_fail("lock", "the child could not hold the writer lock");
	close(ready[0]);
	*release = go[1];
	return pid;
}

static void release_lock(pid_t pid, int release)
{
	int status = -1;

	close(release);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		bench_fail("lock", "the lock holder did not end cleanly");
}

static void denied_event(char *out, size_t cap, unsigned i)
{
	snprintf(out, cap,
		 "{\"session_id\":\"bench\",\"transcript_path\":\"/nonexistent/t.jsonl\",\"cwd\":\"/w\","
		 "\"permission_mode\":\"default\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
		 "\"tool_input\":{\"command\":\"rm -rf build%u\"},\"tool_use_id\":\"toolu_%u\"}\n", i, i);
}

/* n events of docket-hook (argv) on a warm ledger of its own: Pre/Post pairs,
 * or (denied) PreToolUse events the policy denies. */
static void lean_pass(bench_lat *lat, char **argv, unsigned n, int denied)
{
	char buf[1024];

	event(buf, sizeof(buf), "SessionStart", 0);
	if (run(argv, buf, strlen(buf)) != 0)
		bench_fail("SessionStart", "docket-hook did not answer 0");
	for (unsigned k = 0; k < n; k++) {
		uint64_t t0;

		if (denied)
			denied_event(buf, sizeof(buf), k);
		else
			event(buf, sizeof(buf), k % 2 ? "PostToolUse" : "PreToolUse", k / 2);
		t0 = bench_now_ns();
		if (run(argv, buf, strlen(buf)) != 0)
			bench_fail("docket-hook", "the hook did not answer 0");
		bench_lat_push(lat, bench_now_ns() - t0);
	}
}

/* "<invocations>*1000000 + <pending>" of session bench in the ledger at `path`. */
static uint64_t ledger_facts(const char *path);

static int count_cb(void *ctx, const docket_session_info *info)
{
	*(uint64_t *)ctx = info->invocations * 1000000 + info->pending;
	return 0;
}

static uint64_t ledger_facts(const char *path)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	uint64_t facts = 0;

	int busy = 0;

	/* a reader folds first: the hooks' detached folds may still be running */
	if (docket_ledger_open(&l, path, &oo) != 0 ||
	    docket_spool_fold_all_by(l, docket_spool_now_ms() + 5000, &busy) != 0 ||
	    docket_ledger_session(l, "bench", count_cb, &facts) != 0)
		bench_docket_fail("read the ledger");
	docket_ledger_free(l);
	return facts;
}

/* The enforce, denied and spool passes of docket-hook; their figures into `out`. */
static void lean_more(json_t *out, char **lean_argv, const char *dir, unsigned n)
{
	char *enf_ledger = bench_path_join(dir, "ledger-enforce"), *den_ledger = bench_path_join(dir, "ledger-denied");
	char *spool_ledger = bench_path_join(dir, "ledger-spool"), *policy = bench_path_join(dir, "policy.json");
	char policy_src[4200], enforce_flag[] = "--enforce", policy_flag[] = "--policy", *argv[9];
	bench_lat enf = { NULL, 0, 0 }, den = { NULL, 0, 0 }, spool = { NULL, 0, 0 };
	uint64_t t0, first = 0, fold;
	int folds = 0;
	const char *deny = "{\"permissions\":{\"deny\":[\"Bash(rm:*)\"]}}\n";
	char buf[1024];
	int fd = -1, release;
	pid_t holder;

	if (!enf_ledger || !den_ledger || !spool_ledger || !policy ||
	    (fd = open(policy, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 ||
	    write(fd, deny, strlen(deny)) != (ssize_t)strlen(deny)) {
		bench_fail("policy", "cannot write the policy");
		exit(1);
	}
	close(fd);
	snprintf(policy_src, sizeof(policy_src), "claude:%s", policy);
	memcpy(argv, lean_argv, 5 * sizeof(*argv));
	argv[5] = enforce_flag;
	argv[6] = policy_flag;
	argv[7] = policy_src;
	argv[8] = NULL;
	argv[2] = enf_ledger;
	lean_pass(&enf, argv, n, 0);
	if (ledger_facts(enf_ledger) != (uint64_t)(n / 2) * 1000000)
		bench_fail("ledger", "enforce: not every call is recorded and complete");
	argv[2] = den_ledger;
	lean_pass(&den, argv, n, 1);
	if (ledger_facts(den_ledger) != (uint64_t)n * 1000000)
		bench_fail("ledger", "denied: not every call is recorded and denied");
	/* the spool: a warm ledger, then another process holds its writer lock */
	argv[2] = spool_ledger;
	argv[5] = NULL;
	event(buf, sizeof(buf), "SessionStart", 0);
	if (run(argv, buf, strlen(buf)) != 0)
		bench_fail("SessionStart", "docket-hook did not answer 0");
	holder = hold_lock(spool_ledger, &release);
	for (unsigned k = 0; k < n; k++) {
		event(buf, sizeof(buf), k % 2 ? "PostToolUse" : "PreToolUse", k / 2);
		t0 = bench_now_ns();
		if (run(argv, buf, strlen(buf)) != 0)
			bench_fail("docket-hook", "the hook did not answer 0 with the lock held");
		if (k == 0)
			first = bench_now_ns() - t0;
		else
			bench_lat_push(&spool, bench_now_ns() - t0);
	}
	release_lock(holder, release);
	/* events that write nothing fold what waits, DOCKET_SPOOL_FOLD_CAP at a time */
	fold = 0;
	for (unsigned k = 0; k <= 2 * n / DOCKET_SPOOL_FOLD_CAP + 2; k++) {  /* up to 2 entries an event */
		size_t left = 0;

		if (docket_spool_count(spool_ledger, &left) != 0 || left == 0)
			break;
		event(buf, sizeof(buf), "Notification", 0);
		t0 = bench_now_ns();
		if (run(argv, buf, strlen(buf)) != 0)
			bench_fail("docket-hook", "the hook did not answer 0 after the lock was released");
		if (bench_now_ns() - t0 > fold)
			fold = bench_now_ns() - t0;
		folds++;
	}
	if (ledger_facts(spool_ledger) != (uint64_t)(n / 2) * 1000000)
		bench_fail("ledger", "spool: not every call reached the chain, complete");
	if (json_object_set_new(out, "lean_enforce_p50_ms", json_real(bench_lat_ms(&enf, 50))) < 0 ||
	    json_object_set_new(out, "lean_enforce_p99_ms", json_real(bench_lat_ms(&enf, 99))) < 0 ||
	    json_object_set_new(out, "lean_denied_p50_ms", json_real(bench_lat_ms(&den, 50))) < 0 ||
	    json_object_set_new(out, "lean_denied_p99_ms", json_real(bench_lat_ms(&den, 99))) < 0 ||
	    json_object_set_new(out, "lean_spool_p50_ms", json_real(bench_lat_ms(&spool, 50))) < 0 ||
	    json_object_set_new(out, "lean_spool_p99_ms", json_real(bench_lat_ms(&spool, 99))) < 0 ||
	    json_object_set_new(out, "spool_first_ms", json_real((double)first / 1e6)) < 0 ||
	    json_object_set_new(out, "spool_fold_max_ms", json_real((double)fold / 1e6)) < 0 ||
	    json_object_set_new(out, "spool_fold_events", json_integer(folds)) < 0)
		bench_fail("json", "out of memory");
	bench_lat_dispose(&enf);
	bench_lat_dispose(&den);
	bench_lat_dispose(&spool);
	free(enf_ledger);
	free(den_ledger);
	free(spool_ledger);
	free(policy);
}

int main(int argc, char **argv)
{
	int quick = 0, keep = 0, i;
	unsigned n = 1000, k;
	bench_lat hook = { NULL, 0, 0 }, base_exec = { NULL, 0, 0 }, base_sync = { NULL, 0, 0 };
	bench_lat base_ver = { NULL, 0, 0 }, lean = { NULL, 0, 0 };
	bench_lat alone = { NULL, 0, 0 }, alone_true = { NULL, 0, 0 };
	char *lean_argv[6], *lean_ledger = NULL;
	const char *lean_bin = NULL;
	char version_flag[] = "--version", *ver_argv[3];
	char *dir, *ledger, *sync_path, buf[1024], *hook_argv[6], *true_argv[2];
	char true_bin[] = "/bin/true", l_flag[] = "-L", hook_word[] = "hook", client[] = "claude";
	json_t *out;
	int fd;

	bench_init("bench_hook");
	for (i = 2; i < argc; i++) {
		if (bench_common_flag(argv[i], &quick, &keep))
			continue;
		if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
			n = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (argv[i][0] != '-')
			lean_bin = argv[i];
	}
	if (argc < 2 || n < 2) {
		fprintf(stderr, "usage: bench_hook DOCKET_BIN [--quick] [--keep] [--events N]\n");
		return 2;
	}
	if (quick)
		n = 40;
	if (!(dir = bench_tempdir(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", "docket-bench-hook-XXXXXX")))
		return 1;
	ledger = bench_path_join(dir, "ledger");
	sync_path = bench_path_join(dir, "baseline.log");
	hook_argv[0] = argv[1];
	hook_argv[1] = l_flag;
	hook_argv[2] = ledger;
	hook_argv[3] = hook_word;
	hook_argv[4] = client;
	hook_argv[5] = NULL;
	true_argv[0] = true_bin;
	true_argv[1] = NULL;
	ver_argv[0] = argv[1];
	ver_argv[1] = version_flag;
	ver_argv[2] = NULL;
	lean_ledger = bench_path_join(dir, "ledger-lean");
	memcpy(lean_argv, hook_argv, sizeof(lean_argv));
	lean_argv[0] = (char *)lean_bin;
	lean_argv[2] = lean_ledger;
	setenv("HOME", dir, 1);
	setenv("DOCKET_CLAUDE_MANAGED_SETTINGS", "/nonexistent", 1);
	/* warm: the ledger exists, the session is open, the binary is in the page cache */
	event(buf, sizeof(buf), "SessionStart", 0);
	if (run(hook_argv, buf, strlen(buf)) != 0)
		bench_fail("SessionStart", "the hook did not answer 0");
	if ((fd = open(sync_path, O_WRONLY | O_CREAT | O_APPEND, 0600)) < 0)
		bench_fail("open", sync_path);
	bench_settle_disk(dir);
	for (k = 0; k < n; k++) {
		uint64_t t0;

		/* interleaved, so that the three see the same machine load */
		event(buf, sizeof(buf), k % 2 ? "PostToolUse" : "PreToolUse", k / 2);
		t0 = bench_now_ns();
		if (run(hook_argv, buf, strlen(buf)) != 0)
			bench_fail("hook", "the hook did not answer 0");
		bench_lat_push(&hook, bench_now_ns() - t0);
		if (lean_bin) {
			t0 = bench_now_ns();
			if (run(lean_argv, buf, strlen(buf)) != 0)
				bench_fail("docket-hook", "the hook did not answer 0");
			bench_lat_push(&lean, bench_now_ns() - t0);
		}
		t0 = bench_now_ns();
		if (run(true_argv, NULL, 0) != 0)
			bench_fail("true", "exit status");
		bench_lat_push(&base_exec, bench_now_ns() - t0);
		t0 = bench_now_ns();
		if (run(ver_argv, NULL, 0) != 0)
			bench_fail("docket --version", "exit status");
		bench_lat_push(&base_ver, bench_now_ns() - t0);
		t0 = bench_now_ns();
		if (fd >= 0 && (write(fd, buf, 200) != 200 || fdatasync(fd) != 0))
			bench_fail("fdatasync", sync_path);
		bench_lat_push(&base_sync, bench_now_ns() - t0);
	}
	if (fd >= 0)
		close(fd);
	if (lean_bin) {
		char *alone_ledger = bench_path_join(dir, "ledger-alone");

		lean_argv[2] = alone_ledger;
		event(buf, sizeof(buf), "SessionStart", 0);
		if (!alone_ledger || run(lean_argv, buf, strlen(buf)) != 0)
			bench_fail("SessionStart", "docket-hook did not answer 0");
		for (k = 0; k < n; k++) {
			uint64_t t0;

			event(buf, sizeof(buf), k % 2 ? "PostToolUse" : "PreToolUse", k / 2);
			t0 = bench_now_ns();
			if (run(lean_argv, buf, strlen(buf)) != 0)
				bench_fail("docket-hook", "the hook did not answer 0");
			bench_lat_push(&alone, bench_now_ns() - t0);
			t0 = bench_now_ns();
			if (run(true_argv, NULL, 0) != 0)
				bench_fail("true", "exit status");
			bench_lat_push(&alone_true, bench_now_ns() - t0);
		}
		lean_argv[2] = lean_ledger;
		free(alone_ledger);
	}
	if (ledger_facts(ledger) != (uint64_t)(n / 2) * 1000000)
		bench_fail("ledger", "not every call is recorded and complete");
	out = json_pack("{si sf sf sf sf sf sf sf sf sf sf}", "events", (int)n,
			"exec_version_p50_ms", bench_lat_ms(&base_ver, 50), "exec_version_p99_ms", bench_lat_ms(&base_ver, 99),
			"hook_p50_ms", bench_lat_ms(&hook, 50), "hook_p99_ms", bench_lat_ms(&hook, 99),
			"exec_true_p50_ms", bench_lat_ms(&base_exec, 50), "exec_true_p99_ms", bench_lat_ms(&base_exec, 99),
			"fdatasync_p50_ms", bench_lat_ms(&base_sync, 50), "fdatasync_p99_ms", bench_lat_ms(&base_sync, 99),
			"hook_over_exec_p50", bench_lat_ms(&hook, 50) / (bench_lat_ms(&base_exec, 50) + 1e-9),
			"hook_over_fdatasync_p50", bench_lat_ms(&hook, 50) / (bench_lat_ms(&base_sync, 50) + 1e-9));
	if (lean_bin && (json_object_set_new(out, "lean_hook_p50_ms", json_real(bench_lat_ms(&lean, 50))) < 0 ||
			 json_object_set_new(out, "lean_hook_p99_ms", json_real(bench_lat_ms(&lean, 99))) < 0 ||
			 json_object_set_new(out, "lean_alone_p50_ms", json_real(bench_lat_ms(&alone, 50))) < 0 ||
			 json_object_set_new(out, "lean_alone_p99_ms", json_real(bench_lat_ms(&alone, 99))) < 0 ||
			 json_object_set_new(out, "lean_alone_exec_true_p50_ms", json_real(bench_lat_ms(&alone_true, 50))) < 0 ||
			 json_object_set_new(out, "lean_alone_exec_true_p99_ms", json_real(bench_lat_ms(&alone_true, 99))) < 0))
		bench_fail("json", "out of memory");
	if (lean_bin)
		lean_more(out, lean_argv, dir, n);
	bench_print_result(out);
	bench_lat_dispose(&hook);
	bench_lat_dispose(&base_exec);
	bench_lat_dispose(&base_sync);
	bench_lat_dispose(&base_ver);
	bench_lat_dispose(&lean);
	bench_lat_dispose(&alone);
	bench_lat_dispose(&alone_true);
	free(lean_ledger);
	free(ledger);
	free(sync_path);
	bench_tempdirs_dispose(keep);
	return bench_failures() ? 1 : 0;
}
