/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verify_big.c: verify on a ledger far bigger than verify's first scratch
 * map (issue 11), with bounded memory.
 *
 * It builds a ledger of EVENTS events (sessions of 5,000 allowed calls, each
 * T0, T1, T2; 3,000 events per transaction), then runs verify in a child
 * process while sampling the child's anonymous resident memory (RssAnon in
 * /proc: heap and stacks, not the file pages LMDB maps, which the kernel may
 * drop at any time). It fails unless verify says ok for every event and the
 * peak stays under MAX_MIB.
 *
 * usage: verify_big EVENTS [MAX_MIB]   (slow suite: 2,000,000 and 10,000,000)
 * The 64 MiB scratch map of docket <= 0.1 failed such a ledger at about
 * seq 1.75 million with "ledger map is full".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "docket/ledger.h"
#include "util/error.h"

#define BATCH 3000
#define CALLS_PER_SESSION 5000

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "verify_big: FAIL: %s %s\n", what, detail ? detail : "");
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct batch {
	json_t *ev[BATCH];
	size_t n;
	uint64_t total;
} batch;

static void flush(docket_ledger *l, batch *b)
{
	if (b->n && docket_ledger_append_json(l, b->ev, b->n, NULL) != 0)
		die("append:", docket_error_last()->message);
	for (size_t i = 0; i < b->n; i++)
		json_decref(b->ev[i]);
	b->total += b->n;
	b->n = 0;
}

static void add(docket_ledger *l, batch *b, json_t *ev)
{
	if (!ev)
		die("out of memory", NULL);
	b->ev[b->n++] = ev;
	if (b->n == BATCH)
		flush(l, b);
}

static uint64_t build(docket_ledger *l, uint64_t events)
{
	batch b = { .n = 0, .total = 0 };
	char session[32], inv[32];

	for (unsigned s = 0; b.total + b.n < events; s++) {
		snprintf(session, sizeof(session), "s%u", s);
		add(l, &b, json_pack("{s:s, s:s, s:s}", "type", "session.opened", "session", session,
				     "runtime", "big/1"));
		for (unsigned c = 0; c < CALLS_PER_SESSION && b.total + b.n + 3 <= events; c++) {
			snprintf(inv, sizeof(inv), "call_%u", c);
			add(l, &b, json_pack("{s:s, s:s, s:s, s:s, s:{s:[s,s]}, s:{s:s}}", "type", "tool.intent",
					     "session", session, "invocation", inv, "tool", "shell", "args",
					     "command", "echo", inv, "decision", "verdict", "allowed"));
			add(l, &b, json_pack("{s:s, s:s, s:s}", "type", "tool.dispatched", "session", session,
					     "invocation", inv));
			add(l, &b, json_pack("{s:s, s:s, s:s, s:s, s:i}", "type", "tool.completed", "session",
					     session, "invocation", inv, "status", "ok", "exit_code", 0));
		}
		if (b.total + b.n + 3 > events)
			break;
	}
	flush(l, &b);
	return b.total;
}

static long rss_anon_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* The child: open read-only, verify, report on stdout. Exit 0 ok, 1 failed, 3 could not run. */
static int verify_child(const char *dir, uint64_t events)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_verify_report rep;
	docket_ledger *l = NULL;

	opts.flags = DOCKET_OPEN_READONLY;
	if (docket_ledger_open(&l, dir, &opts) != 0 || docket_ledger_verify(l, &rep) != 0) {
		fprintf(stderr, "verify_big: verify could not run: %s\n", docket_error_last()->message);
		return 3;
	}
	docket_ledger_free(l);
	if (!rep.ok) {
		fprintf(stderr, "verify_big: verify FAILED at seq %llu: %s\n",
			(unsigned long long)rep.first_bad_seq, rep.problem);
		return 1;
	}
	if (rep.events_checked != events) {
		fprintf(stderr, "verify_big: verify checked %llu events of %llu\n",
			(unsigned long long)rep.events_checked, (unsigned long long)events);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	const char *tmp = getenv("TMPDIR");
	docket_ledger *l = NULL;
	uint64_t events;
	long max_mib, peak = 0;
	char dir[512], cmd[600];
	double t0, t1;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: verify_big EVENTS [MAX_MIB]\n");
		return 2;
	}
	events = strtoull(argv[1], NULL, 10);
	max_mib = argc > 2 ? atol(argv[2]) : 256;
	snprintf(dir, sizeof(dir), "%s/docket-verify-big-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		die("mkdtemp", strerror(errno));
	opts.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&l, dir, &opts) != 0)
		die("open:", docket_error_last()->message);
	t0 = now();
	events = build(l, events);
	t1 = now();
	docket_ledger_free(l);
	printf("verify_big: built %llu events in %.1f s\n", (unsigned long long)events, t1 - t0);
	fflush(stdout);

	if ((pid = fork()) == 0)
		_exit(verify_child(dir, events));
	while (waitpid(pid, &status, WNOHANG) == 0) {
		long kib = rss_anon_kib(pid);

		if (kib > peak)
			peak = kib;
		usleep(50000);
	}
	printf("verify_big: verify took %.1f s, peak anonymous memory %.1f MiB (limit %ld MiB)\n",
	       now() - t1, (double)peak / 1024, max_mib);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "verify_big: could not remove %s\n", dir);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("verify did not pass on an honest ledger", NULL);
	if (peak / 1024 > max_mib)
		die("verify used more memory than the limit", NULL);
	return 0;
}
