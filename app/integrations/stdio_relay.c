/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stdio_relay.c: the line pump under `docket mcp-proxy` and `docket
 * codex-relay` (stdio_relay.h).
 *
 *   client --line--> from_client() --> child stdin
 *   client <--line-- from_server() <-- child stdout
 *
 * The callbacks decide what to write and where (relay_write_all); the pump
 * only frames lines. A line longer than LINE_MAX_BYTES ends the relay.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stdio_relay.h"
#include "util/buf.h"
#include "util/error.h"

#define LINE_MAX_BYTES ((size_t)64 << 20)

/* SIGTERM or SIGINT seen while relaying (0: none). */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

int relay_signal(void)
{
	return (int)stop_signal;
}

typedef struct line_reader {
	docket_buf buf;
	int eof;
} line_reader;

int relay_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return docket_error_set(DOCKET_ESTORAGE, "write: %s", strerror(errno));
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read what is there; hand each whole line (with its newline) to `fn`. */
static int pump(int fd, line_reader *r, void *ctx, relay_line_fn fn)
{
	char chunk[65536];
	ssize_t got = read(fd, chunk, sizeof(chunk));
	size_t start = 0, i;
	int error = 0;

	if (got < 0 && errno == EINTR)
		return 0;
	if (got <= 0) {
		r->eof = 1;
		if (r->buf.len)  /* a last line without newline passes as it is */
			error = fn(ctx, r->buf.ptr, r->buf.len);
		docket_buf_clear(&r->buf);
		return error;
	}
	if ((error = docket_buf_put(&r->buf, chunk, (size_t)got)) < 0)
		return error;
	for (i = 0; i < r->buf.len && error == 0; i++) {
		if (r->buf.ptr[i] != '\n')
			continue;
		error = fn(ctx, r->buf.ptr + start, i + 1 - start);
		start = i + 1;
	}
	if (start) {
		memmove(r->buf.ptr, r->buf.ptr + start, r->buf.len - start);
		r->buf.len -= start;
	}
	if (error == 0 && r->buf.len > LINE_MAX_BYTES)
		error = docket_error_set(DOCKET_EINVALID, "a message longer than %zu bytes", LINE_MAX_BYTES);
	return error;
}

int relay_spawn(relay_ends *e, char *const *argv, const char *who)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	pid_t pid;

	memset(e, 0, sizeof(*e));
	e->who = who;
	e->client_in = STDIN_FILENO;
	e->client_out = STDOUT_FILENO;
	e->to_server = e->from_server = -1;
	if (pipe(in) != 0 || pipe(out) != 0) {
		if (in[0] >= 0) {
			close(in[0]);
			close(in[1]);
		}
		return docket_error_set(DOCKET_ESTORAGE, "pipe: %s", strerror(errno));
	}
	if ((pid = fork()) < 0) {
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		return docket_error_set(DOCKET_ESTORAGE, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		execvp(argv[0], argv);
		fprintf(stderr, "docket %s: cannot run %s: %s\n", who, argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	e->to_server = in[1];
	e->from_server = out[0];
	e->child = pid;
	return 0;
}

int relay_run(relay_ends *e, void *ctx, relay_line_fn from_client, relay_line_fn from_server, int *status)
{
	line_reader rc = { DOCKET_BUF_INIT, 0 }, rs = { DOCKET_BUF_INIT, 0 };
	struct sigaction sa, old_term, old_int;
	sigset_t stops, waiting;
	int error = 0, st = 0;

	signal(SIGPIPE, SIG_IGN);
	/*
	 * SIGTERM and SIGINT end the relay like an EOF, so the caller settles
	 * what is open and closes its session: they are blocked except inside
	 * ppoll, so one can never slip in between the check and the wait.
	 */
	stop_signal = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigprocmask(SIG_BLOCK, &stops, &waiting);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGINT, &sa, &old_int);
	sigdelset(&waiting, SIGTERM);
	sigdelset(&waiting, SIGINT);
	while (!rs.eof && error == 0 && !stop_signal) {
		struct pollfd fds[2] = { { e->from_server, POLLIN, 0 }, { e->client_in, POLLIN, 0 } };
		nfds_t n = rc.eof ? 1 : 2;

		if (ppoll(fds, n, NULL, &waiting) < 0) {
			if (errno == EINTR)
				continue;
			error = docket_error_set(DOCKET_ESTORAGE, "poll: %s", strerror(errno));
			break;
		}
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
			error = pump(e->from_server, &rs, ctx, from_server);
		if (error == 0 && n == 2 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			error = pump(e->client_in, &rc, ctx, from_client);
			if (rc.eof && e->to_server >= 0) {  /* the client is gone: the server sees EOF too */
				close(e->to_server);
				e->to_server = -1;
			}
		}
	}
	/* either end closing closes the other */
	if (e->to_server >= 0)
		close(e->to_server);
	close(e->from_server);
	close(e->client_out);
	e->to_server = e->from_server = -1;
	if (!rs.eof)
		kill(e->child, SIGTERM);
	waitpid(e->child, &st, 0);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigprocmask(SIG_UNBLOCK, &stops, NULL);
	docket_buf_dispose(&rc.buf);
	docket_buf_dispose(&rs.buf);
	if (status)
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return error;
}
