/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c: `docket serve`, newline-delimited JSON-RPC 2.0 over stdio or a
 * Unix socket.
 *
 * One thread, one poll loop. Each turn reads whatever the clients sent,
 * cuts it into lines, and executes every complete request of every client
 * as one batch: one write transaction, each request atomic and isolated in
 * it, one durable commit (group commit). Requests that arrive while a
 * commit is in flight wait in the socket buffers and go into the next
 * batch. Replies are queued only after the commit returned, so a reply
 * always means "durable". A request's own order is kept: a client may
 * pipeline intent, dispatch and complete.
 *
 * Methods that change what later requests see (runtime.start, policy.set,
 * recover.*) end their batch.
 *
 * SIGTERM/SIGINT: the batch in progress is finished and its replies sent;
 * lines not yet executed are dropped unanswered (the client never got a
 * reply, so nothing it believes was written is lost). Malformed JSON gets a
 * JSON-RPC parse error and the connection stays usable.
 */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

#define MAX_LINE ((size_t)32 << 20)
#define MAX_CONNS 1024
#define MAX_BATCH 4096
#define READ_CHUNK 65536

typedef struct conn {
	int in_fd, out_fd;
	docket_buf in;        /* bytes read, not yet cut into lines */
	size_t in_off;        /* start of the first unconsumed line */
	docket_buf out;       /* replies not yet written */
	size_t out_off;
	proto_conn proto;
	int eof;              /* no more input */
	int dead;             /* write failed: drop */
} conn;

typedef struct server {
	docket_ledger *ledger;
	const server_options *opts;
	proto_ctx *ctx;
	conn *conns[MAX_CONNS];
	size_t nconns;
	int listen_fd;
	int stdio;
	proto_call *calls;
	conn **call_conn;
	json_t **call_json;
	proto_call held_call;    /* a barrier waiting for the next batch */
	conn *held_conn;
	json_t *held_json;
	const char **opened;     /* sessions opened by the batch being gathered */
	size_t nopened;
	server_stats stats;
} server;

static volatile sig_atomic_t stop_requested;
static int wake_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	stop_requested = 1;
	if (wake_pipe[1] >= 0 && write(wake_pipe[1], "x", 1) < 0) {
		/* the flag is enough */
	}
	errno = saved;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -1 : 0;
}

static conn *conn_new(server *s, int in_fd, int out_fd)
{
	conn *c;

	if (s->nconns == MAX_CONNS || !(c = docket_calloc(1, sizeof(*c))))
		return NULL;
	c->in_fd = in_fd;
	c->out_fd = out_fd;
	s->conns[s->nconns++] = c;
	return c;
}

static void conn_free(server *s, size_t i)
{
	conn *c = s->conns[i];

	if (!s->stdio) {
		close(c->in_fd);
	}
	docket_buf_dispose(&c->in);
	docket_buf_dispose(&c->out);
	docket_free(c);
	s->conns[i] = s->conns[--s->nconns];
}

/* ---- output ---- */

static int conn_queue(conn *c, json_t *reply)
{
	int error;

	if (!reply)
		return 0;
	if ((error = docket_json_dump(&c->out, reply)) == 0)
		error = docket_buf_putc(&c->out, '\n');
	json_decref(reply);
	return error;
}

/* Write what can be written now; 0, or -1 when the peer is gone. */
static int conn_flush(conn *c, int blocking)
{
	while (c->out_off < c->out.len) {
		ssize_t n = write(c->out_fd, c->out.ptr + c->out_off, c->out.len - c->out_off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = { c->out_fd, POLLOUT, 0 };

			if (!blocking)
				return 0;
			if (poll(&p, 1, 5000) <= 0)
				return -1;
			continue;
		}
		if (n <= 0)
			return -1;
		c->out_off += (size_t)n;
	}
	docket_buf_clear(&c->out);
	c->out_off = 0;
	return 0;
}

/* ---- input ---- */

static int conn_read(conn *c)
{
	int error;

	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n;

		if ((error = docket_buf_reserve(&c->in, READ_CHUNK)) < 0)
			return error;
		n = read(c->in_fd, c->in.ptr + c->in.len, READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			c->eof = 1;
			return 0;
		}
		c->in.len += (size_t)n;
		c->in.ptr[c->in.len] = '\0';
		if ((size_t)n < READ_CHUNK)
			return 0;
	}
	return 0;
}

/* The next complete line of `c` (without its newline), or NULL. */
static const char *next_line(conn *c, size_t *len)
{
	char *start = c->in.ptr + c->in_off;
	char *nl;

	if (c->in_off >= c->in.len)
		return NULL;
	nl = memchr(start, '\n', c->in.len - c->in_off);
	if (!nl) {
		if (!c->eof || c->in.len == c->in_off)
			return NULL;
		nl = c->in.ptr + c->in.len; /* a last line without newline at EOF */
	}
	*len = (size_t)(nl - start);
	c->in_off = (size_t)(nl - c->in.ptr) + (nl < c->in.ptr + c->in.len ? 1 : 0);
	return start;
}

static void compact_input(conn *c)
{
	if (c->in_off == 0)
		return;
	memmove(c->in.ptr, c->in.ptr + c->in_off, c->in.len - c->in_off);
	c->in.len -= c->in_off;
	c->in_off = 0;
	c->in.ptr[c->in.len] = '\0';
}

/* ---- requests ---- */

static json_t *invalid(json_t *id, int code, const char *msg)
{
	docket_error e;

	memset(&e, 0, sizeof(e));
	e.code = DOCKET_EINVALID;
	return proto_error_response(id, code, msg, &e);
}

/*
 * Turn one line into a call (returns 1), or into a call that is already
 * answered (0: parse error, invalid request; call->reply is set, so the
 * answer keeps its place among the connection's replies), or skip it (-1:
 * a blank line).
 */
static int line_to_call(server *s, conn *c, const char *line, size_t len, proto_call *call, json_t **holder)
{
	json_t *req = NULL, *id, *params, *version;
	const char *method;
	json_error_t jerr;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return -1;
	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	memset(call, 0, sizeof(*call));
	call->conn = &c->proto;
	if (!req) {
		char msg[256];

		snprintf(msg, sizeof(msg), "parse error at column %d: %s", jerr.column, jerr.text);
		call->reply = invalid(NULL, RPC_PARSE_ERROR, msg);
		return 0;
	}
	id = json_object_get(req, "id");
	if (id && !json_is_string(id) && !json_is_integer(id) && !json_is_null(id)) {
		/* JSON-RPC 2.0: an id is a string, an integer or null; an object
		 * or a float is an invalid request, not a notification to run */
		call->reply = invalid(NULL, RPC_INVALID_REQUEST, "invalid request: id must be a string, an integer or null");
		*holder = req;
		return 0;
	}
	version = json_object_get(req, "jsonrpc");
	method = json_string_value(json_object_get(req, "method"));
	params = json_object_get(req, "params");
	if (!json_is_object(req) || !json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0 ||
	    !method || (params && !json_is_object(params))) {
		call->reply = invalid(id, RPC_INVALID_REQUEST,
				      json_is_array(req) ? "batch requests are not supported: send one request per line"
							 : "invalid request: need {\"jsonrpc\":\"2.0\",\"method\":...,\"params\":{...}}");
		*holder = req;
		return 0;
	}
	call->id = id;
	call->method = method;
	call->params = params ? params : json_object_get(req, "params");
	if (!call->params) {
		json_object_set_new(req, "params", json_object());
		call->params = json_object_get(req, "params");
	}
	*holder = req;
	return 1;
}

/*
 * Gather a batch: the complete lines of every connection. A barrier method
 * (runtime.start, policy.set, recover.*) runs in a batch of its own, so it
 * sees every earlier request committed and every later one sees its effect:
 * it ends the batch, and is held back for the next one if others precede it.
 */
/* Is `session` among the sessions opened in the batch being gathered? */
static int opened_in_batch(const server *s, const char *session)
{
	for (size_t i = 0; session && i < s->nopened; i++)
		if (strcmp(session, s->opened[i]) == 0)
			return 1;
	return 0;
}

static const char *call_session(const proto_call *call)
{
	return json_string_value(json_object_get(call->params, "session"));
}

/* Hold calls[n] (of connection c) for the next batch. */
static void hold(server *s, size_t n, conn *c, json_t *holder)
{
	s->held_call = s->calls[n];
	s->held_conn = c;
	s->held_json = holder;
}

/*
 * Add the call just parsed into calls[*n]; returns 1 when the batch must
 * end: a barrier (runtime.start, policy.set, recover.*) runs in a batch of
 * its own, so it sees every earlier request committed and every later one
 * sees its effect; a call about a session opened in this batch waits for
 * the next one, so docket decides it under the session's policy.
 */
static int take(server *s, size_t *n, conn *c, json_t *holder, int parsed)
{
	proto_call *call = &s->calls[*n];
	const char *session = parsed ? call_session(call) : NULL;
	int barrier = parsed && proto_method_is_barrier(call->method);
	int is_open = parsed && strcmp(call->method, "session.open") == 0;

	if (*n > 0 && (barrier || (!is_open && opened_in_batch(s, session)))) {
		hold(s, *n, c, holder);
		return 1;
	}
	s->call_conn[*n] = c;
	s->call_json[*n] = holder;
	(*n)++;
	if (is_open && session)
		s->opened[s->nopened++] = session;
	return barrier;
}

/* Gather a batch: the complete lines of every connection (see take()). */
static size_t gather(server *s, int *more)
{
	size_t n = 0;

	*more = 0;
	s->nopened = 0;
	if (s->held_json) {
		json_t *holder = s->held_json;

		s->calls[0] = s->held_call;
		s->held_json = NULL;
		if (take(s, &n, s->held_conn, holder, 1)) {
			*more = 1;
			return n;
		}
	}
	for (size_t i = 0; i < s->nconns && n < MAX_BATCH; i++) {
		conn *c = s->conns[i];
		const char *line;
		size_t len;

		while (n < MAX_BATCH && (line = next_line(c, &len))) {
			json_t *holder = NULL;
			int rc = line_to_call(s, c, line, len, &s->calls[n], &holder);

			if (rc < 0)
				continue;
			if (take(s, &n, c, holder, rc == 1)) {
				*more = 1;
				return n;
			}
		}
		if (n == MAX_BATCH)
			*more = 1;
	}
	return n;
}

static void execute_batch(server *s, size_t n)
{
	proto_call *todo = NULL;
	size_t k = 0;
	int error = 0;

	/* the calls already answered (parse errors) are not executed */
	if ((todo = docket_calloc(n, sizeof(*todo)))) {
		for (size_t i = 0; i < n; i++)
			if (!s->calls[i].reply)
				todo[k++] = s->calls[i];
		error = proto_execute(s->ctx, todo, k);
		k = 0;
		for (size_t i = 0; i < n; i++)
			if (!s->calls[i].reply)
				s->calls[i] = todo[k++];
	} else {
		error = docket_error_set(DOCKET_ENOMEM, "out of memory");
	}
	docket_free(todo);
	s->stats.batches++;
	s->stats.requests += n;
	if (n > s->stats.max_batch)
		s->stats.max_batch = n;
	for (size_t i = 0; i < n; i++) {
		proto_call *call = &s->calls[i];

		if (!call->reply && error < 0 && !call->error) {
			call->error = error;
			call->err = *docket_error_last();
		}
		if (call->error || call->reply)
			s->stats.errors++;
		conn_queue(s->call_conn[i], call->reply ? call->reply : proto_reply(s->ctx, call));
		call->reply = NULL;
		proto_call_dispose(call);
		json_decref(s->call_json[i]);
		s->call_json[i] = NULL;
	}
}

/* Execute every complete request there is; returns after the last batch. */
static void drain(server *s)
{
	int more = 1;

	while (more) {
		size_t n = gather(s, &more);

		if (n)
			execute_batch(s, n);
		for (size_t i = 0; i < s->nconns; i++)
			if (conn_flush(s->conns[i], 0) < 0)
				s->conns[i]->dead = 1;
		if (stop_requested && !s->held_json)
			break;
	}
	for (size_t i = 0; i < s->nconns; i++) {
		conn *c = s->conns[i];

		if (!c->eof && c->in.len - c->in_off > MAX_LINE) {
			conn_queue(c, invalid(NULL, RPC_INVALID_REQUEST, "request line too long"));
			c->eof = 1;
			c->in_off = c->in.len;
		}
		compact_input(c);
	}
}

/* ---- the socket ---- */

/* The directory holding `path` must not let others replace the socket. */
static int check_socket_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (stat(dir, &st) < 0)
		return docket_error_set(DOCKET_EINVALID, "socket directory %s: %s", dir, strerror(errno));
	/* others may write (and so swap the socket) unless the sticky bit keeps
	 * them to their own files, as in /tmp */
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return docket_error_set(DOCKET_EINVALID,
			"socket directory %s is writable by others: anyone could replace the socket", dir);
	return 0;
}

/*
 * What is at `path` before binding: nothing (fine), a stale socket nobody
 * listens on (removed), a live server (refused: connecting succeeded), or
 * something that is not a socket (refused: never deleted).
 */
static int clear_socket_path(const struct sockaddr_un *addr, const char *path)
{
	struct stat st;
	int fd, live;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : docket_error_set(DOCKET_EINVALID, "%s: %s", path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return docket_error_set(DOCKET_EINVALID, "%s exists and is not a socket; not replacing it", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return docket_error_set(DOCKET_ESTORAGE, "socket: %s", strerror(errno));
	live = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
	close(fd);
	if (live)
		return docket_error_set(DOCKET_EINVALID, "%s: another server is listening on it", path);
	if (unlink(path) < 0)
		return docket_error_set(DOCKET_ESTORAGE, "remove stale socket %s: %s", path, strerror(errno));
	return 0;
}

static int listen_on(server *s, const char *path)
{
	struct sockaddr_un addr;
	mode_t old;
	int fd, error;

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr.sun_path))
		return docket_error_set(DOCKET_EINVALID, "socket path too long: %s", path);
	memcpy(addr.sun_path, path, strlen(path) + 1);
	if ((error = check_socket_dir(path)) < 0 || (error = clear_socket_path(&addr, path)) < 0)
		return error;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return docket_error_set(DOCKET_ESTORAGE, "socket: %s", strerror(errno));
	old = umask(0177); /* created 0600, never wider even for an instant */
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		umask(old);
		close(fd);
		return docket_error_set(DOCKET_ESTORAGE, "bind %s: %s", path, strerror(errno));
	}
	umask(old);
	if ((s->opts->socket_gid_set && chown(path, (uid_t)-1, s->opts->socket_gid) < 0) ||
	    chmod(path, s->opts->socket_mode ? s->opts->socket_mode : 0600) < 0 ||
	    listen(fd, 256) < 0 || set_nonblock(fd) < 0) {
		int e = errno;

		close(fd);
		unlink(path);
		return docket_error_set(DOCKET_ESTORAGE, "socket %s: %s", path, strerror(e));
	}
	s->listen_fd = fd;
	return 0;
}

/* Is `uid` in the comma-separated list? */
static int uid_listed(const char *list, long long uid)
{
	char *end;

	for (const char *p = list; p && *p; p = *end ? end + 1 : end) {
		long long v = strtoll(p, &end, 10);

		if (end != p && v == uid && (*end == ',' || *end == '\0'))
			return 1;
		if (*end != ',' && *end != '\0')
			return 0;
	}
	return 0;
}

/*
 * Who is on the other end: the kernel's word (SO_PEERCRED), not the
 * client's. Its role: listed runtimes and approvers as configured, the
 * server's own uid the operator, anyone else (the socket's group) a runtime.
 */
static void peer_identity(const server *s, conn *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	c->proto.peer_uid = -1;
	c->proto.role = PROTO_ROLE_RUNTIME;
	if (getsockopt(c->in_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred))
		return;
	c->proto.peer_pid = cred.pid;
	c->proto.peer_uid = cred.uid;
	if (uid_listed(s->opts->runtime_uids, cred.uid))
		c->proto.role = PROTO_ROLE_RUNTIME;
	else if (uid_listed(s->opts->approver_uids, cred.uid))
		c->proto.role = PROTO_ROLE_APPROVER;
	else if (cred.uid == geteuid())
		c->proto.role = PROTO_ROLE_OPERATOR;
}

static void accept_all(server *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		conn *c;

		if (fd < 0)
			return;
		if (!(c = conn_new(s, fd, fd)))
			close(fd);
		else
			peer_identity(s, c);
	}
}

/* ---- the loop ---- */

static int poll_once(server *s)
{
	struct pollfd fds[MAX_CONNS + 2];
	nfds_t n = 0;
	int rc;

	fds[n++] = (struct pollfd){ wake_pipe[0], POLLIN, 0 };
	if (s->listen_fd >= 0)
		fds[n++] = (struct pollfd){ s->listen_fd, POLLIN, 0 };
	for (size_t i = 0; i < s->nconns; i++) {
		conn *c = s->conns[i];
		short ev = c->eof ? 0 : POLLIN;

		if (c->out.len > c->out_off)
			ev |= POLLOUT;
		fds[n++] = (struct pollfd){ c->in_fd, ev, 0 };
	}
	rc = poll(fds, n, -1);
	if (rc < 0)
		return errno == EINTR ? 0 : docket_error_set(DOCKET_ESTORAGE, "poll: %s", strerror(errno));
	if (s->listen_fd >= 0 && (fds[1].revents & POLLIN))
		accept_all(s);
	for (size_t i = 0, base = s->listen_fd >= 0 ? 2 : 1; i < s->nconns && base + i < n; i++) {
		conn *c = s->conns[i];
		short re = fds[base + i].revents;

		if ((re & (POLLIN | POLLHUP | POLLERR)) && !c->eof)
			conn_read(c);
		if ((re & POLLOUT) && conn_flush(c, 0) < 0)
			c->dead = 1;
	}
	return 0;
}

static void reap(server *s)
{
	for (size_t i = 0; i < s->nconns;) {
		conn *c = s->conns[i];
		int done = c->dead || (c->eof && c->in_off >= c->in.len && c->out_off >= c->out.len);

		if (done && !s->stdio)
			conn_free(s, i);
		else
			i++;
	}
}

static int stdio_finished(const server *s)
{
	const conn *c = s->conns[0];

	return c->dead || (c->eof && c->in_off >= c->in.len);
}

static int server_loop(server *s)
{
	int error = 0;

	while (!stop_requested && error == 0) {
		if ((error = poll_once(s)) < 0)
			break;
		drain(s);
		if (s->stdio && stdio_finished(s))
			break;
		reap(s);
	}
	/* stopping: finish in-flight replies, execute nothing new */
	for (size_t i = 0; i < s->nconns; i++)
		conn_flush(s->conns[i], 1);
	return error;
}

static void install_signals(struct sigaction *old_term, struct sigaction *old_int)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, old_term);
	sigaction(SIGINT, &sa, old_int);
	signal(SIGPIPE, SIG_IGN);
}

int server_run(docket_ledger *l, const server_options *opts, server_stats *stats)
{
	struct sigaction old_term, old_int;
	server s;
	int error;

	memset(&s, 0, sizeof(s));
	s.ledger = l;
	s.opts = opts;
	s.listen_fd = -1;
	s.stdio = opts->socket_path == NULL;
	stop_requested = 0;
	s.calls = docket_calloc(MAX_BATCH, sizeof(*s.calls));
	s.call_conn = docket_calloc(MAX_BATCH, sizeof(*s.call_conn));
	s.call_json = docket_calloc(MAX_BATCH, sizeof(*s.call_json));
	s.opened = docket_calloc(MAX_BATCH, sizeof(*s.opened));
	if (!s.calls || !s.call_conn || !s.call_json || !s.opened) {
		error = docket_error_set(DOCKET_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (pipe(wake_pipe) < 0 || set_nonblock(wake_pipe[0]) < 0 || set_nonblock(wake_pipe[1]) < 0) {
		error = docket_error_set(DOCKET_ESTORAGE, "pipe: %s", strerror(errno));
		goto cleanup;
	}
	if ((error = proto_ctx_new(&s.ctx, l, &opts->proto)) < 0)
		goto cleanup;
	if (s.stdio) {
		set_nonblock(STDIN_FILENO);
		if (!conn_new(&s, STDIN_FILENO, STDOUT_FILENO)) {
			error = docket_error_set(DOCKET_ENOMEM, "out of memory");
			goto cleanup;
		}
	} else if ((error = listen_on(&s, opts->socket_path)) < 0) {
		goto cleanup;
	}
	install_signals(&old_term, &old_int);
	if (opts->ready)
		opts->ready(opts->ready_ctx);
	error = server_loop(&s);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
cleanup:
	while (s.nconns)
		conn_free(&s, s.nconns - 1);
	if (s.listen_fd >= 0) {
		close(s.listen_fd);
		unlink(opts->socket_path);
	}
	for (int i = 0; i < 2; i++) {
		if (wake_pipe[i] >= 0)
			close(wake_pipe[i]);
		wake_pipe[i] = -1;
	}
	proto_ctx_free(s.ctx);
	docket_free(s.calls);
	docket_free(s.call_conn);
	docket_free(s.call_json);
	docket_free(s.opened);
	json_decref(s.held_json);
	if (stats)
		*stats = s.stats;
	return error;
}
