/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hook_server.c: the hook server (docs/write-path.md §3, "the hook
 * server"): the lingering folder of a docket-hook answers the events
 * docket-hook-fast hands it (hook_fast.c has the protocol), with the ledger
 * it holds open, exactly as a docket-hook of the same context would.
 *
 * The context is what an answer depends on besides the event: the ledger
 * path, the arguments, the working directory, the environment and the
 * docket-hook binary's identity (hook_fast.c has the layout). The
 * server was forked by a hook of one context and answers only requests of
 * that one, byte for byte; any other gets 'F' (run docket-hook). The
 * policy of --enforce is loaded for every event, as a hook process does:
 * an edit of it applies to the next event.
 *
 * A request is read within IO_MS; its peer must be this user (SO_PEERCRED).
 * A client that goes away mid-answer loses nothing: it runs docket-hook,
 * whose records of the same event fold as a re-delivery.
 */
#include "hook_server.h"
#include "hook_wire.h"
#include "hook_wire_shared.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

extern char **environ;

#define SOCKET_NAME "spool/.hook.sock"
#define IO_MS 1000
#define BACKLOG 64

typedef struct hook_server {
	docket_spool_server base;
	hook_setup setup;
	docket_buf context;
	struct sockaddr_un addr;
} hook_server;

static hook_server server;

/* hook_fast.c's identity_put, of this binary: a client beside a
 * docket-hook an upgrade replaced since is not this server's. */
static int identity_put(docket_buf *out)
{
	struct stat st;

	if (stat("/proc/self/exe", &st) != 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot stat /proc/self/exe: %s", strerror(errno));
	if (docket_buf_printf(out, "exe %lu:%lu:%lu:%lu.%lu", (unsigned long)st.st_dev, (unsigned long)st.st_ino,
			      (unsigned long)st.st_size, (unsigned long)st.st_mtim.tv_sec,
			      (unsigned long)st.st_mtim.tv_nsec) < 0)
		return docket_error_set_oom();
	return docket_buf_put(out, "", 1);
}

/* hook_fast.c's context_put and identity_put, from this process. */
static int context_build(docket_buf *out, const hook_setup *s, int argc, char **argv)
{
	char cwd[4096];
	int error = 0;

	if (!getcwd(cwd, sizeof(cwd)))
		return docket_error_set(DOCKET_ESTORAGE, "cannot read the working directory: %s", strerror(errno));
	error = docket_buf_put(out, s->ledger_path, strlen(s->ledger_path) + 1);
	for (int i = 0; error == 0 && i < argc; i++)
		error = docket_buf_put(out, argv[i], strlen(argv[i]) + 1);
	if (error == 0)
		error = docket_buf_put(out, "", 1);
	if (error == 0)
		error = docket_buf_put(out, cwd, strlen(cwd) + 1);
	for (char **e = environ; error == 0 && e && *e; e++)
		if (!hook_wire_env_ignored(*e))
			error = docket_buf_put(out, *e, strlen(*e) + 1);
	return error == 0 ? identity_put(out) : error;
}

static int server_listen(void *ctx)
{
	hook_server *h = ctx;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	/* the name is this folder's while it holds the folder lock: one left
	 * by a folder that died goes */
	(void)unlink(h->addr.sun_path);
	if (bind(fd, (const struct sockaddr *)&h->addr, sizeof(h->addr)) != 0 || listen(fd, BACKLOG) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void server_unlisten(void *ctx, int fd)
{
	hook_server *h = ctx;

	(void)unlink(h->addr.sun_path);
	close(fd);
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;  /* the client went: it runs docket-hook */
		p += w;
		n -= (size_t)w;
	}
}

static void reply(int fd, char kind, const docket_hook_answer *a)
{
	docket_buf b = DOCKET_BUF_INIT;

	if (hook_wire_answer(&b, kind, a ? a->exit_code : 0, a ? a->out : NULL, a ? a->err : NULL) == 0)
		send_all(fd, b.ptr, b.len);
	docket_error_clear();
	docket_buf_dispose(&b);
}

/* The connection's peer is this user; reads and writes time out. */
static int peer_ok(int conn)
{
	struct timeval tv = { IO_MS / 1000, (IO_MS % 1000) * 1000 };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int flags = 0;

	return getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof(cred) &&
	       cred.uid == geteuid() && setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
	       setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == 0 &&
	       (flags = fcntl(conn, F_GETFL)) >= 0 && fcntl(conn, F_SETFL, flags & ~O_NONBLOCK) == 0;
}

/* One request, and what the folder does next (spool.h). */
static int server_serve(void *ctx, docket_ledger *l, int conn)
{
	hook_server *h = ctx;
	docket_hook_answer answer = { 0, NULL, NULL, 0 };
	docket_buf in = DOCKET_BUF_INIT;
	docket_policy *policy = NULL;
	uint64_t start = docket_spool_now_ms();
	int match;

	if (!peer_ok(conn) || (match = hook_wire_read_request(conn, &h->context, &in)) < 0) {
		docket_buf_dispose(&in);
		return DOCKET_SPOOL_SERVE_ON;  /* no answer: the client runs docket-hook */
	}
	if (match == 0) {
		/* the newest context wins: its docket-hook forks the next server */
		reply(conn, 'F', NULL);
		return DOCKET_SPOOL_SERVE_STEP_DOWN;
	}
	if (hook_policy_load(&h->setup, &policy) < 0) {
		docket_buf_dispose(&in);
		reply(conn, 'F', NULL);  /* docket-hook reports it, with its watchdog */
		return DOCKET_SPOOL_SERVE_ON;
	}
	/* the client waits a quarter of the budget (hook_fast.c): a lock
	 * still held at an eighth sends the records to the spool */
	hook_event(&h->setup, l, policy, in.ptr, in.len, start + h->setup.budget_ms / 8, NULL, &answer);
	reply(conn, 'A', &answer);
	docket_hook_answer_dispose(&answer);
	docket_policy_free(policy);
	docket_buf_dispose(&in);
	docket_error_clear();
	return docket_spool_waiting() ? DOCKET_SPOOL_SERVE_STOP : DOCKET_SPOOL_SERVE_ON;
}

const docket_spool_server *hook_server_prepare(const hook_setup *s, int argc, char **argv)
{
	hook_server *h = &server;
	int n;

	if (h->base.serve)
		return &h->base;
	memset(h, 0, sizeof(*h));
	h->setup = *s;
	h->addr.sun_family = AF_UNIX;
	n = snprintf(h->addr.sun_path, sizeof(h->addr.sun_path), "%s/" SOCKET_NAME, s->ledger_path);
	if (n < 0 || (size_t)n >= sizeof(h->addr.sun_path) || context_build(&h->context, s, argc, argv) < 0) {
		docket_error_clear();
		docket_buf_dispose(&h->context);
		return NULL;
	}
	h->base.listen = server_listen;
	h->base.serve = server_serve;
	h->base.unlisten = server_unlisten;
	h->base.ctx = h;
	return &h->base;
}
