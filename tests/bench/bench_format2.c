/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_format2.c: ledger format 2 (issue 12), side by side in one run.
 *
 * The stream of the issue: S sessions (default 200), C invocations (default
 * 60,000) assigned round-robin to the sessions, each call's intent, dispatch
 * and outcome consecutive, one call in five asking for an approval first
 * (requested, settled): about 192k events, ~170 bytes per JSON line. It is
 * generated here (deterministic) and written to a file.
 *
 *   record    `docket record FILE` into a fresh ledger, end to end through
 *             the CLI binary (a child: wall time and its peak RSS), against
 *             SQLite inserting the same lines (WAL, synchronous=FULL, one
 *             transaction, prepared INSERT of (seq, line)) in this process.
 *             Rounds alternate the order; a figure is total events over
 *             total time. With --before OLD, OLD's `docket record` of the
 *             same file runs in the same rounds (before/after, one run).
 *   bytes     every file of that ledger against the JSON lines;
 *   small     the first K events (default 24,000) appended through the C
 *             API in commits of 4 events (what `serve` commits under load):
 *             bytes before and after `docket_ledger_compact`, against those
 *             events' JSON lines.
 *
 * Checks (exit 1; speed is never checked): every store holds every event,
 * the compacted ledger verifies and prints the same chain head.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if DOCKET_BENCH_SQLITE
#include "bench_sqlite.h"
#endif

#include "bench_util.h"
#include "gen_format2.h"
#include "docket/ledger.h"
#include "util/buf.h"

extern char **environ;

typedef struct options {
	const char *docket;
	const char *before;  /* --before DOCKET: that binary's record too, same rounds */
	const char *dir;
	size_t calls, sessions, small;
	unsigned rounds;
	int quick, keep;
} options;

typedef struct stream {
	docket_buf text;
	size_t events;
	const char **line;   /* into text */
	size_t *len;
} stream;

/* ---- the stream ---- */

static int stream_build(stream *s, const options *o)
{
	size_t pos = 0, n = 0;

	memset(s, 0, sizeof(*s));
	if (gen_format2(&s->text, o->calls, o->sessions, &s->events) < 0 ||
	    !(s->line = calloc(s->events, sizeof(*s->line))) || !(s->len = calloc(s->events, sizeof(*s->len))))
		return -1;
	while (pos < s->text.len) {
		const char *p = s->text.ptr + pos, *nl = memchr(p, '\n', s->text.len - pos);

		s->line[n] = p;
		s->len[n++] = (size_t)(nl - p);
		pos += (size_t)(nl - p) + 1;
	}
	return 0;
}

static void stream_dispose(stream *s)
{
	docket_buf_dispose(&s->text);
	free(s->line);
	free(s->len);
}

static int write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(data, 1, len, f) == len;

	if (f && fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

/* ---- docket record, as a child ---- */

typedef struct run {
	double seconds;
	long maxrss_kb;
} run;

static int run_child(char *const argv[], run *out)
{
	struct rusage ru;
	double t0 = bench_now_s();
	pid_t pid;
	int status, devnull = open("/dev/null", O_WRONLY);
	posix_spawn_file_actions_t fa;

	posix_spawn_file_actions_init(&fa);
	if (devnull >= 0)
		posix_spawn_file_actions_adddup2(&fa, devnull, 1);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		if (devnull >= 0)
			close(devnull);
		bench_fail("spawn", argv[0]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	if (devnull >= 0)
		close(devnull);
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		bench_fail(argv[1], "the child failed");
		return -1;
	}
	out->seconds += bench_now_s() - t0;
	if (ru.ru_maxrss > out->maxrss_kb)
		out->maxrss_kb = ru.ru_maxrss;
	return 0;
}

static uint64_t dir_bytes(const char *dir)
{
	char *a = bench_path_join(dir, "data.mdb"), *b = bench_path_join(dir, "lock.mdb");
	uint64_t n = (a ? bench_file_size(a) : 0) + (b ? bench_file_size(b) : 0);

	free(a);
	free(b);
	return n;
}

static int count_events(const char *dir, uint64_t *events, uint8_t head[32])
{
	docket_ledger *l = NULL;
	docket_ledger_info info;
	int error;

	if ((error = docket_ledger_open(&l, dir, NULL)) == 0 && (error = docket_ledger_info_get(l, &info)) == 0) {
		*events = info.events;
		memcpy(head, info.head, 32);
	}
	docket_ledger_free(l);
	return error;
}

static int run_record(const options *o, const char *docket, const stream *s, const char *file, run *res,
		      uint64_t *bytes)
{
	char *dir = bench_tempdir(o->dir, "docket-f2-rec-XXXXXX");
	char *led = dir ? bench_path_join(dir, "ledger") : NULL;
	char *init[] = { (char *)docket, (char *)"-L", led, (char *)"init", NULL };
	char *rec[] = { (char *)docket, (char *)"-L", led, (char *)"record", (char *)file, NULL };
	run scratch = { 0, 0 };
	uint64_t events = 0;
	uint8_t head[32];
	int error = -1;

	if (!led)
		goto cleanup;
	bench_settle_disk(dir);
	if (run_child(init, &scratch) < 0 || run_child(rec, res) < 0)
		goto cleanup;
	if (count_events(led, &events, head) < 0 || events != s->events) {
		bench_fail("docket record", "the ledger does not hold every event");
		goto cleanup;
	}
	*bytes = dir_bytes(led);
	error = 0;
cleanup:
	free(led);
	return error;
}

/* ---- SQLite ---- */

#if DOCKET_BENCH_SQLITE
static int run_sqlite(const options *o, const stream *s, run *res)
{
	char *dir = bench_tempdir(o->dir, "docket-f2-sql-XXXXXX");
	char *path = dir ? bench_path_join(dir, "bench.db") : NULL;
	double seconds = 0;
	int error;

	if (!path)
		return -1;
	bench_settle_disk(dir);
	if ((error = bench_sqlite_one_txn(path, s->line, s->len, s->events, &seconds, NULL)) == 0)
		res->seconds += seconds;
	free(path);
	return error;
}
#endif

/* ---- small commits, then compact ---- */

static int run_small(const options *o, const stream *s, size_t n, uint64_t *before, uint64_t *after,
		     uint64_t *json_bytes)
{
	char *dir = bench_tempdir(o->dir, "docket-f2-small-XXXXXX");
	char *led = dir ? bench_path_join(dir, "ledger") : NULL;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_rewrite_report rep;
	docket_verify_report vr;
	docket_ledger *l = NULL;
	uint8_t head[32], head2[32];
	uint64_t events = 0;
	int error = -1;

	if (!led)
		return -1;
	opts.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&l, led, &opts) < 0) {
		bench_docket_fail("open");
		goto cleanup;
	}
	*json_bytes = 0;
	for (size_t i = 0; i < n; i += 4) {
		json_t *ev[4];
		size_t k = n - i < 4 ? n - i : 4;

		for (size_t j = 0; j < k; j++) {
			ev[j] = json_loadb(s->line[i + j], s->len[i + j], 0, NULL);
			*json_bytes += s->len[i + j] + 1;
		}
		error = docket_ledger_append_json(l, ev, k, NULL);
		for (size_t j = 0; j < k; j++)
			json_decref(ev[j]);
		if (error < 0) {
			bench_docket_fail("append");
			goto cleanup;
		}
	}
	docket_ledger_free(l);
	l = NULL;
	*before = dir_bytes(led);
	if (count_events(led, &events, head) < 0 || docket_ledger_compact(led, 0, &rep) < 0) {
		bench_docket_fail("compact");
		error = -1;
		goto cleanup;
	}
	*after = dir_bytes(led);
	error = -1;
	if (count_events(led, &events, head2) < 0 || events != n || memcmp(head, head2, 32) != 0 ||
	    docket_ledger_open(&l, led, NULL) < 0 || docket_ledger_verify(l, &vr) < 0 || !vr.ok) {
		bench_fail("compact", "the compacted ledger does not verify or lost events");
		goto cleanup;
	}
	error = 0;
cleanup:
	docket_ledger_free(l);
	free(led);
	return error;
}

/* ---- main ---- */

static int parse_args(options *o, int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");

	memset(o, 0, sizeof(*o));
	o->calls = 60000;
	o->sessions = 200;
	o->small = 24000;
	o->rounds = 2;
	o->dir = tmp && *tmp ? tmp : "/tmp";
	/* an option where the binary goes (`--help`) is a usage error, not a run */
	if (argc < 2 || argv[1][0] == '-' || !argv[1][0])
		return -1;
	o->docket = argv[1];
	for (int i = 2; i < argc; i++) {
		if (bench_common_flag(argv[i], &o->quick, &o->keep))
			continue;
		if (i + 1 >= argc)
			return -1;
		if (!strcmp(argv[i], "--calls"))
			o->calls = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--small"))
			o->small = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--rounds"))
			o->rounds = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--dir"))
			o->dir = argv[++i];
		else if (!strcmp(argv[i], "--before"))
			o->before = argv[++i];
		else
			return -1;
	}
	if (o->quick) {
		o->calls = 3000;
		o->small = 2000;
		o->rounds = 1;
	}
	return o->calls && o->rounds ? 0 : -1;
}

int main(int argc, char **argv)
{
	options o;
	stream s;
	run rec = { 0, 0 }, sql = { 0, 0 }, before = { 0, 0 };
	uint64_t before_bytes = 0, rec_bytes = 0, small_before = 0, small_after = 0, small_json = 0;
	char *dir, *file;
	double rec_rate, sql_rate;
	json_t *out;

	bench_init("bench_format2");
	if (parse_args(&o, argc, argv) < 0) {
		fprintf(stderr, "usage: bench_format2 DOCKET [--before DOCKET] [--calls N] [--small N] [--rounds R] "
			"[--dir DIR] [--quick] [--keep]\n");
		return 2;
	}
	if (stream_build(&s, &o) < 0 || !(dir = bench_tempdir(o.dir, "docket-f2-XXXXXX")) ||
	    !(file = bench_path_join(dir, "stream.jsonl")) || write_file(file, s.text.ptr, s.text.len) < 0) {
		bench_fail("generate", "cannot write the stream");
		return 1;
	}
	if (o.small > s.events)
		o.small = s.events;
	for (unsigned r = 0; r < o.rounds; r++) {
		int sql_first = r % 2;

#if DOCKET_BENCH_SQLITE
		if (sql_first)
			run_sqlite(&o, &s, &sql);
#endif
		if (o.before && !sql_first)
			run_record(&o, o.before, &s, file, &before, &before_bytes);
		run_record(&o, o.docket, &s, file, &rec, &rec_bytes);
		if (o.before && sql_first)
			run_record(&o, o.before, &s, file, &before, &before_bytes);
#if DOCKET_BENCH_SQLITE
		if (!sql_first)
			run_sqlite(&o, &s, &sql);
#endif
	}
	run_small(&o, &s, o.small, &small_before, &small_after, &small_json);
	rec_rate = rec.seconds > 0 ? (double)s.events * o.rounds / rec.seconds : 0;
	sql_rate = sql.seconds > 0 ? (double)s.events * o.rounds / sql.seconds : 0;
	printf("stream: %zu events, %zu sessions, %zu calls, %zu bytes of JSON lines (%.1f per event)\n",
	       s.events, o.sessions, o.calls, s.text.len, (double)s.text.len / (double)s.events);
	printf("%-44s %12s %10s\n", "", "events/s", "ratio");
	printf("%-44s %12.0f %10.2f   (peak RSS %ld MiB)\n", "docket record (CLI, one transaction)", rec_rate,
	       sql_rate > 0 ? rec_rate / sql_rate : 0, rec.maxrss_kb / 1024);
	if (o.before)
		printf("%-44s %12.0f %10.2f   (peak RSS %ld MiB; %s)\n", "docket record, --before binary",
		       before.seconds > 0 ? (double)s.events * o.rounds / before.seconds : 0,
		       sql_rate > 0 && before.seconds > 0 ? (double)s.events * o.rounds / before.seconds / sql_rate : 0,
		       before.maxrss_kb / 1024, o.before);
	printf("%-44s %12.0f %10.2f\n", "SQLite WAL FULL, one transaction", sql_rate, 1.0);
	printf("%-44s %12s %10s\n", "bytes on disk", "bytes", "/ JSON");
	printf("%-44s %12llu %10.3f\n", "after record (data.mdb + lock.mdb)", (unsigned long long)rec_bytes,
	       (double)rec_bytes / (double)s.text.len);
	printf("%-44s %12llu %10.3f   (%zu events)\n", "commits of 4 events, before compact",
	       (unsigned long long)small_before, small_json ? (double)small_before / (double)small_json : 0,
	       o.small);
	printf("%-44s %12llu %10.3f\n", "commits of 4 events, after docket compact",
	       (unsigned long long)small_after, small_json ? (double)small_after / (double)small_json : 0);
	out = json_pack("{s:s, s:I, s:I, s:f, s:f, s:f, s:I, s:I, s:f, s:f, s:f, s:b}", "bench", "format2",
			"events", (json_int_t)s.events, "json_bytes", (json_int_t)s.text.len,
			"record_events_per_s", rec_rate, "sqlite_events_per_s", sql_rate,
			"record_vs_sqlite", sql_rate > 0 ? rec_rate / sql_rate : 0.0,
			"record_peak_rss_kb", (json_int_t)rec.maxrss_kb, "record_bytes", (json_int_t)rec_bytes,
			"record_bytes_vs_json", (double)rec_bytes / (double)s.text.len,
			"small_bytes_vs_json", small_json ? (double)small_before / (double)small_json : 0.0,
			"compacted_bytes_vs_json", small_json ? (double)small_after / (double)small_json : 0.0,
			"quick", o.quick);
	bench_print_result(out);
	stream_dispose(&s);
	free(file);
	bench_tempdirs_dispose(o.keep);
	return bench_failures() ? 1 : 0;
}
