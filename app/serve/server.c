/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c: `docket serve`, newline-delimited JSON-RPC 2.0 over stdio or a
 * Unix socket.
 *
 * One poll loop, one writer and one syncer thread (docs/write-path.md §4).
 * Each turn of the loop reads whatever the clients sent, cuts it into lines and
 * prepares every complete request of every client as one batch (parse,
 * checks, policy, events); the writer thread appends a prepared batch in
 * one write transaction, each request atomic and isolated in it, with one
 * durable commit (group commit). While the writer commits batch N, the
 * loop prepares batch N + 1 from the clients that have nothing in N.
 * Where the two threads would have no cores of their own (fewer than
 * SERVER_THREADED_CPUS it may run on), the loop commits and syncs each batch
 * itself, as the writer and the syncer would, one after the other
 * (`inline_writer`): the same batches, the same order, the same rule that a
 * reply means "on disk"; on 2 cores the threads' hand-overs cost more CPU
 * than their overlap saves (docs/performance.md).
 * A commit syncs its data pages but not its meta page (MDB_NOMETASYNC,
 * store_defer_meta_sync): batch N is durable once a later sync covers it:
 * the syncer's, started as soon as N's commit returned and run while the
 * writer appends N + 1, or N + 1's commit if that returns first. Replies
 * are queued only then, so a reply always means "on disk"
 * (docs/write-path.md §4). A request's own order is kept: a client may
 * pipeline intent, dispatch and complete (its later lines wait while it
 * has calls in the batch being committed).
 *
 * A batch prepared while another commits reads the state before that
 * commit, so a call that could depend on the batch in flight is held until
 * the writer is idle: a barrier, a call naming no session, a call about a
 * session of the batch in flight. (The state machine checks every
 * invariant again inside the writer's transaction in any case.)
 *
 * Methods that change what later requests see (runtime.start, policy.set,
 * recover.*) end their batch.
 *
 * SIGTERM/SIGINT: the batch in progress is finished and its replies sent;
 * lines not yet executed are dropped unanswered (the client never got a
 * reply, so nothing it believes was written is lost). Malformed JSON gets a
 * JSON-RPC parse error and the connection stays usable.
 *
 * Hostile or broken clients (docs/architecture.md, "Hostile clients"):
 *  - a request line longer than max_request gets a JSON-RPC error and is
 *    skipped unread up to its newline; nothing longer is ever buffered
 *    whole or parsed, and the connection stays usable;
 *  - a client with more than max_queued reply bytes pending is not read
 *    (backpressure: its requests wait in the socket); one that takes none
 *    of its pending replies for client_timeout is dropped, logged;
 *  - at most max_clients connections (fewer when RLIMIT_NOFILE is low); a
 *    client beyond them, or one arriving when descriptors run out, is
 *    accepted (on a reserved descriptor if need be), told why and closed,
 *    and accepting pauses, backing off, instead of spinning on EMFILE;
 *  - readers that died inside a read transaction are cleared
 *    (mdb_reader_check) every READER_CHECK_BATCHES commits or second, so
 *    they cannot pin old pages and grow the file without bound;
 *  - SIGTERM: the batch in flight commits, then pending replies get one
 *    client_timeout in total (not one per client) to drain.
 */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"
#include "ledger/ledger_sys.h"

#define MAX_CONNS 1024           /* hard bound of max_clients */
#define MAX_BATCH 4096
#define NBATCH 4                 /* one gathered, one committing, two waiting for a sync */
#define READ_CHUNK 65536
#define SPARE_FDS 16             /* descriptors kept for LMDB, logs, the reserve */
#define KEEP_BUF ((size_t)256 << 10) /* idle buffers above this are given back */
#define READER_CHECK_BATCHES 64
#define READER_CHECK_MS 1000
#define ACCEPT_BACKOFF_MIN_MS 50
#define ACCEPT_BACKOFF_MAX_MS 1000
#define RPC_SERVER_BUSY (-32001) /* implementation-defined server error */
#define REFUSED_MAX 16           /* refused clients drained at once; more are closed at once */
#define REFUSED_MS 1000          /* how long a refused client's input is drained */
#define VALUE_BYTES 16           /* a request may hold max_request / 16 JSON values */

typedef struct conn {
	int in_fd, out_fd;
	docket_buf in;        /* bytes read, not yet cut into lines */
	size_t in_off;        /* start of the first unconsumed line */
	docket_buf out;       /* replies not yet written */
	size_t out_off;
	proto_conn proto;
	int eof;              /* no more input */
	int dead;             /* write failed: drop */
	int skipping;         /* discarding an oversized line up to its newline */
	unsigned id;          /* for log lines */
	int64_t progress_ms;  /* last time pending output moved (or appeared) */
	size_t calls;         /* its calls taken into a batch (or held), not yet answered */
	size_t flying;        /* ... of them in the batch the writer has */
} conn;

/*
 * A batch: gathered and prepared on the loop, committed by the writer,
 * answered on the loop; while the writer commits one batch, the loop keeps
 * adding the calls that arrive to the next. `sess` (open addressing, sess_cap a power of two)
 * holds the sessions its calls name while the writer has it.
 */
typedef struct batch {
	proto_call *calls;
	conn **call_conn;
	json_t **call_json;
	size_t n;                /* calls gathered and prepared */
	int barrier;             /* ends with a barrier: the next batch waits for it */
	int closed;              /* takes no more calls (a barrier, a held call, out of memory) */
	proto_batch pb;          /* its prepared calls (pb.n <= n: those after failed to prepare) */
	const char **sess;
	size_t sess_cap;
	int handed;              /* given to the writer (its calls count in their conns' `flying`) */
	/* set by the writer, under the server's lock */
	int committed;           /* its commit returned: its state is what later batches read */
	int durable;             /* ... and is on disk: it may be answered */
	uint64_t need;           /* durable once store_commits_durable() reaches this */
} batch;

typedef struct server {
	docket_ledger *ledger;
	const server_options *opts;
	proto_ctx *ctx;
	docket_json_tape *tape;  /* reads request lines for the text path */
	conn *conns[MAX_CONNS];
	size_t nconns;
	int listen_fd;
	int stdio;
	batch batches[NBATCH];
	batch *ready;            /* being gathered and prepared on the loop */
	batch *flight;           /* handed over, its commit not yet returned (NULL: none) */
	batch *queue[NBATCH];    /* handed over, not yet answered, oldest first (the loop's) */
	size_t nqueue;
	/* the writer and the syncer threads; under `lock`: `job` is handed
	 * over by the loop (`work` wakes the writer); `waiting` are the
	 * committed batches not yet durable (`unsynced` wakes the syncer);
	 * `busy` while the writer commits. `cond` and done_pipe wake the loop. */
	pthread_t writer, syncer;
	int writer_started, syncer_started;
	int inline_writer;   /* the loop commits and syncs (no writer, no syncer) */
	int writer_ready;    /* writer_start succeeded: writer_stop has work */
	pthread_mutex_t lock;
	pthread_cond_t cond, work, unsynced;
	batch *job;
	batch *waiting[NBATCH];
	size_t nwaiting;
	int busy, quit;
	int done_pipe[2];
	proto_call held_call;    /* a call waiting for the next batch */
	conn *held_conn;
	json_t *held_json;
	const char **opened;     /* sessions opened by the batch being gathered */
	size_t nopened;
	server_stats stats;
	/* limits, resolved (see server.h) */
	size_t max_request, max_queued;
	unsigned max_clients, timeout_ms;
	unsigned fd_room;        /* descriptors for clients, SPARE_FDS kept apart */
	unsigned next_id;
	int reserve_fd;          /* spent to refuse a client politely on EMFILE */
	int64_t accept_paused_until, accept_backoff_ms;
	struct refused {         /* told "busy", written shut, input drained until... */
		int fd;
		int64_t until;
	} refused[REFUSED_MAX];
	size_t nrefused;
	int64_t reader_checked_ms;
	uint64_t reader_checked_batches;
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

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	c->id = ++s->next_id;
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

/* Bytes of replies queued for c, not yet taken by the client. */
static size_t pending_out(const conn *c)
{
	return c->out.len - c->out_off;
}

/* Too many replies pending: read nothing more from c until it drains. */
static int backlogged(const server *s, const conn *c)
{
	return pending_out(c) > s->max_queued;
}

static int conn_queue(conn *c, json_t *reply)
{
	int error;

	if (!reply)
		return 0;
	if (pending_out(c) == 0)
		c->progress_ms = now_ms();
	if ((error = docket_json_dump(&c->out, reply)) == 0)
		error = docket_buf_putc(&c->out, '\n');
	json_decref(reply);
	return error;
}

/* Queue the reply of an executed call (nothing for a notification). */
static int conn_queue_call(server *s, conn *c, proto_call *call)
{
	size_t before = c->out.len;
	int error;

	if (pending_out(c) == 0)
		c->progress_ms = now_ms();
	if ((error = proto_reply_text(s->ctx, call, &c->out)) == 0 && c->out.len > before)
		error = docket_buf_putc(&c->out, '\n');
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
		c->progress_ms = now_ms();
	}
	if (c->out.cap > KEEP_BUF)
		docket_buf_dispose(&c->out); /* a burst of replies is given back */
	docket_buf_clear(&c->out);
	c->out_off = 0;
	return 0;
}

/* ---- input ---- */

/*
 * Drop the bytes of an oversized line read since `from`, up to and
 * including its newline; then the connection reads lines again.
 */
static void skip_oversized(conn *c, size_t from)
{
	char *nl = memchr(c->in.ptr + from, '\n', c->in.len - from);
	size_t rest;

	if (!nl) {
		c->in.len = from;
	} else {
		rest = (size_t)(c->in.ptr + c->in.len - (nl + 1));
		memmove(c->in.ptr + from, nl + 1, rest);
		c->in.len = from + rest;
		c->skipping = 0;
	}
	c->in.ptr[c->in.len] = '\0';
}

static int conn_read(const server *s, conn *c)
{
	int error;

	/* a round reads at most max_request more than a line may hold */
	for (size_t got = 0; got <= s->max_request; ) {
		size_t from = c->in.len;
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
		got += (size_t)n;
		if (c->skipping)
			skip_oversized(c, from);
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
	if (c->in.len == 0 && c->in.cap > KEEP_BUF)
		docket_buf_dispose(&c->in); /* a big line's buffer is given back */
	else
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

/* The answer to a request line over max_request (its id is not read). */
static json_t *too_large(server *s)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "request too large: over %zu bytes (serve --max-request); skipped to its end",
		 s->max_request);
	s->stats.oversized++;
	return invalid(NULL, RPC_INVALID_REQUEST, msg);
}

/*
 * The unfinished line at the end of c's input is over max_request (all
 * complete lines before it were taken): answer it with an error in its
 * place among the replies, drop what was read of it and skip the rest.
 */
static void refuse_oversized(server *s, conn *c)
{
	size_t have = c->in.len - c->in_off;

	if (c->skipping || have <= s->max_request || memchr(c->in.ptr + c->in_off, '\n', have))
		return;
	conn_queue(c, too_large(s));
	c->in.len = c->in_off;
	c->skipping = 1;
}

/*
 * More than `max` JSON values in line (a scan outside strings: each value
 * but the first follows '[', '{', ',' or ':')? A parsed value costs jansson
 * 40 to 80 bytes, so "[0,0,...]" would cost 40 times its length; with at
 * most one value per VALUE_BYTES of the line limit, a request's parse
 * stays within a few times that limit.
 */
static int too_many_values(const char *line, size_t len, size_t max)
{
	size_t n = 0;
	int in_string = 0;

	for (size_t i = 0; i < len; i++) {
		char ch = line[i];

		if (in_string) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_string = 0;
		} else if (ch == '"') {
			in_string = 1;
		} else if ((ch == '[' || ch == '{' || ch == ',' || ch == ':') && ++n > max) {
			return 1;
		}
	}
	return 0;
}

/*
 * A request the text path takes (proto_text_method): a JSON-RPC 2.0 object
 * that jansson would parse the same (no NUL in a string: the tree path
 * parses without JSON_ALLOW_NUL), with an id that is a string, an integer
 * or null (or none), a text-path method and an object for params. 1 and
 * `call` set up (the id parsed, *holder owns it); 0: the tree path reads
 * the line (and answers whatever is wrong with it); <0 out of memory.
 */
static int text_call(server *s, const char *line, size_t len, proto_call *call, json_t **holder)
{
	const docket_jv_ops *o = &docket_jv_tape;
	docket_tape_doc doc;
	docket_jv root, v, params, session;
	const char *method, *sv = NULL;
	size_t n, slen = 0;
	json_t *id = NULL;
	int error;

	if (!s->tape || docket_json_tape_parse(s->tape, line, len, &doc) < 0 || docket_jv_tape_root(&doc, &root) < 0 ||
	    o->type(root) != DOCKET_JV_OBJECT || docket_jv_tape_has_nul(&doc))
		return 0;
	v = o->get(root, "jsonrpc");
	if (o->type(v) != DOCKET_JV_STRING || strcmp(o->string(v, &n), "2.0") != 0)
		return 0;
	v = o->get(root, "method");
	params = o->get(root, "params");
	if (o->type(v) != DOCKET_JV_STRING || !(method = proto_text_method(o->string(v, &n))) ||
	    o->type(params) != DOCKET_JV_OBJECT)
		return 0;
	v = o->get(root, "id");
	switch (o->type(v)) {
	case DOCKET_JV_ABSENT: break;
	case DOCKET_JV_NULL: id = json_null(); break;
	case DOCKET_JV_INTEGER: id = json_integer(o->integer(v)); break;
	case DOCKET_JV_STRING: sv = o->string(v, &n); id = json_stringn(sv, n); break;
	default: return 0;
	}
	if (v.p && !id)
		return docket_error_set_oom();
	session = o->get(params, "session");
	sv = o->type(session) == DOCKET_JV_STRING ? o->string(session, &slen) : NULL;
	if ((error = proto_call_set_line(call, method, line, len, sv, slen)) < 0) {
		json_decref(id);
		return error;
	}
	call->id = id;
	*holder = id ? id : json_null(); /* a held call is known by its holder */
	return 1;
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
	int rc;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return -1;
	memset(call, 0, sizeof(*call));
	call->conn = &c->proto;
	if (len > s->max_request) { /* it arrived whole in one read */
		call->reply = too_large(s);
		return 0;
	}
	if (too_many_values(line, len, s->max_request / VALUE_BYTES)) {
		char msg[160];

		snprintf(msg, sizeof(msg), "request too complex: over %zu JSON values (one per %d bytes of --max-request)",
			 s->max_request / VALUE_BYTES, VALUE_BYTES);
		call->reply = invalid(NULL, RPC_INVALID_REQUEST, msg);
		s->stats.oversized++;
		return 0;
	}
	if ((rc = text_call(s, line, len, call, holder)) != 0) {
		if (rc > 0)
			return 1;
		call->reply = proto_error_response(NULL, RPC_DOCKET_ERROR, "out of memory parsing the request",
						   docket_error_last());
		return 0;
	}
	if (docket_json_load(&req, line, len, JSON_REJECT_DUPLICATES, &jerr) == DOCKET_ENOMEM) {
		call->reply = proto_error_response(NULL, RPC_DOCKET_ERROR, "out of memory parsing the request",
						   docket_error_last());
		return 0;
	}
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

static const char *call_session_of(const proto_call *call)
{
	return call->params ? json_string_value(json_object_get(call->params, "session")) : call->session;
}

/* ---- the sessions of the batch in flight ---- */

static uint32_t session_hash(const char *id)
{
	uint32_t h = 2166136261u;

	for (; *id; id++)
		h = (h ^ (uint8_t)*id) * 16777619u;
	return h;
}

/* The slot of `id` in b->sess, or the empty slot it would take. */
static const char **session_slot(const batch *b, const char *id)
{
	for (size_t i = session_hash(id) & (b->sess_cap - 1);; i = (i + 1) & (b->sess_cap - 1))
		if (!b->sess[i] || strcmp(b->sess[i], id) == 0)
			return &b->sess[i];
}

/* Record the sessions b's calls name (at most MAX_BATCH: the table has 2x). */
static void batch_index_sessions(batch *b)
{
	size_t cap = 16;

	while (cap < 2 * b->n)
		cap *= 2;
	b->sess_cap = cap;
	memset(b->sess, 0, cap * sizeof(*b->sess));
	for (size_t i = 0; i < b->n; i++) {
		const char *id = b->calls[i].reply ? NULL : call_session_of(&b->calls[i]);

		if (id)
			*session_slot(b, id) = id;
	}
}

/*
 * May `call` be prepared now? Always when the writer is idle; while it
 * commits a batch, only a call that cannot depend on that batch: no
 * barrier, a session named, and not one the batch in flight touches.
 */
static int independent(const server *s, const proto_call *call, int parsed)
{
	const char *id;

	if (!s->flight)
		return 1;
	if (!parsed)
		return 1; /* answered already (parse error, invalid request) */
	if (proto_method_is_barrier(call->method) || !(id = call_session_of(call)))
		return 0;
	return *session_slot(s->flight, id) == NULL;
}

/* ---- gathering a batch ---- */

/* Hold calls[n] (of connection c) for the next batch. */
static void hold(server *s, size_t n, conn *c, json_t *holder)
{
	s->held_call = s->ready->calls[n];
	s->held_conn = c;
	s->held_json = holder;
	c->calls++;
}

/*
 * Add the call just parsed into calls[*n]; returns 1 when the batch must
 * end: a barrier (runtime.start, policy.set, recover.*) runs in a batch of
 * its own, so it sees every earlier request committed and every later one
 * sees its effect; a call about a session opened in this batch waits for
 * the next one, so docket decides it under the session's policy; a call
 * that could depend on the batch in flight waits until it is committed.
 */
static int take(server *s, size_t *n, conn *c, json_t *holder, int parsed)
{
	batch *b = s->ready;
	proto_call *call = &b->calls[*n];
	const char *session = parsed ? call_session_of(call) : NULL;
	int barrier = parsed && proto_method_is_barrier(call->method);
	int is_open = parsed && strcmp(call->method, "session.open") == 0;

	if (!independent(s, call, parsed) || (*n > 0 && (barrier || (!is_open && opened_in_batch(s, session))))) {
		hold(s, *n, c, holder);
		return 1;
	}
	b->call_conn[*n] = c;
	b->call_json[*n] = holder;
	c->calls++;
	(*n)++;
	if (is_open && session)
		s->opened[s->nopened++] = session;
	b->barrier = barrier;
	return barrier;
}

/*
 * Gather into s->ready the complete lines of every connection (see take())
 * that has no call in flight, after the calls it holds already. A held
 * call starts a batch of its own once the writer is idle (it waited for
 * the batch before it). Returns the number of calls added.
 */
static size_t gather(server *s)
{
	batch *b = s->ready;
	size_t n = b->n;

	if (n == 0) { /* a batch closed before it took a call (its first was held) opens again */
		b->closed = b->barrier = 0;
		s->nopened = 0;
	}
	if (b->closed)
		return 0;
	if (s->held_json) {
		json_t *holder = s->held_json;
		conn *c = s->held_conn;

		if (s->flight || n)
			return 0;
		b->calls[0] = s->held_call;
		s->held_json = NULL;
		c->calls--;
		if (take(s, &n, c, holder, 1)) {
			b->closed = 1;
			return n;
		}
	}
	for (size_t i = 0; i < s->nconns && n < MAX_BATCH; i++) {
		conn *c = s->conns[i];
		const char *line;
		size_t len;

		if (backlogged(s, c) || c->flying)
			continue; /* its lines wait until it reads its replies, or its calls in flight are done */
		while (n < MAX_BATCH && (line = next_line(c, &len))) {
			json_t *holder = NULL;
			int rc = line_to_call(s, c, line, len, &b->calls[n], &holder);

			if (rc < 0)
				continue;
			if (take(s, &n, c, holder, rc == 1)) {
				b->closed = 1;
				return n - b->n;
			}
		}
	}
	return n - b->n;
}

/* Prepare the calls just gathered, b->calls[b->n..n) (parse, checks, policy, events). */
static void prepare_batch(server *s, batch *b, size_t n)
{
	size_t from = b->n;

	b->n = n;
	if (proto_batch_prepare(s->ctx, &b->pb, b->calls, from, n) == 0)
		return;
	b->closed = 1; /* out of memory: these calls fail, nothing more is added */
	for (size_t i = from; i < n; i++) {
		if (!b->calls[i].reply && !b->calls[i].error) {
			b->calls[i].error = docket_error_last()->code;
			b->calls[i].err = *docket_error_last();
		}
	}
}

/* ---- the writer thread ---- */

/* Fail every call of b not answered or refused already with `error`. */
static void fail_calls(batch *b, int error)
{
	for (size_t i = 0; error < 0 && i < b->n; i++) {
		proto_call *call = &b->calls[i];

		if (!call->reply && !call->error) {
			call->error = error;
			call->err = *docket_error_last();
		}
	}
}

/* Commit b (on the writer thread); a failed commit fails every call in it. */
static void commit_batch(server *s, batch *b)
{
	fail_calls(b, proto_batch_commit(s->ctx, &b->pb));
}

/* Under the lock: the committed batches the last sync covers may be answered. */
static void writer_settle(server *s)
{
	uint64_t durable = store_commits_durable(s->ledger);
	size_t kept = 0;

	for (size_t i = 0; i < s->nwaiting; i++) {
		if (s->waiting[i]->need <= durable)
			s->waiting[i]->durable = 1;
		else
			s->waiting[kept++] = s->waiting[i];
	}
	s->nwaiting = kept;
}

/* Under the lock: tell the loop the writer moved (done_pipe wakes its poll). */
static void writer_notify(server *s)
{
	pthread_cond_broadcast(&s->cond);
	if (write(s->done_pipe[1], "x", 1) < 0) {
		/* the pipe is full: the loop has a wakeup pending anyway */
	}
}

/* Under the lock: b is committed; what it read or wrote is on disk once
 * the durable count reaches the commits written now. */
static void committed(server *s, batch *b)
{
	b->need = store_commits_written(s->ledger);
	b->committed = 1;
	s->waiting[s->nwaiting++] = b;
}

/* Under the lock: a sync failed; the batches waiting are not known to be
 * on disk: their calls fail, never acknowledged (and every later sync
 * fails too). */
static void sync_failed(server *s, int error)
{
	for (size_t i = 0; i < s->nwaiting; i++) {
		fail_calls(s->waiting[i], error);
		s->waiting[i]->need = 0;
	}
}

/* Under the lock (let go during the sync): sync the data file; if that
 * failed, so do the calls waiting; then settle what the sync covered. */
static void sync_settle(server *s)
{
	int error;

	pthread_mutex_unlock(&s->lock);
	error = store_sync(s->ledger);
	pthread_mutex_lock(&s->lock);
	if (error < 0)
		sync_failed(s, error);
	writer_settle(s);
}

/*
 * The writer (docs/write-path.md §4): commit each batch handed over and
 * pass it to the syncer. Its commit's fdatasync also makes the batches
 * committed before it durable, when the syncer has not yet.
 */
static void *writer_main(void *arg)
{
	server *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		batch *b = s->job;

		if (!b && s->quit)
			break;
		if (!b) {
			pthread_cond_wait(&s->work, &s->lock);
			continue;
		}
		s->job = NULL;
		s->busy = 1;
		pthread_mutex_unlock(&s->lock);
		commit_batch(s, b);
		pthread_mutex_lock(&s->lock);
		committed(s, b);
		s->busy = 0;
		pthread_cond_signal(&s->unsynced);
		writer_settle(s);
		writer_notify(s);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/*
 * The syncer: as soon as a committed batch waits, sync (store_sync), while
 * the writer already prepares and commits the next one: the sync that
 * answers batch N overlaps batch N + 1's append instead of waiting for
 * its commit. A failed sync fails every batch waiting, and every later one
 * (store_sync fails from then on): none is acknowledged.
 */
static void *syncer_main(void *arg)
{
	server *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		if (!s->nwaiting && s->quit && !s->busy && !s->job)
			break;
		if (!s->nwaiting) {
			pthread_cond_wait(&s->unsynced, &s->lock);
			continue;
		}
		sync_settle(s);
		writer_notify(s);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* A batch neither ready nor handed over (NULL: all are in use). */
static batch *free_batch(server *s)
{
	for (size_t i = 0; i < NBATCH; i++) {
		batch *b = &s->batches[i];
		int used = b == s->ready;

		for (size_t j = 0; j < s->nqueue && !used; j++)
			used = s->queue[j] == b;
		if (!used)
			return b;
	}
	return NULL;
}

/* Is the writer idle (nothing handed over, not committing or syncing)? */
static int writer_idle(server *s)
{
	int idle;

	pthread_mutex_lock(&s->lock);
	idle = !s->job && !s->busy;
	pthread_mutex_unlock(&s->lock);
	return idle;
}

/* The inline writer: what the writer thread and then the syncer do with
 * b, on the loop (the next writer_progress answers it). */
static void commit_here(server *s, batch *b)
{
	commit_batch(s, b);
	pthread_mutex_lock(&s->lock);
	committed(s, b);
	sync_settle(s);
	pthread_mutex_unlock(&s->lock);
}

/* Give the ready batch to the (idle) writer. */
static void hand_over(server *s, batch *next)
{
	batch *b = s->ready;

	batch_index_sessions(b);
	for (size_t i = 0; i < b->n; i++)
		b->call_conn[i]->flying++;
	b->handed = 1;
	b->committed = b->durable = 0;
	s->queue[s->nqueue++] = b;
	s->flight = b;
	s->ready = next;
	next->n = 0;
	if (s->inline_writer) {
		commit_here(s, b);
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->job = b;
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->lock);
}

/* Queue the replies of b, committed and durable (or refused before any commit). */
static void answer_batch(server *s, batch *b)
{
	s->stats.batches++;
	s->stats.requests += b->n;
	if (b->n > s->stats.max_batch)
		s->stats.max_batch = b->n;
	for (size_t i = 0; i < b->n; i++) {
		proto_call *call = &b->calls[i];
		conn *c = b->call_conn[i];

		if (call->error || call->reply)
			s->stats.errors++;
		if (call->reply)
			conn_queue(c, call->reply);
		else
			conn_queue_call(s, c, call);
		call->reply = NULL;
		proto_call_dispose(call);
		json_decref(b->call_json[i]);
		b->call_json[i] = NULL;
		c->flying -= b->handed;
		c->calls--;
	}
	proto_batch_dispose(&b->pb);
	b->n = 0;
	b->handed = 0;
}

/*
 * What the writer did: the batch in flight is committed (the next may be
 * prepared on its state, and handed over), and the handed batches that
 * are durable, oldest first, are answered. 1 when something moved.
 */
static int writer_progress(server *s)
{
	batch *done[NBATCH];
	size_t ndone = 0;
	int moved = 0;

	pthread_mutex_lock(&s->lock);
	if (s->flight && s->flight->committed) {
		s->flight = NULL;
		moved = 1;
	}
	while (ndone < s->nqueue && s->queue[ndone]->durable)
		done[ndone] = s->queue[ndone], ndone++;
	pthread_mutex_unlock(&s->lock);
	memmove(s->queue, s->queue + ndone, (s->nqueue - ndone) * sizeof(*s->queue));
	s->nqueue -= ndone;
	for (size_t i = 0; i < ndone; i++)
		answer_batch(s, done[i]);
	return moved || ndone;
}

/* Wait until the writer moves (stopping). */
static void writer_wait(server *s)
{
	pthread_mutex_lock(&s->lock);
	while (!(s->flight && s->flight->committed) && !(s->nqueue && s->queue[0]->durable))
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

/*
 * A ready batch with nothing to append (parse errors, recover.plan, calls
 * refused when prepared) is answered at once on the loop when nothing
 * handed over waits for the writer (so everything it may have read is
 * durable): it needs no commit, and a client sending junk costs no round
 * trip through the writer per batch.
 */
static int answer_without_commit(server *s)
{
	batch *b = s->ready;

	if (s->nqueue || !b->n || b->pb.ngroups)
		return 0;
	commit_batch(s, b); /* appends nothing; a recover.apply's empty plan is reported */
	answer_batch(s, b);
	return 1;
}

/* The ready batch to the idle writer (or answered, when it appends nothing). */
static int dispatch_ready(server *s)
{
	batch *next;

	if (answer_without_commit(s))
		return 1;
	if (s->flight || !s->ready->n || !(next = free_batch(s)) || !writer_idle(s))
		return 0;
	hand_over(s, next);
	return 1;
}

/*
 * One step of the pipeline: answer what the writer made durable, prepare
 * the next batch, hand a prepared batch to an idle writer. 1 when
 * something moved. Nothing new is gathered while stopping or while a
 * barrier is in flight.
 */
static int pump(server *s)
{
	int moved = writer_progress(s);
	size_t n;

	moved |= dispatch_ready(s);
	if (!stop_requested && !(s->flight && s->flight->barrier) && (n = gather(s)) > 0) {
		prepare_batch(s, s->ready, s->ready->n + n);
		moved = 1;
	}
	moved |= dispatch_ready(s);
	return moved;
}

/* Queue what can be queued now; flush what the clients take. */
static void drain(server *s)
{
	while (pump(s)) {
	}
	for (size_t i = 0; i < s->nconns; i++)
		if (conn_flush(s->conns[i], 0) < 0)
			s->conns[i]->dead = 1;
	for (size_t i = 0; i < s->nconns; i++) {
		conn *c = s->conns[i];

		if (!backlogged(s, c) && !c->calls)
			refuse_oversized(s, c); /* after its earlier replies, never before */
		compact_input(c);
	}
}

/* Stopping: the batches handed over and the one prepared commit and are answered. */
static void finish_batches(server *s)
{
	for (;;) {
		writer_progress(s);
		dispatch_ready(s);
		if (!s->nqueue && !s->ready->n)
			return;
		writer_wait(s);
	}
}

/* The lock and the three conditions (the loop's, the writer's, the syncer's). */
static int locks_init(server *s)
{
	pthread_cond_t *conds[] = { &s->cond, &s->work, &s->unsynced };
	size_t n = 0;

	if (pthread_mutex_init(&s->lock, NULL) != 0)
		return docket_error_set(DOCKET_ENOMEM, "mutex: out of resources");
	while (n < 3 && pthread_cond_init(conds[n], NULL) == 0)
		n++;
	if (n == 3)
		return 0;
	while (n > 0)
		pthread_cond_destroy(conds[--n]);
	pthread_mutex_destroy(&s->lock);
	return docket_error_set(DOCKET_ENOMEM, "condition variable: out of resources");
}

static void locks_destroy(server *s)
{
	pthread_cond_destroy(&s->cond);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->unsynced);
	pthread_mutex_destroy(&s->lock);
}

/* A thread that takes no signal (SIGTERM, SIGINT: the loop's; a write or
 * fsync of a commit is never interrupted by one). */
static int thread_start(pthread_t *t, void *(*main_fn)(void *), server *s, const char *what)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(t, NULL, main_fn, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc == 0 ? 0 : docket_error_set(DOCKET_ENOMEM, "%s thread: %s", what, strerror(rc));
}

server_writer server_writer_for(server_writer w)
{
	cpu_set_t set;
	long cpus;

	if (w != SERVER_WRITER_AUTO)
		return w;
	cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
	return cpus >= SERVER_THREADED_CPUS ? SERVER_WRITER_THREADS : SERVER_WRITER_INLINE;
}

static int writer_start(server *s, server_writer w)
{
	int rc;

	/* a commit is acknowledged after a later sync (docs/write-path.md §4) */
	if ((rc = store_defer_meta_sync(s->ledger, 1)) < 0 || (rc = locks_init(s)) < 0)
		return rc;
	s->writer_ready = 1;
	if (server_writer_for(w) == SERVER_WRITER_INLINE) {
		s->inline_writer = 1;
		return 0;
	}
	if ((rc = thread_start(&s->writer, writer_main, s, "writer")) < 0)
		return rc; /* writer_stop cleans up */
	s->writer_started = 1;
	if ((rc = thread_start(&s->syncer, syncer_main, s, "syncer")) < 0)
		return rc; /* writer_stop stops the writer */
	s->syncer_started = 1;
	return 0;
}

static void writer_stop(server *s)
{
	if (!s->writer_ready)
		return;
	if (s->inline_writer || s->writer_started)
		finish_batches(s);
	pthread_mutex_lock(&s->lock);
	s->quit = 1;
	pthread_cond_signal(&s->work);
	pthread_cond_signal(&s->unsynced);
	pthread_mutex_unlock(&s->lock);
	if (s->writer_started)
		pthread_join(s->writer, NULL);
	if (s->syncer_started)
		pthread_join(s->syncer, NULL);
	locks_destroy(s);
	s->writer_started = s->syncer_started = s->writer_ready = s->inline_writer = 0;
	if (store_defer_meta_sync(s->ledger, 0) < 0) /* every batch was synced and answered */
		docket_error_clear();
}

static int batch_init(batch *b)
{
	b->calls = docket_calloc(MAX_BATCH, sizeof(*b->calls));
	b->call_conn = docket_calloc(MAX_BATCH, sizeof(*b->call_conn));
	b->call_json = docket_calloc(MAX_BATCH, sizeof(*b->call_json));
	b->sess = docket_calloc(2 * MAX_BATCH, sizeof(*b->sess));
	return b->calls && b->call_conn && b->call_json && b->sess ? 0 : docket_error_set_oom();
}

static void batch_free(batch *b)
{
	docket_free(b->calls);
	docket_free(b->call_conn);
	docket_free(b->call_json);
	docket_free(b->sess);
}

/* ---- the socket ---- */

/*
 * The directory holding `path` must not let anyone but us replace the
 * socket: not another user's (its owner could), not writable by others,
 * and writable by its group only when the operator named that group with
 * --socket-group (its members are then trusted with the socket anyway).
 * The sticky bit (as in /tmp) keeps writers to their own files.
 */
static int check_socket_dir(const char *path, const server_options *o)
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
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return docket_error_set(DOCKET_EINVALID,
			"socket directory %s is owned by uid %lu (you are uid %lu): its owner could replace the socket",
			dir, (unsigned long)st.st_uid, (unsigned long)geteuid());
	/* others may write (and so swap the socket) unless the sticky bit keeps
	 * them to their own files, as in /tmp */
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return docket_error_set(DOCKET_EINVALID,
			"socket directory %s is writable by others: anyone could replace the socket", dir);
	if ((st.st_mode & S_IWGRP) && !(st.st_mode & S_ISVTX) && !(o->socket_gid_set && st.st_gid == o->socket_gid))
		return docket_error_set(DOCKET_EINVALID,
			"socket directory %s is writable by its group (gid %lu): its members could replace the socket; "
			"chmod g-w it, or name that group with --socket-group if its members are trusted with the socket",
			dir, (unsigned long)st.st_gid);
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
	if ((error = check_socket_dir(path, s->opts)) < 0 || (error = clear_socket_path(&addr, path)) < 0)
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

/*
 * Tell a client why it is turned away (one line, best effort), then shut
 * our side. A client usually writes its first request before serve gets to
 * it, and closing a socket with unread input resets it: the client would
 * get ECONNRESET or EPIPE and never read the line. So, with `drain`, the
 * connection stays open, written shut, and its input is read and dropped
 * until the client closes it or REFUSED_MS pass (at most REFUSED_MAX at
 * once, and only while the clients leave descriptors to spare;
 * refused_service). Without `drain` (the reserve descriptor of
 * accept_back_off, which must be free again at once) it is closed now.
 */
static void refuse(server *s, int fd, const char *why, int drain)
{
	json_t *r = json_pack("{s:s, s:n, s:{s:i, s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", "error", "code",
			      RPC_SERVER_BUSY, "message", why, "data", "kind", "busy");
	char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;

	if (text && write(fd, text, strlen(text)) >= 0 && write(fd, "\n", 1) < 0) {
		/* the client is gone: nothing to tell */
	}
	docket_free(text); /* jansson allocates with docket_malloc */
	json_decref(r);
	s->stats.refused++;
	/* draining holds the descriptor: only where clients leave room */
	if (drain && s->nrefused < REFUSED_MAX && s->nconns + s->nrefused + 1 < s->fd_room &&
	    shutdown(fd, SHUT_WR) == 0)
		s->refused[s->nrefused++] = (struct refused){ fd, now_ms() + REFUSED_MS };
	else
		close(fd);
}

/* Read and drop what refused clients sent; close those that closed, failed
 * or ran out of time. `fds[i]` polled refused[i], for the first `n`. */
static void refused_service(server *s, const struct pollfd *fds, size_t n, int64_t now)
{
	for (size_t i = n; i-- > 0;) {
		char sink[4096];
		ssize_t r = 1;
		int gone;

		/* at most 64 KiB a turn, so that a flooding client cannot hold the loop */
		for (int k = 0; k < 16 && fds[i].revents && r > 0; k++)
			r = read(s->refused[i].fd, sink, sizeof(sink));
		gone = r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
		if (gone || now >= s->refused[i].until) {
			close(s->refused[i].fd);
			s->refused[i] = s->refused[--s->nrefused];
		}
	}
}

/* Out of descriptors: pause accepting, doubling the pause while it lasts. */
static void accept_back_off(server *s, int err)
{
	int64_t b = s->accept_backoff_ms ? s->accept_backoff_ms * 2 : ACCEPT_BACKOFF_MIN_MS;

	s->accept_backoff_ms = b > ACCEPT_BACKOFF_MAX_MS ? ACCEPT_BACKOFF_MAX_MS : b;
	s->accept_paused_until = now_ms() + s->accept_backoff_ms;
	if (s->accept_backoff_ms == ACCEPT_BACKOFF_MIN_MS)
		fprintf(stderr, "docket: out of file descriptors with %zu clients (%s): refusing new clients for now\n",
			s->nconns, strerror(err));
	/* the reserved descriptor lets the waiting client hear why */
	if (s->reserve_fd >= 0) {
		int fd;

		close(s->reserve_fd);
		fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			refuse(s, fd, "server busy: out of file descriptors; retry later", 0);
		s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
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
 * A uid's role, from the operator's configuration: listed runtimes and
 * approvers as configured (--runtimes, --approvers), the server's own uid
 * the operator, anyone else (the socket's group) a runtime.
 */
static int role_of_uid(const server *s, long long uid)
{
	if (uid_listed(s->opts->runtime_uids, uid))
		return PROTO_ROLE_RUNTIME;
	if (uid_listed(s->opts->approver_uids, uid))
		return PROTO_ROLE_APPROVER;
	return uid == (long long)geteuid() ? PROTO_ROLE_OPERATOR : PROTO_ROLE_RUNTIME;
}

/* Who is on the other end: the kernel's word (SO_PEERCRED), not the client's. */
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
	c->proto.role = role_of_uid(s, cred.uid);
}

static void accept_all(server *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		char why[96];
		conn *c;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				accept_back_off(s, errno);
			return;
		}
		s->accept_backoff_ms = 0;
		if (s->nconns >= s->max_clients) {
			snprintf(why, sizeof(why), "server busy: %u clients connected (serve --max-clients)",
				 s->max_clients);
			refuse(s, fd, why, 1);
		} else if (!(c = conn_new(s, fd, fd))) {
			refuse(s, fd, "server busy: out of memory", 1);
		} else {
			peer_identity(s, c);
		}
	}
}

/* ---- the loop ---- */

/*
 * One wait: every connection for input (unless it is at EOF or
 * backlogged) and for output it has pending, the listening socket unless
 * accepting is paused. Wakes at least once a second for the timers.
 */
static int poll_once(server *s)
{
	struct pollfd fds[MAX_CONNS + 3 + REFUSED_MAX];
	nfds_t n = 0, first_refused;
	size_t nrefused = s->nrefused;
	int64_t now = now_ms();
	int rc, timeout = READER_CHECK_MS, listening = s->listen_fd >= 0 && now >= s->accept_paused_until;

	fds[n++] = (struct pollfd){ wake_pipe[0], POLLIN, 0 };
	fds[n++] = (struct pollfd){ s->done_pipe[0], POLLIN, 0 };
	if (s->listen_fd >= 0)
		fds[n++] = (struct pollfd){ listening ? s->listen_fd : -1, POLLIN, 0 };
	if (s->listen_fd >= 0 && !listening && s->accept_paused_until - now < timeout)
		timeout = (int)(s->accept_paused_until - now);
	for (size_t i = 0; i < s->nconns; i++) {
		conn *c = s->conns[i];
		/* a client with calls in flight and a line over the limit waits
		 * for their replies before the line is refused (refuse_oversized) */
		int waiting = c->calls && c->in.len - c->in_off > s->max_request;
		short ev = c->eof || backlogged(s, c) || waiting ? 0 : POLLIN;

		if (pending_out(c))
			ev |= POLLOUT;
		fds[n++] = (struct pollfd){ c->in_fd, ev, 0 };
	}
	first_refused = n;
	for (size_t i = 0; i < nrefused; i++) {
		fds[n++] = (struct pollfd){ s->refused[i].fd, POLLIN, 0 };
		if (s->refused[i].until - now < timeout)
			timeout = s->refused[i].until > now ? (int)(s->refused[i].until - now) : 0;
	}
	rc = poll(fds, n, timeout);
	if (rc < 0 && errno == EINVAL && s->nconns > 0 && !s->stdio) {
		/* more descriptors than RLIMIT_NOFILE (lowered under us): shed the newest client */
		conn *c = s->conns[s->nconns - 1];

		fprintf(stderr, "docket: dropped client %u: more clients than RLIMIT_NOFILE allows\n", c->id);
		c->dead = 1;
		s->stats.dropped++;
		return 0;
	}
	if (rc < 0)
		return errno == EINTR ? 0 : docket_error_set(DOCKET_ESTORAGE, "poll: %s", strerror(errno));
	if (fds[1].revents & POLLIN) {
		char sink[64];

		while (read(s->done_pipe[0], sink, sizeof(sink)) > 0) {
			/* the writer's wakeups: writer_progress() says what happened */
		}
	}
	/* before accept_all, which may refuse more */
	refused_service(s, fds + first_refused, nrefused, now_ms());
	if (listening && (fds[2].revents & POLLIN))
		accept_all(s);
	for (size_t i = 0, base = s->listen_fd >= 0 ? 3 : 2; i < s->nconns && base + i < first_refused; i++) {
		conn *c = s->conns[i];
		short re = fds[base + i].revents;

		if ((re & (POLLIN | POLLHUP | POLLERR)) && !c->eof && !backlogged(s, c))
			conn_read(s, c);
		if ((re & POLLOUT) && conn_flush(c, 0) < 0)
			c->dead = 1;
	}
	return 0;
}

/* A client that took none of its pending replies for timeout_ms is dropped. */
static void drop_stalled(server *s, int64_t now)
{
	for (size_t i = 0; i < s->nconns; i++) {
		conn *c = s->conns[i];

		if (c->dead || !pending_out(c) || now - c->progress_ms < (int64_t)s->timeout_ms)
			continue;
		fprintf(stderr, "docket: dropped client %u: %zu bytes of replies unread for %u ms (serve --client-timeout)\n",
			c->id, pending_out(c), s->timeout_ms);
		c->dead = 1;
		s->stats.dropped++;
	}
}

/*
 * Clear the reader slots of processes that died in a read transaction:
 * LMDB cannot reuse pages a reader may still see, so one such slot makes
 * every later commit grow the file.
 */
static void check_readers(server *s, int64_t now)
{
	int dead = 0;

	if (s->stats.batches - s->reader_checked_batches < READER_CHECK_BATCHES &&
	    now - s->reader_checked_ms < READER_CHECK_MS)
		return;
	s->reader_checked_batches = s->stats.batches;
	s->reader_checked_ms = now;
	if (ledger_reader_check(s->ledger, &dead) == 0 && dead > 0)
		fprintf(stderr, "docket: cleared %d stale reader slot%s (a reader process died)\n", dead,
			dead == 1 ? "" : "s");
}

static void reap(server *s)
{
	for (size_t i = 0; i < s->nconns;) {
		conn *c = s->conns[i];
		int done = c->dead || (c->eof && c->in_off >= c->in.len && c->out_off >= c->out.len);

		if (done && !s->stdio && !c->calls) /* calls in a batch still name it */
			conn_free(s, i);
		else
			i++;
	}
}

static int stdio_finished(const server *s)
{
	const conn *c = s->conns[0];

	return (c->dead || (c->eof && c->in_off >= c->in.len)) && !c->calls;
}

/*
 * Stopping: the replies already owed (their commits are durable) get one
 * timeout_ms in total to reach their clients; nothing new is executed.
 */
static void flush_all(server *s)
{
	int64_t deadline = now_ms() + s->timeout_ms;

	for (;;) {
		struct pollfd fds[MAX_CONNS];
		conn *which[MAX_CONNS];
		nfds_t n = 0;
		int64_t left = deadline - now_ms();

		for (size_t i = 0; i < s->nconns; i++) {
			conn *c = s->conns[i];

			if (!c->dead && pending_out(c) && conn_flush(c, 0) < 0)
				c->dead = 1;
			if (!c->dead && pending_out(c)) {
				which[n] = c;
				fds[n++] = (struct pollfd){ c->out_fd, POLLOUT, 0 };
			}
		}
		if (n == 0 || left <= 0)
			break;
		if (poll(fds, n, (int)left) < 0 && errno != EINTR)
			break;
		for (nfds_t k = 0; k < n; k++)
			if (fds[k].revents & (POLLERR | POLLHUP | POLLNVAL))
				which[k]->dead = 1;
	}
	for (size_t i = 0; i < s->nconns; i++)
		if (!s->conns[i]->dead && pending_out(s->conns[i]))
			fprintf(stderr, "docket: stopping: client %u left %zu bytes of replies unread\n",
				s->conns[i]->id, pending_out(s->conns[i]));
}

static int server_loop(server *s)
{
	int error = 0;

	while (!stop_requested && error == 0) {
		int64_t now;

		if ((error = poll_once(s)) < 0)
			break;
		drain(s);
		if (s->stdio && stdio_finished(s))
			break;
		now = now_ms();
		drop_stalled(s, now);
		check_readers(s, now);
		reap(s);
	}
	if (stop_requested && s->ready->n == 0) {
		/* the lines already read make the last batch, as a serial loop
		 * would have run them on its way out (nothing is read after) */
		size_t n = gather(s);

		if (n)
			prepare_batch(s, s->ready, n);
	}
	writer_stop(s); /* the batches in flight and prepared commit; their replies are queued */
	flush_all(s);
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

/*
 * Limits from the options (0: defaults); connections are also capped by
 * RLIMIT_NOFILE, keeping SPARE_FDS for LMDB, the log and the reserve.
 */
static void resolve_limits(server *s, const server_options *o)
{
	struct rlimit rl;
	unsigned cap = MAX_CONNS;

	s->max_request = o->max_request ? o->max_request : SERVER_MAX_REQUEST_DEFAULT;
	s->max_queued = o->max_queued ? o->max_queued : SERVER_MAX_QUEUED_DEFAULT;
	s->timeout_ms = o->client_timeout_ms ? o->client_timeout_ms : SERVER_CLIENT_TIMEOUT_DEFAULT_MS;
	s->max_clients = o->max_clients ? o->max_clients : SERVER_MAX_CLIENTS_DEFAULT;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		rlim_t room = rl.rlim_cur > SPARE_FDS ? rl.rlim_cur - SPARE_FDS : 1;

		if (room < cap)
			cap = (unsigned)room;
	}
	s->fd_room = cap;
	if (s->max_clients > cap) {
		fprintf(stderr, "docket: at most %u clients (RLIMIT_NOFILE is %llu)\n", cap,
			(unsigned long long)rl.rlim_cur);
		s->max_clients = cap;
	}
}

int server_run(docket_ledger *l, const server_options *opts, server_stats *stats)
{
	struct sigaction old_term, old_int;
	server s;
	int error = 0;

	memset(&s, 0, sizeof(s));
	s.ledger = l;
	s.opts = opts;
	s.listen_fd = -1;
	s.stdio = opts->socket_path == NULL;
	s.reserve_fd = -1;
	resolve_limits(&s, opts);
	stop_requested = 0;
	s.done_pipe[0] = s.done_pipe[1] = -1;
	s.ready = &s.batches[0];
	s.opened = docket_calloc(MAX_BATCH, sizeof(*s.opened));
	for (size_t i = 0; i < NBATCH && error == 0; i++)
		error = batch_init(&s.batches[i]);
	if (error < 0 || !s.opened) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if (pipe(wake_pipe) < 0 || set_nonblock(wake_pipe[0]) < 0 || set_nonblock(wake_pipe[1]) < 0 ||
	    pipe(s.done_pipe) < 0 || set_nonblock(s.done_pipe[0]) < 0 || set_nonblock(s.done_pipe[1]) < 0) {
		error = docket_error_set(DOCKET_ESTORAGE, "pipe: %s", strerror(errno));
		goto cleanup;
	}
	if ((error = proto_ctx_new(&s.ctx, l, &opts->proto)) < 0)
		goto cleanup;
	s.tape = docket_json_tape_new(); /* without it, every line takes the tree path */
	if (s.stdio) {
		set_nonblock(STDIN_FILENO);
		conn *c = conn_new(&s, STDIN_FILENO, STDOUT_FILENO);

		if (!c) {
			error = docket_error_set_oom();
			goto cleanup;
		}
		/* the client on stdio runs as this process's uid (its lineage's),
		 * with that uid's role: the operator unless configured otherwise */
		c->proto.peer_uid = (long long)geteuid();
		c->proto.role = role_of_uid(&s, c->proto.peer_uid);
	} else if ((error = listen_on(&s, opts->socket_path)) < 0) {
		goto cleanup;
	} else {
		s.reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	if ((error = writer_start(&s, opts->writer)) < 0)
		goto cleanup;
	install_signals(&old_term, &old_int);
	if (opts->ready)
		opts->ready(opts->ready_ctx);
	error = server_loop(&s);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
cleanup:
	writer_stop(&s);
	while (s.nconns)
		conn_free(&s, s.nconns - 1);
	if (s.listen_fd >= 0) {
		close(s.listen_fd);
		unlink(opts->socket_path);
	}
	if (s.reserve_fd >= 0)
		close(s.reserve_fd);
	while (s.nrefused)
		close(s.refused[--s.nrefused].fd);
	for (int i = 0; i < 2; i++) {
		if (wake_pipe[i] >= 0)
			close(wake_pipe[i]);
		if (s.done_pipe[i] >= 0)
			close(s.done_pipe[i]);
		wake_pipe[i] = -1;
	}
	proto_ctx_free(s.ctx);
	docket_json_tape_free(s.tape);
	if (s.held_json)
		proto_call_dispose(&s.held_call);
	for (size_t i = 0; i < NBATCH; i++)
		batch_free(&s.batches[i]);
	docket_free(s.opened);
	json_decref(s.held_json);
	if (stats)
		*stats = s.stats;
	return error;
}
