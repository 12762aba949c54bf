/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_crash.c: what a SIGKILL leaves behind, and two writers at once.
 *
 *  - a forked writer killed at each named crash point of the append path
 *    (mid-batch, before commit, after commit) leaves all of its batch or
 *    none of it, and verify passes;
 *  - writers killed at random moments while appending batch after batch
 *    leave only whole batches, and verify passes;
 *  - two processes appending at once lose nothing and interleave legally.
 */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "docket/ledger.h"
#include "util/crash.h"

#define BATCH 200
#define BULK 5000   /* full segments: closed on worker threads (seg_stage.c) while the kill comes */

static docket_ledger *open_ledger(const char *dir, unsigned flags)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;

	opts.flags = flags;
	if (docket_ledger_open(&l, dir, &opts) != 0)
		fail_msg("open %s: %s", dir, docket_error_last()->message);
	return l;
}

static uint64_t events_in(const char *dir)
{
	docket_ledger *l = open_ledger(dir, 0);
	docket_ledger_info info;

	assert_int_equal(docket_ledger_info_get(l, &info), 0);
	docket_ledger_free(l);
	return info.events;
}

static int verify_dir(const char *dir)
{
	docket_ledger *l = open_ledger(dir, 0);
	docket_verify_report rep;
	int rc = docket_ledger_verify(l, &rep);

	docket_ledger_free(l);
	if (rc == 0 && !rep.ok)
		print_message("verify: seq %llu: %s\n", (unsigned long long)rep.first_bad_seq, rep.problem);
	return rc == 0 && rep.ok;
}

/* Append one batch of `n` intents for invocations first..first+n-1 of `session`. */
static int append_batch(docket_ledger *l, const char *session, long first, int n)
{
	json_t **evs = calloc((size_t)n, sizeof(*evs));
	char buf[512];
	int rc;

	for (int i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf),
			 "{\"type\":\"tool.intent\",\"session\":\"%s\",\"invocation\":\"c%08ld\",\"tool\":\"shell\","
			 "\"args\":{\"command\":[\"echo\",\"%ld\"]},\"decision\":{\"verdict\":\"allowed\"}}",
			 session, first + i, first + i);
		evs[i] = test_json(buf);
	}
	rc = docket_ledger_append_json(l, evs, (size_t)n, NULL);
	for (int i = 0; i < n; i++)
		json_decref(evs[i]);
	free(evs);
	return rc;
}

static void open_session(const char *dir, const char *session)
{
	docket_ledger *l = open_ledger(dir, DOCKET_OPEN_CREATE);
	char buf[128];
	json_t *ev;

	snprintf(buf, sizeof(buf), "{\"type\":\"session.opened\",\"session\":\"%s\"}", session);
	ev = test_json(buf);
	assert_int_equal(docket_ledger_append_json(l, &ev, 1, NULL), 0);
	json_decref(ev);
	docket_ledger_free(l);
}

/* Child: arm `point`, append one batch of `n`; it must die there. */
static void child_batch_at(const char *dir, const char *point, int n)
{
	docket_ledger *l;

	docket_crash_arm(point);
	l = open_ledger(dir, 0);
	append_batch(l, "s1", 0, n);
	_exit(0);
}

static int run_child_at(const char *dir, const char *point, int n)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		child_batch_at(dir, point, n);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

static void test_named_crash_points(void **state)
{
	static const struct {
		const char *point;
		int batch_survives;
	} cases[] = {
		{ "append.mid_batch", 0 },
		{ "append.before_commit", 0 },
		{ "append.after_commit", 1 },
	};

	static const int sizes[] = { BATCH, BULK };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) * 2; i++) {
		char *dir = test_mkdtemp();
		int n = sizes[i % 2];

		open_session(dir, "s1");
		assert_int_equal(run_child_at(dir, cases[i / 2].point, n), SIGKILL);
		assert_int_equal(events_in(dir), 1 + (cases[i / 2].batch_survives ? n : 0));
		assert_true(verify_dir(dir));
		/* the ledger takes the same batch afterwards (or refuses a
		 * different one with the same ids if it survived) */
		docket_ledger *l = open_ledger(dir, 0);
		assert_int_equal(append_batch(l, "s1", 0, n), 0);
		docket_ledger_free(l);
		assert_int_equal(events_in(dir), 1 + n);
		assert_true(verify_dir(dir));
		test_rmdir_free(dir);
	}
}

/* Child: append batches forever (until killed), continuing the numbering. */
static void child_append_forever(const char *dir)
{
	docket_ledger *l = open_ledger(dir, 0);
	docket_ledger_info info;
	long next;

	if (docket_ledger_info_get(l, &info) != 0)
		_exit(3);
	next = (long)info.events - 1;
	for (;;) {
		if (append_batch(l, "s1", next, BATCH) != 0)
			_exit(2);
		next += BATCH;
	}
}

static void test_random_kills(void **state)
{
	char *dir = test_mkdtemp();
	uint64_t last = 1;
	int trials = 25, progressed = 0;

	(void)state;
	srand((unsigned)time(NULL));
	open_session(dir, "s1");
	for (int t = 0; t < trials; t++) {
		struct timespec ts = { 0, (long)(1 + rand() % 40) * 1000000L };
		int status;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			child_append_forever(dir);
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status)); /* it was still appending */
		uint64_t n = events_in(dir);
		/* whole batches only */
		assert_int_equal((n - 1) % BATCH, 0);
		assert_true(n >= last);
		progressed += n > last;
		last = n;
	}
	assert_true(verify_dir(dir));
	print_message("%d kills, %d made progress, %llu events survived\n", trials, progressed,
		      (unsigned long long)last);
	test_rmdir_free(dir);
}

typedef struct order_check {
	long last;
	long seen;
	int bad;
} order_check;

static int check_order(void *ctx, uint64_t seq, json_t *ev)
{
	order_check *c = ctx;
	const char *inv = json_string_value(json_object_get(ev, "invocation"));
	long n;

	(void)seq;
	if (!inv)
		return 0;
	n = strtol(inv + 1, NULL, 10);
	if (n <= c->last)
		c->bad = 1;
	c->last = n;
	c->seen++;
	return 0;
}

static void test_two_writers(void **state)
{
	char *dir = test_mkdtemp();
	const char *sessions[] = { "writer-a", "writer-b" };
	const int batches = 40, size = 25;
	pid_t pids[2];

	(void)state;
	open_session(dir, "writer-a");
	open_session(dir, "writer-b");
	for (int w = 0; w < 2; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			docket_ledger *l = open_ledger(dir, 0);

			int rc = 0;

			for (int b = 0; b < batches && rc == 0; b++)
				if (append_batch(l, sessions[w], (long)b * size, size) != 0)
					rc = 2;
			docket_ledger_free(l);
			free(dir); /* the child's copy: leak-free under valgrind too */
			_exit(rc);
		}
	}
	for (int w = 0; w < 2; w++) {
		int status;

		assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(events_in(dir), 2 + 2 * batches * size);
	assert_true(verify_dir(dir));
	/* each writer's events are all there, in its own order */
	docket_ledger *l = open_ledger(dir, 0);
	for (int w = 0; w < 2; w++) {
		docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
		order_check c = { -1, 0, 0 };

		ro.session = sessions[w];
		assert_int_equal(docket_ledger_read_json(l, &ro, check_order, &c), 0);
		assert_int_equal(c.seen, batches * size);
		assert_false(c.bad);
	}
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_crash_points),
		cmocka_unit_test(test_random_kills),
		cmocka_unit_test(test_two_writers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
