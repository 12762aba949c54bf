/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_hook.c: `docket hook claude|codex [--enforce --policy SRC]`: one hook
 * event on stdin, recorded; the answer on stdout as the client expects
 * (integrations/integrations.h, docs/integrations.md).
 *
 * Exit codes follow the clients' hook protocol, not DESIGN §9: 0 answered
 * (stdout may carry a decision), 2 block the call (reason on stderr), 1 a
 * non-blocking error (recording failed, the client goes on). Hooks fail
 * open in both clients, so in enforce mode every error that happens at a
 * PreToolUse or PermissionRequest event (or on input that is not a hook
 * event) answers 2: docket fails closed.
 *
 * Spool first (docs/write-path.md §3, "spool first"): the event's records
 * go to the spool's journal (one append + fdatasync) before the answer; a
 * detached process folds them into the chain after it (fold_after_answer).
 * The budget (--budget MS, default 2000): an event that must fold first
 * waits for the writer lock until half of it (the detached fold a moment
 * only: FOLD_WAIT_MS); a watchdog answers at the budget whatever is still running (a slow disk, a
 * stuck read): under --enforce, a blocking event is denied (exit 2), naming
 * docket, and nothing answers "allow" without a durable record.
 */
#include "cli.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "hook_server.h"
#include "integrations/integrations.h"
#include "ledger/spool.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

#define INPUT_MAX ((size_t)64 << 20)
#define BUDGET_DEFAULT_MS 2000
#define BUDGET_MAX_MS 600000

/* The detached fold's wait for the writer lock (the writer thread gets at
 * least 20 ms, ledger/spool.h); one that waits in vain marks the lock held,
 * and the folds after it do not wait (docket_spool_fold_detached). */
#define FOLD_WAIT_MS 5
/* How long the detached folder stays for the next event's records
 * (spool_folder.c): a tool call's PostToolUse and the next call's
 * PreToolUse usually come within it, and fork no folder of their own. */
#define FOLD_LINGER_MS 10000

/* FOLD_LINGER_MS, or $DOCKET_HOOK_LINGER_MS (0: the folder folds once and
 * goes; no server) */
static unsigned linger_ms(void)
{
	const char *env = getenv("DOCKET_HOOK_LINGER_MS");
	char *end;
	unsigned long v;

	if (!env || !*env)
		return FOLD_LINGER_MS;
	v = strtoul(env, &end, 10);
	return *end || v > 3600000 ? FOLD_LINGER_MS : (unsigned)v;
}
/* Spool first (docs/write-path.md): the default since the hook met its
 * latency goal only this way (one flush per event instead of LMDB's two,
 * docs/performance.md); -Dc_args=-DSPOOL_FIRST_DEFAULT=0 builds hooks that
 * commit in the hook (tests/bench/bench_hook measures both) */
#ifndef SPOOL_FIRST_DEFAULT
#define SPOOL_FIRST_DEFAULT 1
#endif

#define EXIT_NONBLOCKING 1
#define EXIT_BLOCK 2

static int read_stdin(docket_buf *out)
{
	int error = docket_buf_read_stream(out, stdin);

	if (error == 0 && out->len > INPUT_MAX)
		error = docket_error_set(DOCKET_EINVALID, "hook input larger than %zu bytes", INPUT_MAX);
	return error;
}

/* ---- the watchdog ---- */

/*
 * A timer (ITIMER_REAL) answers at the budget whatever is still running:
 * SIGALRM's handler, not a thread (starting one, and the TLB shootdowns a
 * second thread brings to every unmap, were a tenth of a hook event, bench_hook).
 * Everything it needs is ready before the timer starts, so that it only
 * writes and exits (async-signal-safe): the two texts, and `blocks`,
 * which stays 1 until docket_hook_handle() has parsed the event (an event
 * not read yet may be one that blocks: fail closed).
 */
typedef struct watchdog {
	int enforce;
	volatile sig_atomic_t blocks;
	char text[2][192];
	size_t len[2];
} watchdog;

static watchdog wd;
static atomic_int answered;

/* 1 when this thread is the one that answers the client (main or the
 * watchdog; the other must say nothing). Lock-free: a signal handler may call it. */
static int take_answer(void)
{
	int expected = 0;

	return atomic_compare_exchange_strong(&answered, &expected, 1);
}

static void watchdog_fire(int sig)
{
	int block = wd.enforce && wd.blocks;

	(void)sig;
	if (!take_answer())
		return;  /* the answer is being written: let it finish */
	(void)!write(STDERR_FILENO, wd.text[block], wd.len[block]);
	_exit(block ? EXIT_BLOCK : EXIT_NONBLOCKING);
}

/* 0, or -1 when there is no timer (then the lock deadline still holds) */
static int watchdog_start(uint64_t budget_ms, int enforce)
{
	struct itimerval it = { { 0, 0 }, { (time_t)(budget_ms / 1000), (suseconds_t)(budget_ms % 1000) * 1000 } };
	struct sigaction sa;
	int n[2];

	wd.enforce = enforce;
	wd.blocks = 1;
	n[1] = snprintf(wd.text[1], sizeof(wd.text[1]),
			"docket: could not record the call within its budget of %llu ms; denied because "
			"docket enforces a policy and fails closed\n", (unsigned long long)budget_ms);
	n[0] = snprintf(wd.text[0], sizeof(wd.text[0]),
			"docket: could not record the hook event within its budget of %llu ms\n",
			(unsigned long long)budget_ms);
	for (int i = 0; i < 2; i++)
		wd.len[i] = n[i] < 0 ? 0 : (size_t)n[i] < sizeof(wd.text[i]) ? (size_t)n[i] : sizeof(wd.text[i]) - 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watchdog_fire;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) != 0 || setitimer(ITIMER_REAL, &it, NULL) != 0)
		return -1;
	return 0;
}

/* The watchdog may be answering: then this thread waits for it to exit. */
static void answer_or_wait(void)
{
	if (take_answer())
		return;
	for (;;)
		pause();
}

/* An error, as the answer: in enforce mode a blocking event is denied
 * with the reason. */
static void fail_answer(const hook_setup *s, const char *in, size_t len, const char *what,
			docket_hook_answer *answer)
{
	docket_error e = *docket_error_last();  /* a copy: docket_hook_blocks sets its own */
	const char *msg = e.code && e.message[0] ? e.message : "internal error";
	docket_buf text = DOCKET_BUF_INIT;
	int block = s->enforce && docket_hook_blocks(in, len);

	docket_hook_answer_dispose(answer);
	answer->exit_code = block ? EXIT_BLOCK : EXIT_NONBLOCKING;
	if ((block ? docket_buf_printf(&text, "docket: %s (%s); denied because docket enforces a policy and "
					      "fails closed\n", what, msg)
		   : docket_buf_printf(&text, "docket: %s: %s\n", what, msg)) < 0)
		docket_error_clear();  /* out of memory: the exit code still says it */
	answer->err = text.ptr;
}

int hook_policy_load(const hook_setup *s, docket_policy **out)
{
	*out = NULL;
	if (!s->enforce)
		return 0;
#ifdef DOCKET_HOOK_LEAN
	return docket_policy_load(out, s->source);
#else
	return docket_replay_source_load(out, s->source, NULL);
#endif
}

void hook_event(const hook_setup *s, docket_ledger *ledger, const docket_policy *policy, const char *in,
		size_t len, uint64_t deadline_ms, volatile sig_atomic_t *blocks, docket_hook_answer *answer)
{
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;

	ho.client = s->client;
	ho.blocks = blocks;
	ho.policy = policy;
	ho.cache_dir = s->ledger_path;
	ho.spool_path = s->ledger_path;
	ho.deadline_ms = deadline_ms;
	ho.spool_first = SPOOL_FIRST_DEFAULT;
	if (docket_hook_handle(ledger, &ho, in, len, answer) < 0)
		fail_answer(s, in, len, "cannot record the hook event", answer);
}

/*
 * Spool first (docs/write-path.md §3): the event's records are durable in
 * the spool's journal before the answer; once it is written, a detached
 * process folds them into the chain, and this one exits at once. That
 * process stays a while and folds the next events' records too (a hook
 * that finds it alive starts none: spool_folder.c). This process's ledger
 * is closed first: the child opens its own.
 */
static void fold_after_answer(const hook_setup *s, int argc, char **argv, docket_ledger **ledger)
{
	const char *path = s->ledger_path;

	if (!docket_spool_nonempty(path))
		return;
	/* a folder lives (it folds this record: spool_folder.c), or the lock
	 * is held right now (a docket writer in a transaction, or a fold that
	 * waited for it in vain a moment ago): its holder, the next writer or
	 * the next reader folds; no process to start */
	if (docket_spool_folder_alive(path) || docket_spool_writer_busy(path) ||
	    docket_spool_held_within(path, DOCKET_SPOOL_FRESH_MS))
		return;
	fflush(stdout);
	fflush(stderr);
	if (!docket_spool_waiting()) {
		docket_ledger_free(*ledger);
		*ledger = NULL;
	}
	(void)docket_spool_fold_detached(path, FOLD_WAIT_MS, linger_ms(),
					 hook_server_prepare(s, argc, argv));
}

int cmd_hook(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	hook_setup setup = { DOCKET_CLIENT_CLAUDE, 0, NULL, BUDGET_DEFAULT_MS, g->ledger_path };
	const char *client = NULL;
	const cli_opt opts[] = {
		{ CLI_OPT_ARG, "CLIENT", 0, &client, NULL, "claude or codex", CLI_OPT_REQUIRED },
		{ CLI_OPT_SWITCH, "enforce", 0, &setup.enforce, NULL,
		  "evaluate --policy at PreToolUse: deny or ask (never allow more than the client does)", 0 },
		{ CLI_OPT_STRING, "policy", 0, &setup.source, "SRC",
		  "the policy to enforce (any source replay takes)", 0 },
		{ CLI_OPT_U64, "budget", 0, &setup.budget_ms, "MS",
		  "answer within MS milliseconds (default 2000): the ledger's writer lock is waited for until "
		  "half of it, then the event goes to the ledger's spool", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_hook_answer answer = { 0, NULL, NULL, 0 };
	uint64_t start = docket_spool_now_ms();
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_buf in = DOCKET_BUF_INIT;
	docket_ledger *ledger = NULL;
	docket_policy *policy = NULL;
	int rc;

	if ((rc = cli_parse(cmd, opts,
			    "Reads one hook event (JSON) on stdin, records it in the ledger and answers on\n"
			    "stdout as the client expects. `docket integrate` installs it as the client's hook.",
			    argc, argv)) != CLI_PARSE_OK)
		return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : EXIT_BLOCK;
	docket_error_clear();
	if (docket_client_parse(&setup.client, client) < 0 ||
	    (setup.enforce && !setup.source && docket_error_set(DOCKET_EINVALID, "--enforce needs --policy SRC") < 0) ||
	    (!setup.enforce && setup.source && docket_error_set(DOCKET_EINVALID, "--policy is for --enforce") < 0)) {
		cli_error("%s", docket_error_last()->message);
		return EXIT_BLOCK;
	}
	if (setup.budget_ms == 0 || setup.budget_ms > BUDGET_MAX_MS) {
		cli_error("--budget must be 1 to %d ms", BUDGET_MAX_MS);
		return EXIT_BLOCK;
	}
	(void)watchdog_start(setup.budget_ms, setup.enforce);
	oo.flags = DOCKET_OPEN_CREATE;
	if (read_stdin(&in) < 0)
		fail_answer(&setup, in.ptr ? in.ptr : "", in.len, "cannot read the hook event", &answer);
	else if (hook_policy_load(&setup, &policy) < 0)
		fail_answer(&setup, in.ptr ? in.ptr : "", in.len, "cannot load the policy", &answer);
	else if (docket_ledger_open(&ledger, g->ledger_path, &oo) < 0)
		fail_answer(&setup, in.ptr ? in.ptr : "", in.len, "cannot open the ledger", &answer);
	else
		hook_event(&setup, ledger, policy, in.ptr ? in.ptr : "", in.len, start + setup.budget_ms / 2,
			   &wd.blocks, &answer);
	answer_or_wait();
	if (answer.out)
		fputs(answer.out, stdout);
	if (answer.err)
		fputs(answer.err, stderr);
	rc = answer.exit_code;
	if (ledger && SPOOL_FIRST_DEFAULT)
		fold_after_answer(&setup, argc, argv, &ledger);
	docket_hook_answer_dispose(&answer);
	if (!docket_spool_waiting())
		docket_ledger_free(ledger);  /* else a thread still waits in it: the exit ends both */
	docket_policy_free(policy);
	docket_buf_dispose(&in);
	return rc;
}
