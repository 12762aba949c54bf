/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_serve.c: allowed invocations per second through `docket serve
 * --socket` and its group commit, against single-event durable commits,
 * side by side in one run (issue 3, "Benchmark").
 *
 * One invocation is what a runtime does for a call its policy allows: T0
 * and T1 committed together (tool.intent with "decision":{"verdict":
 * "allowed"} and "dispatch_if_allowed":true), then T2 (tool.complete).
 * Configurations, each on a fresh ledger in its own directory:
 *
 *   single-event commits  baseline: the same three events (tool.intent,
 *                         tool.dispatched, tool.completed), each appended
 *                         on its own with docket_ledger_append_json: three
 *                         durable commits per invocation, no server, 1 caller
 *   C API, in process     docket_tool_intent (dispatch_if_allowed) +
 *                         docket_tool_complete: two commits, 1 caller
 *   serve, 1 client       `docket serve --socket` (a child process), one
 *                         connection
 *   serve, N clients      N threads (default 64), each with its own
 *                         connection and its own session, one request
 *                         outstanding at a time, as a real runtime does
 *   echo, N clients       the same clients against a no-storage JSON-RPC
 *                         echo server (a child process: one poll loop,
 *                         newline framing, jansson parsing, a reply naming
 *                         the id): the ceiling of the socket and framing
 *                         on this machine (issue 12: serve >= 0.6x of it)
 *
 * Each configuration runs for a fixed wall time (--seconds) or a fixed
 * number of invocations per client (--count); a client that passes the
 * deadline finishes the invocation it is in. Latency is one invocation's
 * (intent sent -> complete acknowledged). The server's batch sizes come from
 * what serve prints at SIGTERM ("stopped after N requests in M commits
 * (largest K)"); its CPU from /proc/PID/stat over the measured window.
 * Every configuration runs --rounds times, the order reversed every other
 * round, so that drift of the disk cancels out of the ratios.
 *
 * Checks after every run (exit 1 when one fails; speed is never checked):
 * every reply was a success and every intent was dispatched; the ledger
 * holds exactly as many tool.intent, tool.dispatched and tool.completed
 * events as invocations were done; nothing is pending; docket_ledger_verify
 * passes.
 *
 * --perf FILE records `perf record -F 999 --call-graph dwarf -p <serve>` over
 * the measured window of the first N-client run (for `perf report -i FILE`;
 * DWARF unwinding because a release build has no frame pointers).
 *
 * The clients wait for a reply in poll() before read(), as an event-loop
 * runtime does (see rpc()).
 *
 * usage: bench_serve DOCKET [--seconds S] [--count N] [--clients N]
 *                    [--rounds R] [--dir DIR] [--only CONFIG] [--perf FILE]
 *                    [--keep] [--quick]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "docket/ledger.h"
#include "docket/runtime.h"
#include "util/error.h"

#define MAX_ROUNDS 16
#define MAX_CLIENTS 512
#define GOAL_INV_PER_S 50000.0

enum config { C_BASELINE, C_CAPI, C_SERVE1, C_SERVEN, C_ECHO, C_COUNT };

static const char *const config_key[C_COUNT] = { "single", "capi", "serve1", "serve", "echo" };

typedef struct options {
	const char *docket;
	double seconds;
	uint64_t count;        /* per client; 0: run for `seconds` */
	unsigned clients;
	unsigned rounds;
	const char *dir;
	const char *only;
	const char *perf;
	int quick;
	int keep;
} options;

typedef struct result {
	int ran;
	unsigned clients;
	uint64_t inv;
	uint64_t wall_ns;
	uint64_t commits;       /* durable commits (serve: as it reported) */
	uint64_t requests;      /* serve: requests it executed */
	uint64_t max_batch;
	uint64_t srv_cpu_ns;    /* serve process (in process: this process) */
	uint64_t cli_cpu_ns;    /* this process (the clients), serve runs only */
	uint64_t wr_bytes;      /* written to storage by the writer (/proc/PID/io) */
	bench_lat lat;
} result;

/* ---- small helpers ---- */

/* utime + stime of another process, from /proc/PID/stat; 0 if unknown. */
static uint64_t proc_cpu_ns(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ut = 0, st = 0;
	long tck = sysconf(_SC_CLK_TCK);
	const char *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!(p = strrchr(buf, ')')))
		return 0;
	/* after ")": field 3 (state) ... field 14 utime, 15 stime */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return (ut + st) * (1000000000ull / (uint64_t)(tck > 0 ? tck : 100));
}

/* Bytes a process caused to be written to storage (/proc/PID/io write_bytes); 0 if unknown. */
static uint64_t proc_write_bytes(pid_t pid)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/io");
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "write_bytes: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static double rate(const result *r)
{
	return r->wall_ns ? (double)r->inv * 1e9 / (double)r->wall_ns : 0;
}

static uint64_t deadline_of(const options *o, uint64_t t0)
{
	return o->count ? UINT64_MAX : t0 + (uint64_t)(o->seconds * 1e9);
}

static int keep_going(const options *o, uint64_t done, uint64_t deadline)
{
	return o->count ? done < o->count : bench_now_ns() < deadline;
}

/* Where an in-process run (one caller) started, and when it is to stop. */
typedef struct inproc_clock {
	uint64_t t0, c0, w0;   /* wall, CPU, bytes written */
	uint64_t deadline;
} inproc_clock;

static void inproc_start(inproc_clock *k, const options *o)
{
	k->w0 = proc_write_bytes(0);
	k->t0 = bench_now_ns();
	k->c0 = bench_cpu_ns();
	k->deadline = deadline_of(o, k->t0);
}

/* The run of `done` invocations of `commits` durable commits each is over. */
static void inproc_done(result *res, uint64_t done, uint64_t commits, const inproc_clock *k)
{
	res->wall_ns += bench_now_ns() - k->t0;
	res->srv_cpu_ns += bench_cpu_ns() - k->c0;
	res->wr_bytes += proc_write_bytes(0) - k->w0;
	res->inv += done;
	res->commits += commits * done;
	res->clients = 1;
	res->ran = 1;
}

/* ---- checking a ledger after a run ---- */

typedef struct type_counts {
	uint64_t intent, dispatched, completed;
} type_counts;

static int count_types(void *ctx, uint64_t seq, json_t *ev)
{
	type_counts *tc = ctx;
	const char *t = json_string_value(json_object_get(ev, "type"));

	(void)seq;
	if (!t)
		return 0;
	if (strcmp(t, "tool.intent") == 0)
		tc->intent++;
	else if (strcmp(t, "tool.dispatched") == 0)
		tc->dispatched++;
	else if (strcmp(t, "tool.completed") == 0)
		tc->completed++;
	return 0;
}

static int count_pending(void *ctx, const docket_pending_info *info)
{
	(void)info;
	(*(uint64_t *)ctx)++;
	return 0;
}

static void check_ledger(const char *path, const char *cfg, uint64_t inv)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	docket_verify_report rep;
	docket_ledger_info info;
	type_counts tc = { 0, 0, 0 };
	uint64_t pending = 0;
	char msg[1200];

	if (docket_ledger_open(&l, path, &oo) < 0) {
		bench_docket_fail(cfg);
		return;
	}
	if (docket_ledger_read_json(l, NULL, count_types, &tc) < 0 ||
	    docket_ledger_pending(l, NULL, count_pending, &pending) < 0 || docket_ledger_info_get(l, &info) < 0) {
		bench_docket_fail(cfg);
		goto out;
	}
	if (tc.intent != inv || tc.dispatched != inv || tc.completed != inv) {
		snprintf(msg, sizeof(msg),
			 "%" PRIu64 " invocations done, but the ledger holds %" PRIu64 " tool.intent, %" PRIu64
			 " tool.dispatched, %" PRIu64 " tool.completed",
			 inv, tc.intent, tc.dispatched, tc.completed);
		bench_fail(cfg, msg);
	}
	if (pending || info.pending) {
		snprintf(msg, sizeof(msg), "%" PRIu64 " invocations pending (info: %" PRIu64 ")", pending, info.pending);
		bench_fail(cfg, msg);
	}
	if (docket_ledger_verify(l, &rep) < 0) {
		bench_docket_fail(cfg);
		goto out;
	}
	if (!rep.ok || rep.events_checked != info.events) {
		snprintf(msg, sizeof(msg), "docket_ledger_verify: %s", rep.ok ? "not every event checked" : rep.problem);
		bench_fail(cfg, msg);
	}
out:
	docket_ledger_free(l);
}

static docket_ledger *create_ledger(const char *path)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;

	oo.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&l, path, &oo) < 0) {
		bench_docket_fail("docket_ledger_open");
		return NULL;
	}
	return l;
}

/* ---- in process: single-event commits, and the C API ---- */

static int append_one(docket_ledger *l, json_t *ev, docket_append_result *ar)
{
	int rc;

	if (!ev)
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	rc = docket_ledger_append_json(l, &ev, 1, ar);
	json_decref(ev);
	return rc;
}

static int run_baseline(const options *o, const char *dir, result *res)
{
	char *path = bench_path_join(dir, "ledger");
	docket_ledger *l = path ? create_ledger(path) : NULL;
	docket_append_result ar;
	inproc_clock k;
	uint64_t done = 0;
	const char *session = "s-single";
	int error = -1;

	if (!l)
		goto out;
	if (append_one(l, json_pack("{s:s, s:s}", "type", "runtime.started", "runtime", "bench/1"), &ar) < 0 ||
	    append_one(l, json_pack("{s:s, s:s, s:s}", "type", "session.opened", "session", session, "cwd", "/bench"),
		       &ar) < 0) {
		bench_docket_fail("single-event commits: setup");
		goto out;
	}
	inproc_start(&k, o);
	while (keep_going(o, done, k.deadline)) {
		char inv[32];
		uint64_t t = bench_now_ns();

		snprintf(inv, sizeof(inv), "i%" PRIu64, done);
		if (append_one(l, json_pack("{s:s, s:s, s:s, s:s, s:{s:[s,s]}, s:s, s:{s:s, s:s}}", "type",
					    "tool.intent", "session", session, "invocation", inv, "tool", "shell",
					    "args", "command", "echo", inv, "recovery", "idempotent", "decision",
					    "verdict", "allowed", "source", "runtime"), &ar) < 0 ||
		    append_one(l, json_pack("{s:s, s:s, s:s}", "type", "tool.dispatched", "session", session,
					    "invocation", inv), &ar) < 0 ||
		    ar.attempt != 1 || strncmp(ar.token, "dt-", 3) != 0 ||
		    append_one(l, json_pack("{s:s, s:s, s:s, s:s, s:i, s:s}", "type", "tool.completed", "session",
					    session, "invocation", inv, "status", "ok", "exit_code", 0, "output", inv),
			       &ar) < 0) {
			bench_docket_fail("single-event commits");
			goto out;
		}
		bench_lat_push(&res->lat, bench_now_ns() - t);
		done++;
	}
	inproc_done(res, done, 3, &k);
	if (append_one(l, json_pack("{s:s, s:s}", "type", "session.closed", "session", session), &ar) < 0) {
		bench_docket_fail("single-event commits: session.closed");
		goto out;
	}
	error = 0;
out:
	docket_ledger_free(l);
	if (error == 0)
		check_ledger(path, "single-event commits", done);
	free(path);
	return error;
}

static int run_capi(const options *o, const char *dir, result *res)
{
	char *path = bench_path_join(dir, "ledger");
	docket_ledger *l = path ? create_ledger(path) : NULL;
	docket_runtime *rt = NULL;
	inproc_clock k;
	uint64_t done = 0;
	const char *session = "s-capi";
	json_t *args = NULL;
	int error = -1;

	if (!l)
		goto out;
	if (docket_runtime_start(&rt, l, "bench/1") < 0 || docket_session_open(rt, session, "/bench") < 0) {
		bench_docket_fail("C API: setup");
		goto out;
	}
	inproc_start(&k, o);
	while (keep_going(o, done, k.deadline)) {
		docket_intent_result ir;
		char inv[32];
		uint64_t t = bench_now_ns();

		snprintf(inv, sizeof(inv), "i%" PRIu64, done);
		args = json_pack("{s:[s,s]}", "command", "echo", inv);
		if (!args || docket_tool_intent(rt, session, inv, "shell", args, "idempotent", "allowed", 1, &ir) < 0 ||
		    !ir.dispatched || strncmp(ir.token, "dt-", 3) != 0 ||
		    docket_tool_complete(rt, session, inv, "ok", 0, inv) < 0) {
			bench_docket_fail("C API");
			goto out;
		}
		json_decref(args);
		args = NULL;
		bench_lat_push(&res->lat, bench_now_ns() - t);
		done++;
	}
	inproc_done(res, done, 2, &k);
	if (docket_session_close(rt, session) < 0) {
		bench_docket_fail("C API: session close");
		goto out;
	}
	error = 0;
out:
	json_decref(args);
	docket_runtime_free(rt);
	docket_ledger_free(l);
	if (error == 0)
		check_ledger(path, "C API", done);
	free(path);
	return error;
}

/* ---- docket serve ---- */

typedef struct serve_proc {
	pid_t pid;
	int err_fd;            /* its stderr */
	char text[8192];       /* what it printed */
	size_t len;
} serve_proc;

/* Read what serve printed; wait up to `ms` for `want` to appear (NULL: EOF). */
static int serve_read(serve_proc *sp, const char *want, int ms)
{
	uint64_t end = bench_now_ns() + (uint64_t)ms * 1000000ull;

	for (;;) {
		struct pollfd p = { sp->err_fd, POLLIN, 0 };
		uint64_t now = bench_now_ns();
		ssize_t n;

		if (want && strstr(sp->text, want))
			return 0;
		if (now >= end)
			return -1;
		if (poll(&p, 1, (int)((end - now) / 1000000ull) + 1) < 0 && errno != EINTR)
			return -1;
		if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(sp->err_fd, sp->text + sp->len, sizeof(sp->text) - 1 - sp->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return want ? -1 : 0;
		sp->len += (size_t)n;
		sp->text[sp->len] = '\0';
		if (sp->len == sizeof(sp->text) - 1) { /* keep the tail */
			memmove(sp->text, sp->text + sp->len / 2, sp->len - sp->len / 2 + 1);
			sp->len -= sp->len / 2;
		}
	}
}

static int serve_start(serve_proc *sp, const options *o, const char *ledger, const char *sock)
{
	int fds[2];

	memset(sp, 0, sizeof(*sp));
	sp->pid = -1;
	sp->err_fd = -1;
	if (pipe(fds) < 0)
		return -1;
	sp->pid = fork();
	if (sp->pid == 0) {
		char *argv[] = { (char *)o->docket, "-L", (char *)ledger, "serve", "--socket", (char *)sock, NULL };

		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	sp->err_fd = fds[0];
	if (sp->pid < 0 || serve_read(sp, "serving on", 10000) < 0) {
		bench_fail("docket serve did not start", sp->text);
		return -1;
	}
	return 0;
}

/* SIGTERM; parse "stopped after N requests in M commits (largest K)". */
static int serve_stop(serve_proc *sp, result *res)
{
	unsigned long long n = 0, m = 0, k = 0;
	const char *p;
	int status = 0, rc = -1;

	if (sp->pid > 0) {
		kill(sp->pid, SIGTERM);
		serve_read(sp, NULL, 30000);
		if (waitpid(sp->pid, &status, 0) == sp->pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			rc = 0;
		else
			bench_fail("docket serve did not stop cleanly on SIGTERM", sp->text);
	}
	if (sp->err_fd >= 0)
		close(sp->err_fd);
	if (rc == 0) {
		if ((p = strstr(sp->text, "stopped after ")) &&
		    sscanf(p, "stopped after %llu requests in %llu commits (largest %llu)", &n, &m, &k) == 3) {
			res->requests += n;
			res->commits += m;
			if (k > res->max_batch)
				res->max_batch = k;
		} else {
			bench_fail("docket serve did not report its batches", sp->text);
			rc = -1;
		}
	}
	return rc;
}

/* ---- the no-storage baseline: a JSON-RPC echo server (issue 12) ---- */

/* Answer every complete line in buf[0..*len) of connection `fd`. */
static int echo_lines(int fd, char *buf, size_t *len)
{
	char *start = buf, *nl;

	while ((nl = memchr(start, '\n', *len - (size_t)(start - buf)))) {
		json_t *req = json_loadb(start, (size_t)(nl - start), 0, NULL), *rep;
		char *text;
		int ok = 1;

		start = nl + 1;
		rep = json_pack("{s:s, s:O?, s:{s:b, s:s}}", "jsonrpc", "2.0", "id", json_object_get(req, "id"),
				"result", "dispatched", 1, "token", "dt-echo");
		json_decref(req);
		if (!rep || !(text = json_dumps(rep, JSON_COMPACT))) {
			json_decref(rep);
			return -1;
		}
		json_decref(rep);
		size_t n = strlen(text);

		text[n] = '\n';
		for (size_t off = 0; ok && off <= n;) {
			ssize_t w = write(fd, text + off, n + 1 - off);

			if (w < 0 && errno == EINTR)
				continue;
			ok = w > 0;
			off += w > 0 ? (size_t)w : 0;
		}
		free(text);
		if (!ok)
			return -1;
	}
	*len -= (size_t)(start - buf);
	memmove(buf, start, *len);
	return 0;
}

/*
 * What `docket serve --socket` does without docket: one process, one poll
 * loop over the listening socket and every connection, newline-framed
 * requests parsed with jansson, each answered with a result that names its
 * id. Nothing is stored. Runs until SIGTERM.
 */
static void echo_serve(int lfd)
{
	struct pollfd p[MAX_CLIENTS + 8];
	static char buf[MAX_CLIENTS + 8][4096];
	size_t len[MAX_CLIENTS + 8];
	nfds_t n = 1;

	p[0].fd = lfd;
	p[0].events = POLLIN;
	for (;;) {
		if (poll(p, n, -1) < 0 && errno != EINTR)
			_exit(1);
		if ((p[0].revents & POLLIN) && n < MAX_CLIENTS + 8) {
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0) {
				p[n].fd = c;
				p[n].events = POLLIN;
				p[n].revents = 0;
				len[n++] = 0;
			}
		}
		for (nfds_t i = 1; i < n; i++) {
			ssize_t r;

			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(p[i].fd, buf[i] + len[i], sizeof(buf[i]) - len[i]);
			if (r <= 0 || (len[i] += (size_t)r, echo_lines(p[i].fd, buf[i], &len[i]) < 0) ||
			    len[i] == sizeof(buf[i])) {
				close(p[i].fd);
				p[i] = p[n - 1];
				len[i] = len[n - 1];
				memcpy(buf[i], buf[n - 1], len[i]);
				n--;
				i--;
			}
		}
	}
}

static int echo_start(serve_proc *sp, const char *sock)
{
	struct sockaddr_un a;
	int lfd;

	memset(sp, 0, sizeof(*sp));
	sp->pid = -1;
	sp->err_fd = -1;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (strlen(sock) >= sizeof(a.sun_path) || (lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	memcpy(a.sun_path, sock, strlen(sock));
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, MAX_CLIENTS) < 0) {
		close(lfd);
		return -1;
	}
	if ((sp->pid = fork()) == 0) {
		signal(SIGTERM, SIG_DFL);
		echo_serve(lfd);
	}
	close(lfd);
	return sp->pid > 0 ? 0 : -1;
}

static int echo_stop(serve_proc *sp)
{
	int status;

	if (sp->pid <= 0)
		return -1;
	kill(sp->pid, SIGTERM);
	return waitpid(sp->pid, &status, 0) == sp->pid && WIFSIGNALED(status) ? 0 : -1;
}

static int connect_to(const char *path)
{
	struct sockaddr_un addr;
	int fd;

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr.sun_path))
		return -1;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	for (int tries = 0; tries < 1000; tries++) {
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
			return fd;
		close(fd);
		if (errno != ECONNREFUSED && errno != ENOENT && errno != EAGAIN)
			return -1;
		usleep(2000);
	}
	return -1;
}

typedef struct shared {
	const options *o;
	const char *sock;
	const char *tag;
	pthread_barrier_t start, end;
	uint64_t deadline;     /* written before `start` */
} shared;

typedef struct client {
	shared *sh;
	unsigned idx;
	int fd;
	long next_id;
	char session[48];
	char buf[16384];
	size_t blen;
	uint64_t done;
	uint64_t end_ns;
	int failed;
	char err[256];
	bench_lat lat;
	pthread_t th;
} client;

static void client_fail(client *c, const char *what, const char *reply)
{
	if (c->failed)
		return;
	c->failed = 1;
	snprintf(c->err, sizeof(c->err), "client %u: %s%s%.160s", c->idx, what, reply ? ": " : "", reply ? reply : "");
}

/*
 * Send one request line (`params` is the params object's text) and read
 * its reply line into c->buf; returns the line or NULL.
 */
static const char *rpc(client *c, const char *method, const char *params)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":%s}\n",
			 ++c->next_id, method, params);
	char *nl;

	if (n < 0 || (size_t)n >= sizeof(line)) {
		client_fail(c, "request too long", NULL);
		return NULL;
	}
	for (int off = 0; off < n;) {
		ssize_t w = write(c->fd, line + off, (size_t)(n - off));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			client_fail(c, "docket went away (write)", strerror(errno));
			return NULL;
		}
		off += (int)w;
	}
	c->blen = 0;
	while (!(nl = c->blen ? memchr(c->buf, '\n', c->blen) : NULL)) {
		ssize_t r;

		if (c->blen == sizeof(c->buf) - 1) {
			client_fail(c, "reply too long", NULL);
			return NULL;
		}
		/* wait in poll, as an event-loop runtime does: a reader blocked in
		 * read() on an AF_UNIX stream is also woken (spuriously) each time
		 * the server reads this connection's request, which charges the
		 * server a cross-CPU wakeup per request */
		struct pollfd p = { c->fd, POLLIN, 0 };

		if (poll(&p, 1, -1) < 0 && errno != EINTR) {
			client_fail(c, "poll", strerror(errno));
			return NULL;
		}
		r = read(c->fd, c->buf + c->blen, sizeof(c->buf) - 1 - c->blen);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			client_fail(c, "docket went away (read)", NULL);
			return NULL;
		}
		c->blen += (size_t)r;
	}
	*nl = '\0';
	if (nl + 1 != c->buf + c->blen) {
		client_fail(c, "more than one reply to one request", c->buf);
		return NULL;
	}
	if (!strstr(c->buf, "\"result\":{") || strstr(c->buf, "\"error\":{")) {
		client_fail(c, method, c->buf);
		return NULL;
	}
	return c->buf;
}

static void *client_main(void *arg)
{
	client *c = arg;
	shared *sh = c->sh;
	const options *o = sh->o;
	char params[768];
	uint64_t deadline;

	snprintf(c->session, sizeof(c->session), "s-%s-%u", sh->tag, c->idx);
	c->fd = connect_to(sh->sock);
	if (c->fd < 0)
		client_fail(c, "cannot connect", strerror(errno));
	/* every connection of the runtime is bound to its epoch */
	if (!c->failed)
		rpc(c, "runtime.attach", "{\"epoch\":1}");
	snprintf(params, sizeof(params), "{\"session\":\"%s\",\"cwd\":\"/bench\"}", c->session);
	if (!c->failed)
		rpc(c, "session.open", params);
	pthread_barrier_wait(&sh->start);
	deadline = sh->deadline;
	while (!c->failed && keep_going(o, c->done, deadline)) {
		char inv[32];
		uint64_t t = bench_now_ns();
		const char *r;

		snprintf(inv, sizeof(inv), "i%" PRIu64, c->done);
		snprintf(params, sizeof(params),
			 "{\"session\":\"%s\",\"invocation\":\"%s\",\"tool\":\"shell\",\"args\":{\"command\":[\"echo\",\"%s\"]},"
			 "\"recovery\":\"idempotent\",\"decision\":{\"verdict\":\"allowed\",\"source\":\"runtime\"},"
			 "\"dispatch_if_allowed\":true}",
			 c->session, inv, inv);
		if (!(r = rpc(c, "tool.intent", params)))
			break;
		if (!strstr(r, "\"dispatched\":true") || !strstr(r, "\"token\":\"dt-")) {
			client_fail(c, "tool.intent was not dispatched", r);
			break;
		}
		snprintf(params, sizeof(params),
			 "{\"session\":\"%s\",\"invocation\":\"%s\",\"status\":\"ok\",\"exit_code\":0,\"output\":\"%s\"}",
			 c->session, inv, inv);
		if (!rpc(c, "tool.complete", params))
			break;
		bench_lat_push(&c->lat, bench_now_ns() - t);
		c->done++;
	}
	c->end_ns = bench_now_ns();
	pthread_barrier_wait(&sh->end);
	snprintf(params, sizeof(params), "{\"session\":\"%s\"}", c->session);
	if (!c->failed)
		rpc(c, "session.close", params);
	if (c->fd >= 0)
		close(c->fd);
	return NULL;
}

static pid_t perf_start(const char *file, pid_t target)
{
	char pid[32];
	pid_t p;

	snprintf(pid, sizeof(pid), "%d", (int)target);
	p = fork();
	if (p == 0) {
		char *argv[] = { "perf", "record", "-F", "999", "--call-graph", "dwarf,16384", "-q", "-o", (char *)file,
				 "-p", pid, NULL };
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0)
			dup2(devnull, STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	usleep(500000); /* let it attach */
	return p;
}

static void perf_stop(pid_t p)
{
	int status;

	if (p <= 0)
		return;
	kill(p, SIGINT);
	waitpid(p, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "bench_serve: perf record failed (status %d)\n", status);
}

static int run_serve(const options *o, const char *dir, unsigned nclients, const char *tag, const char *perf,
		     int echo, result *res)
{
	char *ledger = bench_path_join(dir, "ledger"), *sock = bench_path_join(dir, "sock");
	client *cl = calloc(nclients, sizeof(*cl));
	docket_ledger *l;
	serve_proc sp;
	shared sh;
	client ctl;
	uint64_t t0, s0, c0, w0, srv, cli, wr, inv = 0, end = 0;
	pid_t perf_pid = -1;
	unsigned started = 0;
	int error = -1, client_errors = 0;

	memset(&sp, 0, sizeof(sp));
	sp.pid = -1;
	sp.err_fd = -1;
	memset(&sh, 0, sizeof(sh));
	if (!ledger || !sock || !cl)
		goto out;
	if (echo) {
		if (echo_start(&sp, sock) < 0) {
			bench_fail("echo server", strerror(errno));
			goto out;
		}
	} else {
		if (!(l = create_ledger(ledger)))
			goto out;
		docket_ledger_free(l);
		if (serve_start(&sp, o, ledger, sock) < 0)
			goto stop;
	}
	/* one runtime: runtime.start on a control connection, then the clients */
	memset(&ctl, 0, sizeof(ctl));
	if ((ctl.fd = connect_to(sock)) < 0 || !rpc(&ctl, "runtime.start", "{\"runtime\":\"bench/1\"}")) {
		bench_fail("runtime.start", ctl.err);
		if (ctl.fd >= 0)
			close(ctl.fd);
		goto stop;
	}
	close(ctl.fd);
	sh.o = o;
	sh.sock = sock;
	sh.tag = tag;
	pthread_barrier_init(&sh.start, NULL, nclients + 1);
	pthread_barrier_init(&sh.end, NULL, nclients + 1);
	for (; started < nclients; started++) {
		cl[started].sh = &sh;
		cl[started].idx = started;
		cl[started].fd = -1;
		if (pthread_create(&cl[started].th, NULL, client_main, &cl[started]) != 0) {
			bench_fail("pthread_create", strerror(errno));
			/* the barriers count every client: run without the rest */
			abort();
		}
	}
	if (perf)
		perf_pid = perf_start(perf, sp.pid);
	s0 = proc_cpu_ns(sp.pid);
	w0 = proc_write_bytes(sp.pid);
	c0 = bench_cpu_ns();
	t0 = bench_now_ns();
	sh.deadline = deadline_of(o, t0);
	pthread_barrier_wait(&sh.start);
	pthread_barrier_wait(&sh.end);
	srv = proc_cpu_ns(sp.pid) - s0;
	wr = proc_write_bytes(sp.pid) - w0;
	cli = bench_cpu_ns() - c0;
	perf_stop(perf_pid);
	for (unsigned i = 0; i < started; i++) {
		pthread_join(cl[i].th, NULL);
		if (cl[i].failed) {
			if (client_errors++ < 3)
				bench_fail(tag, cl[i].err);
		}
		inv += cl[i].done;
		if (cl[i].end_ns > end)
			end = cl[i].end_ns;
		for (size_t k = 0; k < cl[i].lat.n; k++)
			bench_lat_push(&res->lat, cl[i].lat.v[k]);
		bench_lat_dispose(&cl[i].lat);
	}
	pthread_barrier_destroy(&sh.start);
	pthread_barrier_destroy(&sh.end);
	res->wall_ns += end - t0;
	res->inv += inv;
	res->srv_cpu_ns += srv;
	res->cli_cpu_ns += cli;
	res->wr_bytes += wr;
	res->clients = nclients;
	res->ran = 1;
	error = client_errors ? -1 : 0;
stop:
	if (echo ? echo_stop(&sp) < 0 : serve_stop(&sp, res) < 0)
		error = -1;
	if (error == 0 && !echo)
		check_ledger(ledger, tag, inv);
out:
	free(cl);
	free(ledger);
	free(sock);
	return error;
}

/* ---- one configuration, one round ---- */

static int run_one(const options *o, enum config c, result *res, int first_round)
{
	char *dir = bench_tempdir(o->dir, "docket-sbench-XXXXXX");

	if (!dir)
		return -1;
	bench_settle_disk(o->dir);
	switch (c) {
	case C_BASELINE:
		return run_baseline(o, dir, res);
	case C_CAPI:
		return run_capi(o, dir, res);
	case C_SERVE1:
		return run_serve(o, dir, 1, "serve1", NULL, 0, res);
	case C_SERVEN:
		return run_serve(o, dir, o->clients, "serveN", first_round ? o->perf : NULL, 0, res);
	case C_ECHO:
		return run_serve(o, dir, o->clients, "echo", NULL, 1, res);
	default:
		return -1;
	}
}

/* ---- report ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_serve DOCKET [--seconds S] [--count N] [--clients N] [--rounds R]\n"
		"                   [--dir DIR] [--only CONFIG] [--perf FILE] [--keep] [--quick]\n"
		"  DOCKET         the docket binary (serve runs as a child process)\n"
		"  --seconds S    wall time of each run (default 5)\n"
		"  --count N      instead: N invocations per client\n"
		"  --clients N    concurrent clients of the many-client run (default 64)\n"
		"  --rounds R     fresh ledgers per configuration, order reversed each round (default 2)\n"
		"  --dir DIR      where the ledgers go (default $TMPDIR, else /tmp)\n"
		"  --only CONFIG  run these configurations (comma-separated): single, capi, serve1, serve, echo\n"
		"  --perf FILE    perf record (dwarf call graphs) the serve process of the first\n"
		"                 many-client run\n"
		"  --keep         leave the ledgers on disk and name them\n"
		"  --quick        --count 20, 1 round: a correctness smoke test\n");
}

/* Is `key` one of the comma-separated configurations of --only? */
static int only_has(const char *only, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, key, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

static int parse_args(options *o, int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");

	o->seconds = 5;
	o->clients = 64;
	o->rounds = 2;
	o->dir = tmp && *tmp ? tmp : "/tmp";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;
		double v = 0;

		if (bench_common_flag(a, &o->quick, &o->keep))
			continue;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (a[0] != '-' && !o->docket) {
			o->docket = a;
			continue;
		}
		if (!val) {
			usage(stderr);
			return -1;
		}
		i++;
		if (strcmp(a, "--dir") == 0) {
			o->dir = val;
			continue;
		}
		if (strcmp(a, "--only") == 0) {
			o->only = val;
			continue;
		}
		if (strcmp(a, "--perf") == 0) {
			o->perf = val;
			continue;
		}
		errno = 0;
		v = strtod(val, &end);
		if (errno || end == val || *end || !(v > 0)) {
			fprintf(stderr, "bench_serve: %s wants a positive number\n", a);
			return -1;
		}
		if (strcmp(a, "--seconds") == 0)
			o->seconds = v;
		else if (strcmp(a, "--count") == 0)
			o->count = (uint64_t)v;
		else if (strcmp(a, "--clients") == 0)
			o->clients = v > MAX_CLIENTS ? MAX_CLIENTS : (unsigned)v;
		else if (strcmp(a, "--rounds") == 0)
			o->rounds = v > MAX_ROUNDS ? MAX_ROUNDS : (unsigned)v;
		else {
			usage(stderr);
			return -1;
		}
	}
	if (!o->docket) {
		usage(stderr);
		return -1;
	}
	if (o->quick) {
		o->count = 20;
		o->rounds = 1;
	}
	if (o->only) {
		int known = 0;

		for (int c = 0; c < C_COUNT; c++)
			known += only_has(o->only, config_key[c]);
		if (!known) {
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

int main(int argc, char **argv)
{
	static result res[C_COUNT];
	char name[C_COUNT][48];
	options o;
	uint64_t t_start = bench_now_ns();

	bench_init("bench_serve");
	memset(&o, 0, sizeof(o));
	if (parse_args(&o, argc, argv) < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	snprintf(name[C_BASELINE], sizeof(name[0]), "single-event commits");
	snprintf(name[C_CAPI], sizeof(name[0]), "C API, in process");
	snprintf(name[C_SERVE1], sizeof(name[0]), "serve, 1 client");
	snprintf(name[C_SERVEN], sizeof(name[0]), "serve, %u clients", o.clients);
	snprintf(name[C_ECHO], sizeof(name[0]), "echo (no storage), %u", o.clients);

	for (unsigned r = 0; r < o.rounds; r++) {
		for (int k = 0; k < C_COUNT; k++) {
			enum config c = (enum config)(r % 2 ? C_COUNT - 1 - k : k);

			if (o.only && !only_has(o.only, config_key[c]))
				continue;
			if (run_one(&o, c, &res[c], r == 0) < 0)
				bench_fail(name[c], "run failed");
		}
	}

	/* ---- the table ---- */
	const result *base = &res[C_BASELINE];

	printf("docket bench_serve: allowed invocations (tool.intent + dispatch_if_allowed, then tool.complete)\n");
	printf("  %s per run; %u round%s per configuration (order reversed each round); ledgers in %s; %ld CPUs\n",
	       o.count ? "fixed count" : "fixed wall time", o.rounds, o.rounds == 1 ? "" : "s", o.dir,
	       sysconf(_SC_NPROCESSORS_ONLN));
	if (o.count)
		printf("  %" PRIu64 " invocations per client\n", o.count);
	else
		printf("  %.1f s per run\n", o.seconds);
	printf("\n(inv/s = invocations / wall time; p50/p99: one invocation, intent sent -> complete acknowledged;\n"
	       "commits = durable write transactions; req/commit = serve's requests per commit (largest);\n"
	       "srv us/inv = CPU of the serve process (in process: of this process) per invocation;\n"
	       "cli us/inv = CPU of the client threads; KiB/inv, KiB/cmt = bytes the writer sent to storage\n"
	       "(/proc/PID/io write_bytes) per invocation and per commit; vs single = inv/s over the\n"
	       "single-event baseline, >1 is faster)\n");
	printf("%-22s %7s %8s %8s %7s %7s %8s %11s %10s %10s %8s %8s %9s\n", "configuration", "clients", "invocs",
	       "inv/s", "p50 ms", "p99 ms", "commits", "req/commit", "srv us/inv", "cli us/inv", "KiB/inv",
	       "KiB/cmt", "vs single");
	for (int c = 0; c < C_COUNT; c++) {
		result *r = &res[c];
		char batch[32] = "-", cli[16] = "-", vs[16] = "-";
		double inv = r->inv ? (double)r->inv : 1;

		if (!r->ran)
			continue;
		if (r->requests)
			snprintf(batch, sizeof(batch), "%.1f (%" PRIu64 ")",
				 (double)r->requests / (double)(r->commits ? r->commits : 1), r->max_batch);
		if (c == C_SERVE1 || c == C_SERVEN || c == C_ECHO)
			snprintf(cli, sizeof(cli), "%.1f", (double)r->cli_cpu_ns / 1e3 / inv);
		if (base->ran)
			snprintf(vs, sizeof(vs), "%.2fx", ratio(rate(r), rate(base)));
		printf("%-22s %7u %8" PRIu64 " %8.0f %7.2f %7.2f %8" PRIu64 " %11s %10.1f %10s %8.1f %8.1f %9s\n",
		       name[c], r->clients, r->inv, rate(r), bench_lat_ms(&r->lat, 50), bench_lat_ms(&r->lat, 99), r->commits, batch,
		       (double)r->srv_cpu_ns / 1e3 / inv, cli, (double)r->wr_bytes / 1024.0 / inv,
		       (double)r->wr_bytes / 1024.0 / (double)(r->commits ? r->commits : 1), vs);
	}
	double gn = rate(&res[C_SERVEN]);

	printf("\nGoal (issue 3)%s\n", o.quick ? " -- --quick sizes, not meaningful" : "");
	printf("  >= 50k invocations/s with %u clients through group commit: %.0f/s (%.2fx of the goal)   %s\n",
	       o.clients, gn, gn / GOAL_INV_PER_S, res[C_SERVEN].ran ? (gn >= GOAL_INV_PER_S ? "MET" : "MISSED") : "NOT RUN");
	if (res[C_SERVEN].ran && res[C_SERVEN].srv_cpu_ns) {
		double busy = (double)res[C_SERVEN].srv_cpu_ns / (double)(res[C_SERVEN].wall_ns ? res[C_SERVEN].wall_ns : 1);

		printf("  serve was on CPU %.0f%% of the %u-client runs (%.1f us per invocation: a single-threaded\n"
		       "  ceiling of ~%.0f invocations/s at 100%% CPU, before any fsync wait)\n",
		       100.0 * busy, o.clients, (double)res[C_SERVEN].srv_cpu_ns / 1e3 / (double)(res[C_SERVEN].inv ? res[C_SERVEN].inv : 1),
		       (double)res[C_SERVEN].inv * 1e9 / (double)res[C_SERVEN].srv_cpu_ns);
	}
	if (res[C_SERVEN].ran && res[C_ECHO].ran)
		printf("\nGoal (issue 12)\n  serve with %u clients >= 0.6x a no-storage JSON-RPC echo server with the same\n"
		       "  framing and clients: %.0f vs %.0f invocations/s = %.2fx   %s\n", o.clients, gn, rate(&res[C_ECHO]),
		       ratio(gn, rate(&res[C_ECHO])), ratio(gn, rate(&res[C_ECHO])) >= 0.6 ? "MET" : "MISSED");
	printf("  checks: every reply a success, every intent dispatched; per run: tool.intent = tool.dispatched =\n"
	       "  tool.completed = invocations done, nothing pending, docket_ledger_verify: %s; total run %.1f s\n",
	       bench_failures() ? "FAILED" : "ok", (double)(bench_now_ns() - t_start) / 1e9);

	/* ---- one machine-readable line ---- */
	json_t *out = json_pack("{s:s,s:f,s:I,s:i,s:i,s:b}", "bench", "serve", "seconds", o.count ? 0.0 : o.seconds,
				"count", (json_int_t)o.count, "clients", (int)o.clients, "rounds", (int)o.rounds,
				"quick", o.quick);
	json_t *runs = json_array();

	for (int c = 0; c < C_COUNT; c++) {
		result *r = &res[c];
		double inv = r->inv ? (double)r->inv : 1;

		if (!r->ran)
			continue;
		json_array_append_new(runs, json_pack("{s:s,s:i,s:I,s:f,s:f,s:f,s:I,s:I,s:I,s:f,s:f,s:f,s:f}",
			"config", config_key[c], "clients", (int)r->clients, "invocations", (json_int_t)r->inv,
			"inv_per_s", rate(r), "inv_ms_p50", bench_lat_ms(&r->lat, 50), "inv_ms_p99", bench_lat_ms(&r->lat, 99),
			"commits", (json_int_t)r->commits, "requests", (json_int_t)r->requests,
			"max_batch", (json_int_t)r->max_batch, "srv_cpu_us_per_inv", (double)r->srv_cpu_ns / 1e3 / inv,
			"cli_cpu_us_per_inv", (double)r->cli_cpu_ns / 1e3 / inv, "write_kib_per_inv", (double)r->wr_bytes / 1024.0 / inv,
			"vs_single", ratio(rate(r), rate(base))));
	}
	json_object_set_new(out, "runs", runs);
	json_object_set_new(out, "goal", json_pack("{s:f,s:b,s:f}", "serve_inv_per_s", gn, "met", gn >= GOAL_INV_PER_S,
						   "serve_vs_echo", ratio(gn, rate(&res[C_ECHO]))));
	bench_print_result(out);
	for (int c = 0; c < C_COUNT; c++)
		bench_lat_dispose(&res[c].lat);
	bench_tempdirs_dispose(o.keep);
	return bench_failures() ? 1 : 0;
}
