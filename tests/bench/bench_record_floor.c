/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_record_floor.c: where the wall of a bulk `docket record` is (issue
 * 12), measured piece by piece on one thread, beside SQLite in the same run.
 *
 * The stream of bench_format2 (200 sessions, 60,000 calls, ~204k events).
 * Every piece is CPU time of this thread per event (CLOCK_THREAD_CPUTIME_ID,
 * so other work on the machine inflates it less than wall time):
 *
 *   parse     docket_event_from_text per line (simdjson; what record's two
 *             parse threads do), and event_pack_rest (they pack the event
 *             without time and epoch too);
 *   append    the serial part: ledger_append_stream of the parsed events
 *             with their packings, in one transaction into a fresh ledger
 *             (what record's own thread does: the state machine, packing
 *             the prefix, chain, Merkle tree, segments, write-back, commit);
 *   floor     of that append, the work no design can leave out or spread
 *             over events, on the payloads as stored: the chain (SHA-256 of
 *             each payload after the previous hash), the Merkle tree (a leaf
 *             hash per event, a node hash per event), zstd level 1 over
 *             blocks of 1,024 payloads;
 *   SQLite    the lines inserted as bench_format2 does (WAL, synchronous=
 *             FULL, one transaction): wall time, events/s.
 *
 * Printed: each piece in us/event and as a share of the append; the best
 * record two cores allow with this split (the append on one core, the
 * parse on the other, whichever is longer: max(append, (parse + append) /
 * 2)) as events/s and against SQLite; and the wall per event 1.5x SQLite
 * needs. Checks (exit 1; speed is never checked): every event is appended
 * and the ledger verifies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zstd.h>

#if DOCKET_BENCH_SQLITE
#include "bench_sqlite.h"
#endif

#include "bench_util.h"
#include "docket/ledger.h"
#include "docket/tlog.h"
#include "gen_format2.h"
#include "ledger/event.h"
#include "ledger/ledger_internal.h"
#include "util/buf.h"
#include "util/json_tape.h"

#define BLOCK 1024

typedef struct lines {
	docket_buf text;
	const char **line;
	size_t *len, n;
} lines;

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *tmp_base(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp && *tmp ? tmp : "/tmp";
}

static int lines_build(lines *s, size_t calls)
{
	size_t events = 0, pos = 0;

	if (gen_format2(&s->text, calls, 200, &events) < 0)
		return -1;
	s->line = calloc(events, sizeof(*s->line));
	s->len = calloc(events, sizeof(*s->len));
	if (!s->line || !s->len)
		return -1;
	while (pos < s->text.len && s->n < events) {
		const char *p = s->text.ptr + pos, *nl = memchr(p, '\n', s->text.len - pos);
		size_t len = nl ? (size_t)(nl - p) : s->text.len - pos;

		s->line[s->n] = p;
		s->len[s->n++] = len;
		pos += len + 1;
	}
	return s->n == events ? 0 : -1;
}

/* The parse threads' work: the events, and their packings without time and epoch. */
static int parse_all(const lines *s, docket_event **evs, docket_buf *rests, double *parse_s, double *rest_s)
{
	docket_json_tape *tape = docket_json_tape_new();
	double t0;
	int error = 0;

	if (!tape)
		return -1;
	t0 = thread_cpu_s();
	for (size_t i = 0; i < s->n && error == 0; i++)
		if (docket_event_from_text(&evs[i], tape, s->line[i], s->len[i]) != 0)
			error = -1;
	*parse_s = thread_cpu_s() - t0;
	t0 = thread_cpu_s();
	for (size_t i = 0; i < s->n && error == 0; i++) /* as record: not a dispatch */
		if (evs[i]->body_case != DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED)
			error = event_pack_rest(&rests[i], evs[i]);
	*rest_s = thread_cpu_s() - t0;
	docket_json_tape_free(tape);
	return error;
}

typedef struct given {
	docket_event **made, **events;
	const docket_buf *rests;
} given;

static int hand_over(void *ctx, size_t i, docket_slice *rest)
{
	given *g = ctx;

	g->events[i] = g->made[i];
	rest->ptr = (const uint8_t *)g->rests[i].ptr;
	rest->len = g->rests[i].len;
	return 0;
}

/* The stored payloads, in seq order (for the floor pieces). */
static int payloads_read(docket_ledger *l, size_t n, docket_buf *out)
{
	MDB_txn *txn = NULL;
	ledger_reader r;
	const uint8_t *p;
	size_t len;
	int error = 0;

	if (store_txn_begin(&txn, l, MDB_RDONLY) < 0)
		return -1;
	reader_init(&r, l, txn);
	for (size_t i = 0; i < n && error == 0; i++)
		if ((error = reader_payload(&r, i + 1, &p, &len)) == 0)
			error = docket_buf_put(&out[i], p, len);
	reader_dispose(&r);
	store_txn_abort(l, txn);
	return error;
}

typedef struct floor_s {
	double chain, merkle, zstd;
} floor_s;

static int floor_measure(const docket_buf *pl, size_t n, floor_s *f)
{
	uint8_t hash[32] = { 0 }, frontier[64][32], leaf[32];
	uint64_t count = 0;
	docket_buf block = DOCKET_BUF_INIT;
	size_t cap = 0;
	void *dst = NULL;
	double t0;
	int error = 0;

	t0 = thread_cpu_s();
	for (size_t i = 0; i < n && error == 0; i++)
		error = chain_next(hash, hash, i + 1, (const uint8_t *)pl[i].ptr, pl[i].len);
	f->chain = thread_cpu_s() - t0;
	/* the tree: a leaf per event, and the nodes its frontier completes
	 * (n - 1 in all) */
	t0 = thread_cpu_s();
	for (size_t i = 0; i < n; i++) {
		docket_tlog_leaf_hash(leaf, pl[i].ptr, pl[i].len);
		int level = 0;

		for (uint64_t c = count; c & 1; c >>= 1, level++)
			docket_tlog_node_hash(leaf, frontier[level], leaf);
		memcpy(frontier[level], leaf, 32);
		count++;
	}
	f->merkle = thread_cpu_s() - t0;
	t0 = thread_cpu_s();
	for (size_t i = 0; i < n && error == 0; i += BLOCK) {
		docket_buf_clear(&block);
		for (size_t k = i; k < n && k < i + BLOCK && error == 0; k++)
			error = docket_buf_put(&block, pl[k].ptr, pl[k].len);
		if (ZSTD_compressBound(block.len) > cap) {
			free(dst);
			cap = ZSTD_compressBound(block.len);
			if (!(dst = malloc(cap)))
				error = -1;
		}
		if (error == 0 && ZSTD_isError(ZSTD_compress(dst, cap, block.ptr, block.len, 1)))
			error = -1;
	}
	f->zstd = thread_cpu_s() - t0;
	free(dst);
	docket_buf_dispose(&block);
	return error;
}

#if DOCKET_BENCH_SQLITE
static int sqlite_rate(const lines *s, double *seconds, double *cpu)
{
	char *dir = bench_tempdir(tmp_base(), "docket-floor-sql-XXXXXX");
	char *path = dir ? bench_path_join(dir, "bench.db") : NULL;
	int error;

	if (!path)
		return -1;
	bench_settle_disk(dir);
	error = bench_sqlite_one_txn(path, s->line, s->len, s->n, seconds, cpu);
	free(path);
	return error;
}
#endif

static void row(const char *what, double s, size_t n, double of)
{
	printf("%-52s %9.3f us/event %6.1f%%\n", what, s * 1e6 / (double)n, of > 0 ? 100.0 * s / of : 0.0);
}

int main(int argc, char **argv)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_verify_report rep;
	docket_ledger *l = NULL;
	lines s = { DOCKET_BUF_INIT, NULL, NULL, 0 };
	docket_event **made = NULL, **events = NULL;
	docket_buf *rests = NULL, *pl = NULL;
	double parse = 0, rest = 0, append = 0, append_wall, sql = 0, sql_cpu = 0, t0;
	int quick = 0, keep = 0;
	floor_s f = { 0, 0, 0 };
	char *dir;

	bench_init("bench_record_floor");
	for (int i = 1; i < argc; i++)
		if (!bench_common_flag(argv[i], &quick, &keep)) {
			fprintf(stderr, "usage: bench_record_floor [--quick] [--keep]\n");
			return 2;
		}
	if (lines_build(&s, quick ? 2000 : 60000) < 0) {
		bench_fail("generate the stream", "out of memory");
		return 1;
	}
	made = calloc(s.n, sizeof(*made));
	events = calloc(s.n, sizeof(*events));
	rests = calloc(s.n, sizeof(*rests));
	pl = calloc(s.n, sizeof(*pl));
	dir = bench_tempdir(tmp_base(), "docket-floor-XXXXXX");
	opts.flags = DOCKET_OPEN_CREATE;
	if (!made || !events || !rests || !pl || !dir || parse_all(&s, made, rests, &parse, &rest) < 0) {
		bench_fail("parse the stream", "out of memory or a bad line");
		return 1;
	}
	if (docket_ledger_open(&l, dir, &opts) < 0) {
		bench_docket_fail("open the ledger");
		return 1;
	}
	given g = { made, events, rests };
	t0 = bench_now_s();
	double c0 = thread_cpu_s();
	if (ledger_append_stream(l, events, s.n, NULL, hand_over, &g) < 0)
		bench_docket_fail("append");
	append = thread_cpu_s() - c0;
	append_wall = bench_now_s() - t0;
	if (payloads_read(l, s.n, pl) < 0 || floor_measure(pl, s.n, &f) < 0)
		bench_fail("read back the payloads", "");
	if (docket_ledger_verify(l, &rep) < 0 || !rep.ok)
		bench_fail("verify", rep.problem);
#if DOCKET_BENCH_SQLITE
	if (sqlite_rate(&s, &sql, &sql_cpu) < 0)
		bench_fail("sqlite", "");
#endif
	printf("stream: %zu events, %zu bytes of JSON lines\n", s.n, s.text.len);
	printf("%-52s %9s          %7s\n", "piece (CPU time of one thread)", "", "of append");
	row("parse: docket_event_from_text (parse threads)", parse, s.n, append);
	row("parse: event_pack_rest (parse threads)", rest, s.n, append);
	row("append: ledger_append_stream, one transaction", append, s.n, append);
	row("  floor: chain (SHA-256 per event)", f.chain, s.n, append);
	row("  floor: Merkle tree (leaf + node per event)", f.merkle, s.n, append);
	row("  floor: zstd level 1, blocks of 1,024", f.zstd, s.n, append);
	row("  floor: total", f.chain + f.merkle + f.zstd, s.n, append);
	row("  the rest: state machine, projections, LMDB, commit", append - f.chain - f.merkle - f.zstd, s.n, append);
	printf("append wall time %.3f s (CPU %.3f s)\n", append_wall, append);
	double two = append > (parse + rest + append) / 2 ? append : (parse + rest + append) / 2;
	printf("%-52s %12.0f events/s\n", "best record on 2 cores: max(append, all / 2)", (double)s.n / two);
	if (sql > 0) {
		double budget = sql / 1.5 / (double)s.n;

		printf("%-52s %12.0f events/s (CPU %.3f us/event)\n", "SQLite WAL FULL, one transaction (wall)",
		       (double)s.n / sql, sql_cpu * 1e6 / (double)s.n);
		printf("%-52s %12.2f x SQLite\n", "  that best record", sql / two);
		printf("%-52s %9.3f us/event of wall, %.3f of CPU on 2 cores\n", "  1.5x SQLite leaves", budget * 1e6,
		       2 * budget * 1e6);
		printf("%-52s %12.2f x that CPU\n", "  the parse alone (both parse pieces)",
		       (parse + rest) / (double)s.n / (2 * budget));
		printf("%-52s %12.2f x that wall\n", "  the chain alone (serial)", f.chain / (double)s.n / budget);
	}
	docket_ledger_free(l);
	for (size_t i = 0; i < s.n; i++) {
		docket_event_free(made[i]);
		docket_buf_dispose(&rests[i]);
		docket_buf_dispose(&pl[i]);
	}
	free(made);
	free(events);
	free(rests);
	free(pl);
	free(s.line);
	free(s.len);
	docket_buf_dispose(&s.text);
	bench_tempdirs_dispose(keep);
	return bench_failures() ? 1 : 0;
}
