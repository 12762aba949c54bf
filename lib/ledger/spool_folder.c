/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spool_folder.c: the spool-first hook's detached folder
 * (docs/write-path.md §3).
 *
 * A spool-first hook answers once its records are durable in the journal,
 * then forks a process that folds them into the chain. Forking one per
 * event cost every event a fork and the child a ledger open, and the child
 * of one event ran on the second core while the next event's hook ran on
 * the first (bench_hook). So a folder stays a while (linger_ms): it watches
 * the spool directory (inotify) and folds each new record as it lands,
 * with the ledger it opened once. While it lives it holds an exclusive
 * flock on spool/.folder, and a hook that finds that lock held starts no
 * folder of its own.
 *
 * No record is left behind by a folder that goes. The invariants:
 *   1. A folder watches the directory before its first fold: a record
 *      written before the watch is in that fold, one written after it
 *      wakes the folder.
 *   2. A hook writes its record (durably) before it tests the lock; a
 *      folder lets go of the lock before its last look at the journal.
 *      So either the hook finds the lock free and starts a folder, or the
 *      folder's last look sees the record, takes the lock back and folds
 *      it (when another process took the lock in between, that one folds).
 *   3. A fold that fails (the writer lock is held past the wait, the ledger
 *      was moved by compact or migrate, storage) ends the folder: the
 *      records stay in the journal for the next writer or reader, as when
 *      no folder ran.
 * Elsewhere than Linux a folder folds once and goes (no inotify).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/inotify.h>
#endif

#include "docket/ledger.h"
#include "spool.h"
#include "spool_internal.h"
#include "util/buf.h"
#include "util/crash.h"
#include "util/error.h"

#define FOLDER_LOCK "spool/.folder"
/* A burst's records fold together: after QUIET_MS without a new one, or
 * SETTLE_MAX_MS after the first (settle). */
#define QUIET_MS 2
#define SETTLE_MAX_MS 250
/* A fold that found the writer lock busy is tried again this much later. */
#define RETRY_MS 50

/* The detached folder's own process: no descriptor of its parent's (a
 * client waits for EOF on the pipes it gave the hook), its own session. */
static void detach_from_parent(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	(void)setsid();
	if (null >= 0) {
		(void)dup2(null, 0);
		(void)dup2(null, 1);
		(void)dup2(null, 2);
	}
	/* the parent's ledger too: this process opens its own (LMDB: never use
	 * an environment across fork) */
	(void)close_range(3, ~0u, 0);
}

/* spool/.folder opened (made when missing), or -1. */
static int folder_lock_open(const char *ledger_path)
{
	docket_buf path = DOCKET_BUF_INIT;
	int fd = -1;

	if (docket_buf_printf(&path, "%s/" FOLDER_LOCK, ledger_path) == 0)
		fd = open(path.ptr, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	docket_error_clear();
	docket_buf_dispose(&path);
	return fd;
}

int docket_spool_folder_alive(const char *ledger_path)
{
	int fd = folder_lock_open(ledger_path), alive;

	if (fd < 0)
		return 0;
	alive = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	close(fd);
	return alive;
}

/* stat of `rel` in the ledger's directory: 0, or -1. */
static int stat_in(const char *ledger_path, const char *rel, struct stat *st)
{
	docket_buf path = DOCKET_BUF_INIT;
	int ok = docket_buf_printf(&path, "%s/%s", ledger_path, rel) == 0 && stat(path.ptr, st) == 0;

	docket_error_clear();
	docket_buf_dispose(&path);
	return ok ? 0 : -1;
}

/* The journal as a fold began: a change since is a new record. */
typedef struct {
	ino_t ino;
	off_t size;
	struct timespec mtime;
} journal_mark;

static void journal_look(const char *ledger_path, journal_mark *out)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (stat_in(ledger_path, "spool/" SPOOL_JOURNAL, &st) == 0) {
		out->ino = st.st_ino;
		out->size = st.st_size;
		out->mtime = st.st_mtim;
	}
}

/* 1 when the journal holds bytes that were not there as the last fold began. */
static int journal_news(const char *ledger_path, const journal_mark *last)
{
	journal_mark now;

	journal_look(ledger_path, &now);
	return now.size > 0 && (now.ino != last->ino || now.size != last->size ||
				now.mtime.tv_sec != last->mtime.tv_sec || now.mtime.tv_nsec != last->mtime.tv_nsec);
}

/* A watch of the spool directory (invariant 1), or -1 (no lingering). */
static int watch_spool(const char *ledger_path)
{
#ifdef __linux__
	docket_buf path = DOCKET_BUF_INIT;
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd >= 0 && (docket_buf_printf(&path, "%s/spool", ledger_path) < 0 ||
			inotify_add_watch(fd, path.ptr, IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF) < 0)) {
		close(fd);
		fd = -1;
	}
	docket_error_clear();
	docket_buf_dispose(&path);
	return fd;
#else
	(void)ledger_path;
	return -1;
#endif
}

/* The watch's events drained: 1 when the directory changed, -1 when it
 * went (deleted or moved: the folder goes too). */
static int drain_watch(int watch)
{
#ifdef __linux__
	char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int changed = 0;
	ssize_t n;

	while ((n = read(watch, events, sizeof(events))) > 0) {
		for (char *at = events; at < events + n;) {
			const struct inotify_event *e = (const struct inotify_event *)at;

			if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
				return -1;
			changed = 1;
			at += sizeof(*e) + e->len;
		}
	}
	return changed;
#else
	(void)watch;
	return -1;
#endif
}

/* One lingering folder. */
typedef struct folder {
	const char *path;
	docket_ledger *l;
	unsigned wait_ms, linger_ms;
	int lock, watch, listen;
	const docket_spool_server *server;
	journal_mark mark;     /* the journal as the last fold began */
	uint64_t last;         /* the last record or request */
	uint64_t waiting;      /* since when records wait to be folded, or 0 */
	uint64_t retry;        /* the lock was busy: try again then, or 0 */
	dev_t dev;             /* the data file opened (compact and migrate */
	ino_t ino;             /* put another in its place) */
} folder;

static int data_file(const char *ledger_path, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (stat_in(ledger_path, "data.mdb", &st) != 0)
		return -1;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* 1 while the ledger's data file is the one this folder opened: a request
 * is never answered from a ledger that compact or migrate replaced (its
 * writes fail on "moved", but its reads would be stale). */
static int ledger_same(const folder *f)
{
	dev_t dev;
	ino_t ino;

	return data_file(f->path, &dev, &ino) == 0 && dev == f->dev && ino == f->ino;
}

/* Fold every waiting record within wait_ms: 0, 1 when the writer lock is
 * busy (retried later), -1: stop (an error, or a wait still running). */
static int fold_round(folder *f)
{
	int busy = 0, error;

	if (docket_spool_writer_busy(f->path))
		return 1;
	/* looked at before the fold reads it: a record that lands during the
	 * fold is news afterwards */
	journal_look(f->path, &f->mark);
	error = docket_spool_fold_all_by(f->l, docket_spool_now_ms() + f->wait_ms, &busy);
	if (error < 0 && busy)
		docket_spool_mark_held(f->path);
	docket_error_clear();
	if (error < 0)
		return busy && !docket_spool_waiting() ? 1 : -1;
	f->waiting = 0;
	return 0;
}

static void server_stop(folder *f)
{
	if (f->listen >= 0)
		f->server->unlisten(f->server->ctx, f->listen);
	f->listen = -1;
}

static void server_start(folder *f)
{
	if (f->server && f->listen < 0)
		f->listen = f->server->listen(f->server->ctx);
}

/* A connection waits: serve it. The server's verdict (spool.h):
 * DOCKET_SPOOL_SERVE_ON, _STOP or _STEP_DOWN; _STOP too when the ledger
 * is no longer the one opened. */
static int serve_one(folder *f)
{
	int conn = accept4(f->listen, NULL, NULL, SOCK_CLOEXEC), verdict;

	if (conn < 0)
		return errno == EAGAIN || errno == EINTR || errno == ECONNABORTED ? DOCKET_SPOOL_SERVE_ON
										  : DOCKET_SPOOL_SERVE_STOP;
	if (!ledger_same(f)) {
		close(conn);  /* no answer: the client runs docket-hook */
		return DOCKET_SPOOL_SERVE_STOP;
	}
	verdict = f->server->serve(f->server->ctx, f->l, conn);
	close(conn);
	if (verdict != DOCKET_SPOOL_SERVE_ON)
		return verdict;
	f->last = docket_spool_now_ms();
	if (!f->waiting && journal_news(f->path, &f->mark))
		f->waiting = f->last;
	return verdict;
}

/* When the next fold is due (0: none waits): after QUIET_MS without a
 * record or request, at most SETTLE_MAX_MS after the first (a burst of
 * events folds in one transaction, and the fold's flushes do not queue
 * before the next event's); RETRY_MS after a busy lock. */
static uint64_t fold_due(const folder *f)
{
	uint64_t quiet, cap;

	if (!f->waiting)
		return 0;
	if (f->retry)
		return f->retry;
	quiet = f->last + QUIET_MS;
	cap = f->waiting + SETTLE_MAX_MS;
	return quiet < cap ? quiet : cap;
}

/* fold_round, and when the lock was busy the time to try again. */
static int fold_now(folder *f)
{
	int rc = fold_round(f);

	f->retry = rc == 1 ? docket_spool_now_ms() + RETRY_MS : 0;
	return rc;
}

/* Wait for a record, a connection or `until`: 2 a connection, 1 the
 * directory changed, 0 the time came, -1 the directory went. */
static int wait_any(folder *f, uint64_t until)
{
	struct pollfd p[2] = { { f->watch, POLLIN, 0 }, { f->listen, POLLIN, 0 } };
	uint64_t now = docket_spool_now_ms();
	int rc;

	rc = poll(p, f->listen >= 0 ? 2 : 1, until > now ? (int)(until - now) : 0);
	if (rc < 0)
		return errno == EINTR ? 0 : -1;
	if (rc > 0 && (p[1].revents & POLLIN))
		return 2;
	if (rc > 0 && (p[0].revents & (POLLIN | POLLERR | POLLHUP)))
		return drain_watch(f->watch);
	return 0;
}

/* Let go of the lock, then look at the journal once more (invariant 2):
 * 1 when there was news and the lock was free to take back (fold it). */
static int let_go(folder *f)
{
	server_stop(f);
	docket_crash_point("spool.folder_going");
	(void)flock(f->lock, LOCK_UN);
	if (!journal_news(f->path, &f->mark) || flock(f->lock, LOCK_EX | LOCK_NB) != 0)
		return 0;
	docket_crash_point("spool.folder_retake");
	return 1;
}

/* A request of another context came (and was sent to docket-hook, which
 * forks a folder of its context): serve no more, fold what waits, go. */
static void step_down(folder *f)
{
	server_stop(f);
	while (fold_now(f) == 0 && let_go(f))
		;
}

/*
 * After the first fold: serve, and fold what lands, until linger_ms pass
 * without a record or a request; then let go of the lock and look once
 * more (invariant 2).
 */
static void linger(folder *f)
{
	for (;;) {
		uint64_t due = fold_due(f), end = f->last + f->linger_ms, now;
		int ev = wait_any(f, due && due < end ? due : end), verdict = DOCKET_SPOOL_SERVE_ON;

		if (ev < 0)
			return;  /* the directory went */
		if (ev == 2 && (verdict = serve_one(f)) == DOCKET_SPOOL_SERVE_STEP_DOWN)
			step_down(f);
		if (verdict != DOCKET_SPOOL_SERVE_ON)
			return;
		if (ev == 1 && journal_news(f->path, &f->mark)) {
			f->last = docket_spool_now_ms();
			f->waiting = f->waiting ? f->waiting : f->last;
		}
		now = docket_spool_now_ms();
		if (f->waiting && now >= fold_due(f)) {
			if (fold_now(f) < 0)
				return;
			continue;
		}
		if (ev != 0 || now < end)
			continue;
		/* quiet for linger_ms: go (invariant 2) */
		if (!let_go(f) || fold_now(f) < 0)
			return;
		f->last = docket_spool_now_ms();
		server_start(f);
	}
}

static int fold_in_child(const char *ledger_path, unsigned wait_ms, unsigned linger_ms,
			 const docket_spool_server *server)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	folder f = { ledger_path, NULL, wait_ms, linger_ms, -1, -1, -1, server, { 0, 0, { 0, 0 } }, 0, 0, 0, 0, 0 };
	int error, first;

	detach_from_parent();
	docket_crash_point("spool.detached_fold");
	if (docket_spool_held_within(ledger_path, DOCKET_SPOOL_FRESH_MS))
		return 0;  /* the lock is held: its holder, or the next writer or reader, folds */
	if (linger_ms && (f.lock = folder_lock_open(ledger_path)) >= 0) {
		if (flock(f.lock, LOCK_EX | LOCK_NB) != 0)
			return 0;  /* a folder lives: it folds (invariant 2) */
		f.watch = watch_spool(ledger_path);
	}
	/* the data file before and after the open: the one opened */
	if ((error = data_file(ledger_path, &f.dev, &f.ino)) == 0 &&
	    (error = docket_ledger_open(&f.l, ledger_path, &oo)) == 0 && (error = !ledger_same(&f)) == 0) {
		first = fold_now(&f);
		error = first < 0;
		f.last = docket_spool_now_ms();
		if (first >= 0 && f.watch >= 0) {
			f.waiting = first ? f.last : 0;
			server_start(&f);
			linger(&f);
			server_stop(&f);
		}
	}
	if (!docket_spool_waiting())
		docket_ledger_free(f.l);
	return error != 0;
}

pid_t docket_spool_fold_detached(const char *ledger_path, unsigned wait_ms, unsigned linger_ms,
				 const docket_spool_server *server)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(fold_in_child(ledger_path, wait_ms, linger_ms, server));
	return pid;
}
