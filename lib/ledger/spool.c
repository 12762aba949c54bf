/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spool.c: the ledger's spool (docs/write-path.md §3, docs/file-format.md).
 *
 * A hook decides from the policy alone, then has a budget to record. The
 * LMDB writer lock has no timed wait, so docket_ledger_append_json_by()
 * waits for it in a thread: the thread passes a gate (spool_gate_pass, in
 * append.c right after the write transaction begins) and the caller stops
 * waiting at its deadline. A gate passed after the caller gave up aborts
 * the transaction, so an append either commits while the caller waits or
 * never: the caller can then spool the same events without duplicating.
 *
 * Entries: one event each (compact JSON, with the time it was spooled),
 * named <16 hex digits: CLOCK_REALTIME ns>-<pid>-<counter>.json. A hook
 * appends them as records of the journal, PATH/spool/journal: one write
 * and one fdatasync per call (spool_journal.c). Older dockets wrote one
 * file per entry under that name (".tmp-..." first, fsynced, renamed, the
 * directory fsynced); such files still fold. Names starting with "." are
 * never entries.
 *
 * Folding (append.c, fold_spool): every write transaction loads the entry
 * files in name order, then the journal's records in append order
 * (spool_load: one stat when the spool does not exist) and
 * appends each as its own group before its own events. A refused entry is
 * appended as a ledger.incident carrying its text, file name and error. In
 * the same transaction the entry's name is recorded in `meta`
 * ("spool:<name>"); the files are removed (the journal unlinked once all
 * its records are folded) only after the commit. A crash between commit
 * and removal leaves entries whose names are recorded: the next fold
 * removes them without appending them again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ledger_internal.h"
#include "ledger_sys.h"
#include "spool.h"
#include "spool_internal.h"
#include "util/alloc.h"
#include "util/crash.h"
#include "util/error.h"
#include "util/json.h"

#define SPOOL_DIR "spool"
/* A waiter always gives the writer thread this long from its start: on a
 * loaded machine the thread's start alone can take longer than a short
 * deadline, and a free lock must not be mistaken for a held one. */
#define MIN_WAIT_MS 20
#define ENTRY_MAX ((size_t)16 << 20)

uint64_t docket_spool_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- writing with a deadline ---- */

enum gate_state { GATE_STARTING, GATE_WAITING, GATE_ENTERED, GATE_DONE, GATE_ABANDONED };

typedef struct timed_write {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum gate_state state;
	int error;
	docket_error err;
	docket_ledger *l;
	docket_write_fn fn;
	void *ctx;
	void (*ctx_free)(void *ctx);
	uint64_t started_ms;
} timed_write;

static _Thread_local timed_write *gate;
/* Entries one transaction folds at most in a write with a deadline (0: all). */
static _Thread_local size_t fold_cap;
/* A write whose caller gave up while its thread still waits: reachable,
 * freed by that thread. */
static timed_write *_Atomic abandoned;

int spool_gate_pass(void)
{
	int error = 0;

	if (!gate)
		return 0;
	pthread_mutex_lock(&gate->mu);
	if (gate->state == GATE_ABANDONED)
		error = docket_error_set(DOCKET_ESTORAGE, "the writer lock came after the caller's deadline");
	else if (gate->state == GATE_WAITING || gate->state == GATE_STARTING) {
		gate->state = GATE_ENTERED;
		pthread_cond_signal(&gate->cv);
	}
	pthread_mutex_unlock(&gate->mu);
	return error;
}

static void timed_free(timed_write *t)
{
	if (t->ctx_free)
		t->ctx_free(t->ctx);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	docket_free(t);
}

static void *timed_worker(void *arg)
{
	timed_write *t = arg;
	int error;

	gate = t;
	fold_cap = DOCKET_SPOOL_FOLD_CAP;
	pthread_mutex_lock(&t->mu);
	if (t->state == GATE_STARTING)
		t->state = GATE_WAITING;
	t->started_ms = docket_spool_now_ms();
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	error = t->fn(t->l, t->ctx);
	gate = NULL;
	pthread_mutex_lock(&t->mu);
	t->error = error;
	if (error < 0)
		t->err = *docket_error_last();
	if (t->state == GATE_ABANDONED) {
		/* the caller is gone: this thread owns what is left */
		pthread_mutex_unlock(&t->mu);
		atomic_store(&abandoned, NULL);
		timed_free(t);
		return NULL;
	}
	t->state = GATE_DONE;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

static int busy_error(int *busy)
{
	*busy = 1;
	return docket_error_set(DOCKET_ESTORAGE, "the ledger's writer lock is held by another writer");
}

int docket_ledger_write_by(docket_ledger *l, docket_write_fn fn, void *ctx, void (*ctx_free)(void *ctx),
			   uint64_t deadline_ms, int *busy)
{
	struct timespec until;
	pthread_condattr_t ca;
	pthread_attr_t attr;
	timed_write *t;
	pthread_t th;
	int error;

	*busy = 0;
	if (atomic_load(&abandoned)) {
		/* a thread of this process already waits for the lock */
		if (ctx_free)
			ctx_free(ctx);
		return busy_error(busy);
	}
	if (!(t = docket_calloc(1, sizeof(*t)))) {
		if (ctx_free)
			ctx_free(ctx);
		return docket_error_set_oom();
	}
	pthread_mutex_init(&t->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	t->l = l;
	t->fn = fn;
	t->ctx = ctx;
	t->ctx_free = ctx_free;
	/* joinable: a worker that finishes in time is joined, so its
	 * thread-exit handlers (libcrypto's per-thread state among them) have
	 * run before the caller goes on, or exits; one left behind is detached */
	pthread_attr_init(&attr);
	error = pthread_create(&th, &attr, timed_worker, t);
	pthread_attr_destroy(&attr);
	if (error != 0) {
		timed_free(t);
		return docket_error_set(DOCKET_ESTORAGE, "cannot start the writer thread: %s", strerror(error));
	}
	pthread_mutex_lock(&t->mu);
	while (t->state == GATE_STARTING)
		pthread_cond_wait(&t->cv, &t->mu);
	if (deadline_ms < t->started_ms + MIN_WAIT_MS)
		deadline_ms = t->started_ms + MIN_WAIT_MS;
	until.tv_sec = (time_t)(deadline_ms / 1000);
	until.tv_nsec = (long)(deadline_ms % 1000) * 1000000L;
	while (t->state == GATE_WAITING && pthread_cond_timedwait(&t->cv, &t->mu, &until) != ETIMEDOUT)
		;
	if (t->state == GATE_WAITING) {
		t->state = GATE_ABANDONED;
		atomic_store(&abandoned, t);
		pthread_mutex_unlock(&t->mu);
		pthread_detach(th);
		return busy_error(busy);
	}
	/* it has the lock: what is left is bounded by the disk, not by others */
	while (t->state != GATE_DONE)
		pthread_cond_wait(&t->cv, &t->mu);
	pthread_mutex_unlock(&t->mu);
	pthread_join(th, NULL);
	error = t->error;
	if (error < 0)
		docket_error_restore(&t->err);
	timed_free(t);
	return error;
}

typedef struct events_ctx {
	docket_event **events;
	size_t n;
} events_ctx;

static void events_ctx_free(void *p)
{
	events_ctx *c = p;

	for (size_t i = 0; i < c->n; i++)
		docket_event_free(c->events[i]);
	docket_free(c->events);
	docket_free(c);
}

static int append_events_fn(docket_ledger *l, void *p)
{
	events_ctx *c = p;

	return ledger_append(l, c->events, c->n, NULL);
}

int docket_ledger_append_json_by(docket_ledger *l, json_t *const *json, size_t n, uint64_t deadline_ms,
				 int *busy)
{
	events_ctx *c;
	int error = 0;

	*busy = 0;
	if (n == 0)
		return 0;
	if (!(c = docket_calloc(1, sizeof(*c))) || !(c->events = docket_calloc(n, sizeof(*c->events)))) {
		docket_free(c);
		return docket_error_set_oom();
	}
	for (; c->n < n; c->n++)
		if ((error = docket_event_from_json(&c->events[c->n], json[c->n])) < 0)
			break;
	if (error < 0) {
		if (n > 1)
			docket_error_prefix("event %zu of %zu: ", c->n + 1, n);
		events_ctx_free(c);
		return error;
	}
	return docket_ledger_write_by(l, append_events_fn, c, events_ctx_free, deadline_ms, busy);
}

int docket_spool_waiting(void)
{
	return atomic_load(&abandoned) != NULL;
}

/* ---- writing entries ---- */

static int spool_dir(docket_buf *out, const char *ledger_path)
{
	return docket_buf_printf(out, "%s/" SPOOL_DIR, ledger_path);
}

/* The spool directory, created (0700) and made durable when missing. */
static int make_spool_dir(const char *ledger_path, const char *dir)
{
	if (mkdir(dir, 0700) == 0)
		return spool_sync_dir(ledger_path) == 0 ? 0
			: docket_error_set(DOCKET_ESTORAGE, "cannot sync %s: %s", ledger_path, strerror(errno));
	if (errno == EEXIST)
		return 0;
	return docket_error_set(DOCKET_ESTORAGE, "cannot create the spool %s: %s", dir, strerror(errno));
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int entry_name(char *out, size_t size)
{
	static atomic_uint counter;
	uint64_t ns = realtime_ns();

	return snprintf(out, size, "%016llx-%010ld-%08x.json", (unsigned long long)ns, (long)getpid(),
			atomic_fetch_add(&counter, 1u));
}

/* The event with the time it was spooled (the ledger keeps a given time):
 * folded later, it still says when the hook saw it. A new reference. */
static json_t *with_time(const json_t *ev)
{
	struct timespec ts;
	struct tm tm;
	char buf[40], stamp[64];
	json_t *copy;

	if (json_object_get(ev, "time"))
		return json_incref((json_t *)ev);
	clock_gettime(CLOCK_REALTIME, &ts);
	if (!gmtime_r(&ts.tv_sec, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm))
		return NULL;
	snprintf(stamp, sizeof(stamp), "%s.%06ldZ", buf, ts.tv_nsec / 1000);
	if (!(copy = json_copy((json_t *)ev)) || json_object_set_new(copy, "time", json_string(stamp)) < 0) {
		json_decref(copy);
		return NULL;
	}
	return copy;
}

/* Event i's record (its own entry name) appended to `out`. */
static int put_record(docket_buf *out, const json_t *given)
{
	char name[SPOOL_NAME_MAX];
	docket_buf text = DOCKET_BUF_INIT;
	json_t *ev = with_time(given);
	int error;

	entry_name(name, sizeof(name));
	if (!ev)
		error = docket_error_set_oom();
	else if ((error = docket_json_dump(&text, ev)) == 0)
		error = spool_journal_record(out, name, text.ptr, text.len);
	json_decref(ev);
	docket_buf_dispose(&text);
	return error;
}

int docket_spool_put(const char *ledger_path, json_t *const *events, size_t n)
{
	docket_buf dir = DOCKET_BUF_INIT, records = DOCKET_BUF_INIT;
	int error;

	for (size_t i = 0; i < n; i++)
		if (!events[i])
			return docket_error_set_oom();
	if ((error = spool_dir(&dir, ledger_path)) < 0 || (error = make_spool_dir(ledger_path, dir.ptr)) < 0)
		goto done;
	for (size_t i = 0; i < n && error == 0; i++)
		error = put_record(&records, events[i]);
	if (error < 0 || n == 0)
		goto done;
	docket_crash_point("spool.before_write");
	/* every record of the call in one append and one fdatasync (spool_journal.c) */
	if ((error = spool_journal_append(dir.ptr, records.ptr, records.len)) == 0)
		docket_crash_point("spool.after_put");
done:
	docket_buf_dispose(&records);
	docket_buf_dispose(&dir);
	return error;
}

/* ---- reading entries ---- */

static int is_entry(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len > 5 && len < SPOOL_NAME_MAX && strcmp(name + len - 5, ".json") == 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entry names of the spool at `dir`, sorted; *n 0 when it has none or
 * does not exist. */
static int list_entries(char ***out, size_t *n, const char *dir)
{
	struct stat st;
	struct dirent *de;
	char **names = NULL;
	size_t cap = 0;
	DIR *d;
	int error = 0;

	*out = NULL;
	*n = 0;
	if (stat(dir, &st) != 0)
		return errno == ENOENT ? 0
			: docket_error_set(DOCKET_ESTORAGE, "cannot read the spool %s: %s", dir, strerror(errno));
	if (!(d = opendir(dir)))
		return docket_error_set(DOCKET_ESTORAGE, "cannot read the spool %s: %s", dir, strerror(errno));
	while (error == 0 && (de = readdir(d))) {
		if (!is_entry(de->d_name))
			continue;
		if (*n == cap) {
			char **grown = docket_array_grow(names, &cap, sizeof(*names), 16);

			if (!grown) {
				error = DOCKET_ENOMEM;
				break;
			}
			names = grown;
		}
		if (!(names[*n] = docket_strdup(de->d_name)))
			error = docket_error_set_oom();
		else
			(*n)++;
	}
	closedir(d);
	if (*n > 1)
		qsort(names, *n, sizeof(*names), cmp_names);
	*out = names;
	return error;
}

static void names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		docket_free(names[i]);
	docket_free(names);
}

/* Every hook counts the spool: a count copies and sorts no names. Records
 * of the journal count until it is reclaimed (spool_journal.c). */
int docket_spool_count(const char *ledger_path, size_t *out)
{
	docket_buf dir = DOCKET_BUF_INIT;
	struct dirent *de;
	DIR *d = NULL;
	size_t records = 0;
	int error;

	*out = 0;
	if ((error = spool_dir(&dir, ledger_path)) < 0)
		return error;
	if (!(d = opendir(dir.ptr)))
		error = errno == ENOENT ? 0
			: docket_error_set(DOCKET_ESTORAGE, "cannot read the spool %s: %s", dir.ptr, strerror(errno));
	while (d && (de = readdir(d)))
		*out += is_entry(de->d_name);
	if (d) {
		closedir(d);
		if ((error = spool_journal_count(dir.ptr, &records)) == 0)
			*out += records;
	}
	docket_buf_dispose(&dir);
	return error;
}

int docket_spool_nonempty(const char *ledger_path)
{
	docket_buf path = DOCKET_BUF_INIT;
	struct stat st;
	int some;

	some = docket_buf_printf(&path, "%s/" SPOOL_DIR "/" SPOOL_JOURNAL, ledger_path) == 0 &&
	       stat(path.ptr, &st) == 0 && st.st_size > 0;
	docket_error_clear();
	docket_buf_dispose(&path);
	return some;
}

/* spool/.held: its mtime is the last time a writer waited for the lock in
 * vain. Not an entry (its name starts with "."); losing it costs a wait. */
static int held_path(docket_buf *out, const char *ledger_path)
{
	return docket_buf_printf(out, "%s/" SPOOL_DIR "/.held", ledger_path);
}

void docket_spool_mark_held(const char *ledger_path)
{
	docket_buf path = DOCKET_BUF_INIT;
	int fd;

	if (held_path(&path, ledger_path) == 0 &&
	    (fd = open(path.ptr, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0) {
		(void)futimens(fd, NULL);
		close(fd);
	}
	docket_error_clear();
	docket_buf_dispose(&path);
}

int docket_spool_held_within(const char *ledger_path, unsigned ms)
{
	docket_buf path = DOCKET_BUF_INIT;
	struct timespec now;
	struct stat st;
	int64_t age_ms;
	int recent = 0;

	if (held_path(&path, ledger_path) == 0 && stat(path.ptr, &st) == 0) {
		clock_gettime(CLOCK_REALTIME, &now);
		age_ms = ((int64_t)now.tv_sec - (int64_t)st.st_mtim.tv_sec) * 1000 +
			 ((int64_t)now.tv_nsec - (int64_t)st.st_mtim.tv_nsec) / 1000000;
		recent = age_ms >= 0 && age_ms < (int64_t)ms;
	}
	docket_error_clear();
	docket_buf_dispose(&path);
	return recent;
}

int docket_spool_writer_busy(const char *ledger_path)
{
	return ledger_writer_busy(ledger_path);
}

static int read_entry(docket_buf *out, const char *dir, const char *name)
{
	docket_buf path = DOCKET_BUF_INIT;
	int error;

	if ((error = docket_buf_printf(&path, "%s/%s", dir, name)) == 0)
		error = docket_buf_read_path(out, path.ptr);
	docket_buf_dispose(&path);
	return error;
}

static int same_str(const json_t *o, const char *k, const char *want)
{
	const json_t *v = json_object_get(o, k);

	return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

typedef struct has_ctx {
	const char *type, *session, *invocation;
	json_t **out;   /* the event found (a new reference), or NULL */
	size_t type_len, session_len;
} has_ctx;

/*
 * The string value of `key` when it is the next member of the record at
 * *p ("KEY":"VALUE" after `{` or `,`), written plain (no backslash in it):
 * its bytes in *v, *vn, and *p moved past it; else 0 (the record must be
 * parsed to know). docket writes a record's members in the order type,
 * session (docket_json_dump of the event it built), so this reads a
 * docket-written record's type and session without parsing it.
 */
static int leading_member(const char **p, const char *end, const char *key, const char **v, size_t *vn)
{
	size_t kn = strlen(key);
	const char *q = *p, *close;

	if ((size_t)(end - q) < kn + 5 || q[0] != '"' || memcmp(q + 1, key, kn) != 0 ||
	    memcmp(q + 1 + kn, "\":\"", 3) != 0)
		return 0;
	q += kn + 4;
	if (!(close = memchr(q, '"', (size_t)(end - q))) || memchr(q, '\\', (size_t)(close - q)))
		return 0;
	*v = q;
	*vn = (size_t)(close - q);
	*p = close + 1;
	return 1;
}

/* A record's leading type and session as written plain (leading_member):
 * `known` says how many of the two were read (0: parse to know). */
typedef struct record_head {
	const char *type, *session;
	size_t type_len, session_len;
	int known;
} record_head;

static void read_head(record_head *h, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	memset(h, 0, sizeof(*h));
	if (len < 1 || *p++ != '{' || !leading_member(&p, end, "type", &h->type, &h->type_len))
		return;
	h->known = 1;
	if (p != end && *p++ == ',' && leading_member(&p, end, "session", &h->session, &h->session_len))
		h->known = 2;
}

/*
 * 0 when the record (its head) is certainly not an event of `c`'s type and
 * session: its leading type (and session) members, written plain, are
 * other ones. Exact, not a guess: duplicate members are refused when a
 * record is parsed (docket_json_parse), so the first "type" is the only
 * one. 1: it may be (parse to know). Saves parsing every record of a long
 * journal for an event it does not hold (the session.closed of an open
 * session, looked up on every hook event while the lock is held).
 */
static int may_be(const has_ctx *c, const record_head *h)
{
	if (h->known >= 1 && (h->type_len != c->type_len || memcmp(h->type, c->type, h->type_len) != 0))
		return 0;
	return h->known < 2 || (h->session_len == c->session_len && memcmp(h->session, c->session, h->session_len) == 0);
}

/* 1 when the entry text (its head) is an event of the type, session (and invocation) wanted. */
static int entry_is(const has_ctx *c, const char *text, size_t len, const record_head *head)
{
	json_t *ev = NULL;
	int found = 0;

	if (!may_be(c, head))
		return 0;
	if (docket_json_parse(&ev, text, len) == 0)
		found = same_str(ev, "type", c->type) && same_str(ev, "session", c->session) &&
			(!c->invocation || same_str(ev, "invocation", c->invocation));
	if (found && c->out)
		*c->out = json_incref(ev);
	json_decref(ev);
	return found;
}

typedef struct record_slice {
	const char *json;
	size_t len;
	record_head head;
} record_slice;

typedef struct record_list {
	record_slice *at;
	size_t n, cap;
} record_list;

/* Collects where each record's JSON is (spool_journal_parse). */
static int list_record(void *ctx, const char *name, size_t name_len, const char *json, size_t len)
{
	record_list *r = ctx;

	(void)name;
	(void)name_len;
	if (r->n == r->cap) {
		record_slice *grown = docket_array_grow(r->at, &r->cap, sizeof(*r->at), 16);

		if (!grown)
			return 1;  /* out of memory: the records so far */
		r->at = grown;
	}
	r->at[r->n].json = json;
	r->at[r->n].len = len;
	read_head(&r->at[r->n++].head, json, len);
	return 0;
}

/* A snapshot of the spool for the lookups of one event (spool.h): the
 * journal read and split into records once, the entry names listed once. */
struct docket_spool_view {
	docket_buf dir, journal;
	record_list records;
	char **names;
	size_t n_names;
	int loaded;
};

docket_spool_view *docket_spool_view_new(void)
{
	return docket_calloc(1, sizeof(docket_spool_view));
}

void docket_spool_view_reset(docket_spool_view *v)
{
	if (!v)
		return;
	docket_buf_dispose(&v->dir);
	docket_buf_dispose(&v->journal);
	docket_free(v->records.at);
	names_free(v->names, v->n_names);
	memset(v, 0, sizeof(*v));
}

void docket_spool_view_free(docket_spool_view *v)
{
	docket_spool_view_reset(v);
	docket_free(v);
}

/* Reads the spool into `v` unless it holds a snapshot; an unreadable part
 * reads as empty (the fold judges it). */
static void view_load(docket_spool_view *v, const char *ledger_path)
{
	spool_journal_seen seen;
	int stop;

	if (v->loaded)
		return;
	v->loaded = 1;
	if (spool_dir(&v->dir, ledger_path) == 0 && spool_journal_read(&v->journal, &seen, v->dir.ptr) == 0 &&
	    v->journal.len)
		(void)spool_journal_parse(v->journal.ptr, v->journal.len, list_record, &v->records, &stop);
	if (v->dir.ptr)
		(void)list_entries(&v->names, &v->n_names, v->dir.ptr);
	docket_error_clear();
}

int docket_spool_view_find(docket_spool_view *v, const char *ledger_path, const char *type, const char *session,
			   const char *invocation, json_t **out)
{
	has_ctx c = { type, session, invocation, out, strlen(type), strlen(session) };
	int found = 0;

	if (out)
		*out = NULL;
	view_load(v, ledger_path);
	/* newest first: what a hook looks for was usually spooled a moment ago */
	for (size_t i = v->records.n; i-- > 0 && !found;)
		found = entry_is(&c, v->records.at[i].json, v->records.at[i].len, &v->records.at[i].head);
	for (size_t i = v->n_names; i-- > 0 && !found;) {
		docket_buf text = DOCKET_BUF_INIT;
		record_head head;

		if (read_entry(&text, v->dir.ptr, v->names[i]) == 0) {
			read_head(&head, text.ptr, text.len);
			found = entry_is(&c, text.ptr, text.len, &head);
		}
		docket_buf_dispose(&text);
	}
	docket_error_clear();
	return found;
}

size_t docket_spool_view_count(docket_spool_view *v, const char *ledger_path)
{
	view_load(v, ledger_path);
	return v->records.n + v->n_names;
}

int docket_spool_find(const char *ledger_path, const char *type, const char *session, const char *invocation,
		      json_t **out)
{
	docket_spool_view v;
	int found;

	memset(&v, 0, sizeof(v));
	found = docket_spool_view_find(&v, ledger_path, type, session, invocation, out);
	docket_spool_view_reset(&v);
	return found;
}

int docket_spool_has(const char *ledger_path, const char *type, const char *session, const char *invocation)
{
	return docket_spool_find(ledger_path, type, session, invocation, NULL);
}

int docket_spool_fold(docket_ledger *l)
{
	size_t n = 0;
	int error;

	if ((error = docket_spool_count(l->path, &n)) < 0 || n == 0)
		return error;
	return ledger_fold_only(l);
}

static int fold_fn(docket_ledger *l, void *ctx)
{
	(void)ctx;
	return docket_spool_fold(l);
}

int docket_spool_fold_by(docket_ledger *l, uint64_t deadline_ms, int *busy)
{
	size_t n = 0;
	int error;

	*busy = 0;
	if ((error = docket_spool_count(l->path, &n)) < 0 || n == 0)
		return error;
	return docket_ledger_write_by(l, fold_fn, NULL, NULL, deadline_ms, busy);
}

int docket_spool_fold_all_by(docket_ledger *l, uint64_t deadline_ms, int *busy)
{
	docket_ledger_info info;
	uint64_t head = UINT64_MAX;
	size_t n = 0;
	int error = 0;

	*busy = 0;
	/*
	 * A timed fold takes DOCKET_SPOOL_FOLD_CAP entries, and the journal
	 * keeps every record (the folded ones marked in meta) until all of
	 * them are folded: its count does not shrink in between. Rounds while
	 * records wait and the round before appended something (a reader that
	 * stopped when the count stood still showed a ledger short of the
	 * records past the first DOCKET_SPOOL_FOLD_CAP, and said nothing).
	 */
	while (error == 0 && (error = docket_spool_count(l->path, &n)) == 0 && n > 0 &&
	       (error = docket_ledger_info_get(l, &info)) == 0 && info.events != head) {
		head = info.events;
		error = docket_ledger_write_by(l, fold_fn, NULL, NULL, deadline_ms, busy);
	}
	return error;
}

/* ---- folding (append.c) ---- */

typedef struct spool_entry {
	char *name;
	docket_buf text;
	docket_event *event;      /* NULL: the text is not an event (why: parse_err) */
	docket_error parse_err;
	docket_event *incident;
	docket_append_result result;
	ledger_group group;
	int folded;               /* recorded in meta: remove the file after the commit */
	int in_journal;           /* a record of the journal, not a file of its own */
} spool_entry;

struct spool_batch {
	docket_buf dir;
	spool_entry *entries;
	size_t n, cap;
	size_t limit;             /* entries this transaction folds at most (0: all) */
	spool_journal_seen seen;  /* the journal this fold read */
	int journal_whole;        /* every record of it is an entry of this batch */
	docket_ledger *l;
	MDB_txn *txn;
};

size_t spool_size(const spool_batch *b)
{
	return b ? b->n : 0;
}

static int marker_key(docket_buf *out, const char *name)
{
	return docket_buf_printf(out, SPOOL_MARKER_PREFIX "%s", name);
}

static int already_folded(docket_ledger *l, MDB_txn *txn, const char *name, int *out)
{
	docket_buf key = DOCKET_BUF_INIT;
	MDB_val v;
	int error;

	*out = 0;
	if ((error = marker_key(&key, name)) == 0) {
		error = store_meta_get(txn, l, key.ptr, &v);
		*out = error == 0;
		if (error == DOCKET_ENOTFOUND)
			error = 0;
	}
	docket_buf_dispose(&key);
	return error;
}

/* The entry's text parsed: its event, or why it is none (an incident). */
static void parse_entry(spool_entry *e)
{
	json_t *json = NULL;
	int error;

	if (e->text.len > ENTRY_MAX) {
		/* no hook writes this much: kept as an incident without its text */
		docket_error_set(DOCKET_EINVALID, "spool entry of %zu bytes (more than %zu)", e->text.len, ENTRY_MAX);
		e->parse_err = *docket_error_last();
		docket_error_clear();
		docket_buf_clear(&e->text);
		return;
	}
	if ((error = docket_json_parse(&json, e->text.ptr, e->text.len)) == 0)
		error = docket_event_from_json(&e->event, json);
	json_decref(json);
	if (error < 0) {
		e->event = NULL;
		e->parse_err = *docket_error_last();
		docket_error_clear();
	}
}

static int load_entry(spool_entry *e, const char *dir)
{
	int error;

	if ((error = read_entry(&e->text, dir, e->name)) < 0)
		return error;  /* unreadable: left in place, for verify to report */
	parse_entry(e);
	return 0;
}

/* A new zeroed entry at the end of the batch, or NULL (out of memory). */
static spool_entry *batch_add(spool_batch *b)
{
	if (b->n == b->cap) {
		spool_entry *grown = docket_array_grow(b->entries, &b->cap, sizeof(*b->entries), 16);

		if (!grown)
			return NULL;
		b->entries = grown;
	}
	memset(&b->entries[b->n], 0, sizeof(b->entries[0]));
	return &b->entries[b->n++];
}

static int batch_full(const spool_batch *b)
{
	return b->limit && b->n >= b->limit;
}

/* One record of the journal as an entry of the batch (spool_journal_parse);
 * a record folded before is no entry (the journal goes when all are). */
static int add_record(void *ctx, const char *name, size_t name_len, const char *json, size_t len)
{
	spool_batch *b = ctx;
	spool_entry *e;
	char *copy;
	int error, done = 0;

	if (!(copy = docket_strndup(name, name_len)))
		return DOCKET_ENOMEM;
	if ((error = already_folded(b->l, b->txn, copy, &done)) < 0 || done) {
		docket_free(copy);
		return error;
	}
	if (batch_full(b)) {
		docket_free(copy);
		b->journal_whole = 0;
		return 1;
	}
	if (!(e = batch_add(b))) {
		docket_free(copy);
		return DOCKET_ENOMEM;
	}
	e->name = copy;
	e->in_journal = 1;
	if (docket_buf_put(&e->text, json, len) < 0)
		return DOCKET_ENOMEM;
	parse_entry(e);
	return 0;
}

/* The journal's records after the entry files, in the order they were
 * appended; an unreadable journal is left for the next fold. */
static int load_journal(spool_batch *b)
{
	docket_buf text = DOCKET_BUF_INIT;
	int stop = 0;

	if (spool_journal_read(&text, &b->seen, b->dir.ptr) < 0) {
		docket_error_clear();
		b->seen.present = 0;
	}
	b->journal_whole = b->seen.present;
	if (text.len)
		(void)spool_journal_parse(text.ptr, text.len, add_record, b, &stop);
	docket_buf_dispose(&text);
	if (stop < 0)
		return stop == DOCKET_ENOMEM ? docket_error_set_oom() : stop;
	return 0;
}

void spool_batch_free(spool_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		docket_free(b->entries[i].name);
		docket_buf_dispose(&b->entries[i].text);
		docket_event_free(b->entries[i].event);
		docket_event_free(b->entries[i].incident);
	}
	docket_free(b->entries);
	docket_buf_dispose(&b->dir);
	docket_free(b);
}

int spool_load(spool_batch **out, docket_ledger *l, MDB_txn *txn)
{
	spool_batch *b;
	char **names = NULL;
	size_t n = 0;
	int error, done;

	*out = NULL;
	if (!(b = docket_calloc(1, sizeof(*b))))
		return docket_error_set_oom();
	b->l = l;
	b->txn = txn;
	/* a writer with a deadline folds the oldest entries only (spool.h) */
	b->limit = fold_cap;
	if ((error = spool_dir(&b->dir, l->path)) < 0 || (error = list_entries(&names, &n, b->dir.ptr)) < 0)
		goto done;
	for (size_t i = 0; i < n && !batch_full(b) && error == 0; i++) {
		spool_entry *e;

		if ((error = already_folded(l, txn, names[i], &done)) < 0)
			break;
		if (!(e = batch_add(b))) {
			error = docket_error_set_oom();
			break;
		}
		e->name = names[i];
		names[i] = NULL;
		e->folded = done;
		if (!done && load_entry(e, b->dir.ptr) < 0) {
			/* unreadable now: not folded, not removed */
			docket_error_clear();
			docket_free(e->name);
			docket_buf_dispose(&e->text);
			b->n--;
		}
	}
	if (error == 0 && !batch_full(b))
		error = load_journal(b);
done:
	names_free(names, n);
	if (error < 0 || (b->n == 0 && !b->seen.present)) {
		spool_batch_free(b);
		return error;
	}
	*out = b;
	return 0;
}

/* Entry i as a group of one event; NULL when it is folded already or is
 * not an event (then it becomes an incident). */
ledger_group *spool_entry_group(spool_batch *b, size_t i)
{
	spool_entry *e = &b->entries[i];

	if (e->folded || !e->event)
		return NULL;
	memset(&e->group, 0, sizeof(e->group));
	e->group.events = &e->event;
	e->group.n = 1;
	e->group.results = &e->result;
	return &e->group;
}

int spool_entry_done(const spool_batch *b, size_t i)
{
	return b->entries[i].folded;
}

ledger_group *spool_incident_group(spool_batch *b, size_t i, const docket_error *why)
{
	spool_entry *e = &b->entries[i];
	const char *msg = why ? why->message : e->parse_err.message;
	json_t *j;
	int error;

	docket_event_free(e->incident);
	e->incident = NULL;
	j = json_pack("{ss ss ss ss% ss}", "type", "ledger.incident", "kind", "spool_refused", "file", e->name,
		      "entry", e->text.ptr ? e->text.ptr : "", e->text.len, "error", msg[0] ? msg : "refused");
	if (!j) {
		/* the entry text is not UTF-8 JSON text: keep it as an escaped note */
		j = json_pack("{ss ss ss ss ss}", "type", "ledger.incident", "kind", "spool_refused", "file",
			      e->name, "entry", "(not UTF-8 text)", "error", msg[0] ? msg : "refused");
	}
	error = j ? docket_event_from_json(&e->incident, j) : docket_error_set_oom();
	json_decref(j);
	if (error < 0)
		return NULL;
	memset(&e->group, 0, sizeof(e->group));
	memset(&e->result, 0, sizeof(e->result));
	e->group.events = &e->incident;
	e->group.n = 1;
	e->group.results = &e->result;
	return &e->group;
}

json_t *docket_spool_incident_entry(const json_t *incident)
{
	const json_t *type = json_object_get(incident, "type"), *text = json_object_get(incident, "entry");
	json_t *entry = NULL;

	if (!json_is_string(type) || strcmp(json_string_value(type), "ledger.incident") != 0 || !json_is_string(text))
		return NULL;
	if (docket_json_parse(&entry, json_string_value(text), json_string_length(text)) < 0 ||
	    !json_is_object(entry)) {
		docket_error_clear();
		json_decref(entry);
		return NULL;
	}
	return entry;
}

int docket_spool_incidents(docket_ledger *l, const char *session, json_t **out)
{
	docket_buf seqs = DOCKET_BUF_INIT;
	MDB_txn *txn = NULL;
	json_t *all = json_array(), *ev;
	size_t i;
	int error;

	*out = NULL;
	if (!all)
		return docket_error_set_oom();
	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		goto done;
	error = ledger_incidents_get(l, txn, session, &seqs);
	store_txn_abort(l, txn);
	for (i = 0; error == 0 && i + 8 <= seqs.len; i += 8) {
		if ((error = ledger_event_json(l, docket_be64_get((const uint8_t *)seqs.ptr + i), &ev)) == 0 &&
		    json_array_append_new(all, ev) < 0)
			error = docket_error_set_oom();
	}
done:
	docket_buf_dispose(&seqs);
	if (error < 0)
		json_decref(all);
	else
		*out = all;
	return error;
}

int spool_mark(spool_batch *b, size_t i, docket_ledger *l, MDB_txn *txn)
{
	docket_buf key = DOCKET_BUF_INIT;
	int error;

	if ((error = marker_key(&key, b->entries[i].name)) == 0)
		error = store_meta_put(txn, l, key.ptr, "1", 1);
	if (error == 0)
		b->entries[i].folded = 1;
	docket_buf_dispose(&key);
	return error;
}

void spool_unlink_folded(spool_batch *b)
{
	docket_buf path = DOCKET_BUF_INIT;
	size_t files = 0;
	int whole = b && b->seen.present && b->journal_whole;

	for (size_t i = 0; b && i < b->n; i++) {
		if (!b->entries[i].folded) {
			whole &= !b->entries[i].in_journal;
			continue;
		}
		if (b->entries[i].in_journal)
			continue;
		if (files++ == 1)
			docket_crash_point("spool.mid_unlink");
		docket_buf_clear(&path);
		if (docket_buf_printf(&path, "%s/%s", b->dir.ptr, b->entries[i].name) == 0)
			(void)unlink(path.ptr);
	}
	/* every record of the journal is folded: it goes, unless a writer appended meanwhile */
	if (whole)
		spool_journal_reclaim(b->dir.ptr, &b->seen);
	docket_error_clear();
	docket_buf_dispose(&path);
}
