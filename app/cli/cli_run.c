/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli_run.c: running a command (in a guarded child process unless its table row
 * says it runs in process), errors and exit codes, opening the ledger, and the
 * session checks commands share.
 */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "ledger/spool.h"
#include "util/error.h"

/* ---- errors ------------------------------------------------------------ */

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("docket: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_exit_code(int code)
{
	switch (code) {
	case DOCKET_OK:
		return CLI_EXIT_OK;
	case DOCKET_EINVALID:
	case DOCKET_ETRANSITION:
	case DOCKET_ESTALE:
	case DOCKET_ECONFLICT:
	case DOCKET_ENOTFOUND:
	case DOCKET_EEXISTS:
		return CLI_EXIT_USAGE;
	case DOCKET_ESTORAGE:
	case DOCKET_ENOMEM:
	case DOCKET_EMAPFULL:
	case DOCKET_EVERSION:
	case DOCKET_ECORRUPT:
	default:
		return CLI_EXIT_SYSTEM;
	}
}

int cli_fail(int code, const char *fallback)
{
	const docket_error *e = docket_error_last();

	if (e->code != 0 && e->message[0])
		cli_error("%s", e->message);
	else
		cli_error("%s", fallback ? fallback : "unexpected error");
	return cli_exit_code(code);
}

int cli_fail_oom(void)
{
	return cli_fail(docket_error_set_oom(), NULL);
}

int cli_open_failed(const cli_global *g, int error)
{
	const docket_error *e = docket_error_last();

	if (error == DOCKET_ENOTFOUND) {
		cli_error("no ledger at '%s' (create one with `docket init`, or name one with -L PATH "
			  "or $DOCKET_LEDGER)", g->ledger_path);
		return CLI_EXIT_USAGE;  /* a usage mistake (a wrong -L or no init), not storage */
	}
	if (e->code != 0 && e->message[0])
		cli_error("cannot open ledger '%s': %s", g->ledger_path, e->message);
	else
		cli_error("cannot open ledger '%s'", g->ledger_path);
	/* whatever stops the ledger from opening is a storage/system problem */
	return CLI_EXIT_SYSTEM;
}

/* How long a reader waits for the writer lock to fold the spool first
 * (a hook's fold holds it for one commit). */
#define READER_FOLD_WAIT_MS 1000

void cli_fold_spool(const cli_global *g)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	size_t n = 0;
	int busy = 0, error;

	if (docket_spool_count(g->ledger_path, &n) < 0 || n == 0) {
		docket_error_clear();
		return;  /* nothing waits (entry files of older dockets count too) */
	}
	opts.map_size_max = g->map_max;
	if ((error = docket_ledger_open(&l, g->ledger_path, &opts)) == 0)
		error = docket_spool_fold_all_by(l, docket_spool_now_ms() + READER_FOLD_WAIT_MS, &busy);
	if (error < 0 && docket_spool_count(g->ledger_path, &n) == 0 && n > 0)  /* what is still there */
		cli_error("%zu spooled record%s not in the chain yet, not shown (%s)", n, n == 1 ? " is" : "s are",
			  busy ? "the writer lock is held" : docket_error_last()->message);
	if (!docket_spool_waiting())
		docket_ledger_free(l);  /* else a thread still waits in it: the exit ends both */
	docket_error_clear();
}

int cli_open_ledger(docket_ledger **out, const cli_global *g, unsigned int flags)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	int error;

	*out = NULL;
	if (flags & CLI_OPEN_READ)
		cli_fold_spool(g);  /* readers fold first */
	opts.flags = flags;
	opts.map_size_max = g->map_max;
	docket_error_clear();
	if ((error = docket_ledger_open(out, g->ledger_path, &opts)) < 0)
		return cli_open_failed(g, error);
	return CLI_EXIT_OK;
}

/* ---- running a command ------------------------------------------------- */

/* Output that did not reach its destination is a system error. */
static int finish_output(int rc)
{
	if ((fflush(stdout) == EOF || ferror(stdout)) && rc == CLI_EXIT_OK) {
		cli_error("cannot write output");
		rc = CLI_EXIT_SYSTEM;
	}
	return rc;
}

static volatile sig_atomic_t guarded_child;

static void forward_signal(int sig)
{
	if (guarded_child > 0)
		kill((pid_t)guarded_child, sig);
}

/* A signal that means the process crashed rather than was told to stop. */
static int is_crash(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT ||
	       sig == SIGSYS || sig == SIGTRAP;
}

/* Die of `sig` as the child did, so that the caller sees the same status. */
static int die_like(int sig)
{
	sigset_t set;

	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return 128 + sig;
}

int cli_run(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	pid_t parent = getpid(), pid;
	int status = 0, sig;

	if (cmd->where == CLI_IN_PROCESS)
		return finish_output(cmd->fn(cmd, g, argc, argv));
	fflush(NULL);
	if ((pid = fork()) < 0)
		return finish_output(cmd->fn(cmd, g, argc, argv));
	if (pid == 0) {
#ifdef __linux__
		/* the child ends with its parent, whatever kills the parent */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(CLI_EXIT_SYSTEM);
#endif
		exit(finish_output(cmd->fn(cmd, g, argc, argv)));
	}
	guarded_child = pid;
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = forward_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(forwarded[i], &sa, NULL);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
	if (!is_crash(sig))
		return die_like(sig);
	cli_error("`docket %s` crashed (%s) working on ledger '%s': its data file is probably damaged "
		  "or truncated; `docket verify` checks it (if verify finds nothing wrong, this is a bug "
		  "in docket: please report it)", cmd->name, strsignal(sig), g->ledger_path);
	return CLI_EXIT_SYSTEM;
}

static int session_seen(void *ctx, const docket_session_info *info)
{
	(void)info;
	*(int *)ctx = 1;
	return 0;
}

int cli_session_exists(docket_ledger *ledger, const char *session)
{
	int seen = 0;
	int error = docket_ledger_session(ledger, session, session_seen, &seen);

	if (error == DOCKET_ENOTFOUND)
		return 0;
	return error < 0 ? error : seen;
}

int cli_check_session(docket_ledger *ledger, const char *session)
{
	int seen = 0;
	int error;

	docket_error_clear();
	error = docket_ledger_session(ledger, session, session_seen, &seen);
	if (error == DOCKET_ENOTFOUND || (error == 0 && !seen)) {
		cli_error("no session '%s' in the ledger", session);
		return CLI_EXIT_USAGE;
	}
	if (error < 0)
		return cli_fail(error, "cannot read the session");
	return CLI_EXIT_OK;
}
