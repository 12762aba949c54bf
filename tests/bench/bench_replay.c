/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_replay.c: `docket replay` end to end through the CLI binary
 * (issue 15). A ledger of realistic sessions (gen_mix.c: shell commands,
 * patches, reads, approvals, outputs with a long tail of multi-KB logs)
 * holding N tool intents is replayed with `--format json` against a Claude
 * Code settings file, side by side in the same run with
 * `docket export --format jsonl` of the same ledger (the cost of just
 * reading and printing every event), both to /dev/null:
 *
 *   export              docket -L DIR export --format jsonl
 *   replay, 1 thread    DOCKET_REPLAY_THREADS=1 docket -L DIR replay --policy claude:settings.json --format json
 *   replay, 2 threads   DOCKET_REPLAY_THREADS=2 docket ... (what a large ledger gets by default)
 *   verify              docket -L DIR verify (rates in events, not intents)
 *
 * For each: wall time, CPU time (user + system of the child, wait4), intents
 * (events for verify) per second of wall time and per CPU-second ("per
 * core"), and peak RSS (ru_maxrss of the child and of the process the CLI
 * forks, the highest of all rounds: it counts the ledger pages LMDB maps
 * in). Each command runs ROUNDS times (--rounds), interleaved, and the
 * fastest round counts for the times (the machine is shared). Goals
 * (printed, not asserted): >= 1M intents/s/core, <= 256 MB peak RSS, replay
 * no slower than 1.5x the export.
 *
 *   bench_replay DOCKET [--quick] [--intents N] [--keep DIR] [--ledger DIR] [--rounds N]
 *                [--rss-max MB --min-ledger-mb MB] [--before OLD]
 *
 * --before OLD also replays (1 thread) with another docket binary, OLD (the
 * build before a change), in the same rounds, alternated with DOCKET's, and
 * prints DOCKET's CPU time per intent as a ratio to OLD's (issue 34).
 *
 * Then the floor, in this process on the same ledger: what every replay of
 * it must do per intent whatever its method, one cumulative pass each, CPU
 * time divided by the intents:
 *   kinds     each event's kind from its segment's index (LMDB reads, the
 *             segment headers)
 *   + read    the payload of each kind replay reads (intents, approvals,
 *             session events): every segment holding one decompressed once
 *   + unpack  protobuf-c unpack of those events (into an arena)
 *   + parse   each intent's args text parsed (simdjson tape, jansson where
 *             the tape view refuses: docket_jv_parse)
 *   + eval    each intent's call built (docket_policy_call_from_jv) and
 *             evaluated under the settings in one fixed context, no memo
 * The replay (1 thread) line above the last one is the session state, the
 * memo, the invocation lookups and the report (`+ eval` evaluates every
 * intent where replay's memo evaluates each distinct call once per context).
 *
 * --ledger reuses a ledger --keep kept (generating 1M intents takes
 * minutes). --quick (5,000 intents, plain `meson test`) checks only that
 * every command succeeds and that the replay's totals count every intent;
 * it asserts nothing about speed. --rss-max (the slow suite's rss_1g) fails
 * when any command's peak RSS passes MB, a resource bound rather than a
 * timing, and --min-ledger-mb when data.mdb is smaller than MB (so the
 * bound is checked at the size it is meant for).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "docket/ledger.h"
#include "docket/policy.h"
#include "gen_mix.h"
#include "ledger/ledger_internal.h"
#include "policy/policy.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"
#include "util/jv.h"

#define CHUNK_EVENTS 60000
#define ROUNDS 2

static int rounds = ROUNDS;
static const char *before;   /* --before: the baseline binary, or NULL */

/* A Claude Code settings file of the size teams write. */
static const char settings[] =
	"{\n  \"permissions\": {\n"
	"    \"allow\": [\"Bash(npm run test:*)\", \"Bash(npm run build)\", \"Bash(git diff:*)\", \"Bash(git status)\",\n"
	"      \"Bash(git log:*)\", \"Bash(cargo test:*)\", \"Bash(cargo build:*)\", \"Bash(make:*)\", \"Bash(pytest:*)\",\n"
	"      \"Bash(go test:*)\", \"Bash(ls:*)\", \"Bash(cat:*)\", \"Bash(rg:*)\", \"Read\", \"Edit(./src/**)\",\n"
	"      \"Edit(./tests/**)\", \"WebFetch(domain:docs.npmjs.com)\", \"WebFetch(domain:docs.rs)\"],\n"
	"    \"ask\": [\"Bash(git push:*)\", \"Bash(docker:*)\", \"Bash(kubectl:*)\", \"Edit(./migrations/**)\"],\n"
	"    \"deny\": [\"Bash(rm -rf:*)\", \"Bash(curl:*)\", \"Read(./.env)\", \"Read(./secrets/**)\",\n"
	"      \"WebFetch(domain:pastebin.com)\"],\n"
	"    \"defaultMode\": \"default\"\n  }\n}\n";

static int die(const char *what)
{
	fprintf(stderr, "bench_replay: %s: %s\n", what, docket_error_last()->message);
	return 1;
}

/* Append one generated chunk (a legal stream of its own) in batches. */
static int append_chunk(docket_ledger *l, uint64_t seed, size_t events, size_t *intents)
{
	docket_buf text = DOCKET_BUF_INIT;
	gen_mix_stats st;
	int error;

	if ((error = gen_mix(&text, events, seed, &st)) < 0)
		return error;
	*intents += st.calls;
	error = gen_mix_append(l, text.ptr);
	docket_buf_dispose(&text);
	return error;
}

static int make_ledger(const char *dir, size_t want_intents, size_t *intents, size_t *events)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	docket_ledger_info info;
	int error = 0;

	oo.flags = DOCKET_OPEN_CREATE;
	oo.map_size = (size_t)8 << 30;
	if (docket_ledger_open(&l, dir, &oo) < 0)
		return die("open");
	for (uint64_t seed = 1; *intents < want_intents && error == 0; seed++)
		error = append_chunk(l, seed, CHUNK_EVENTS < want_intents * 4 ? CHUNK_EVENTS : want_intents * 4,
				     intents);
	if (error == 0)
		error = docket_ledger_info_get(l, &info);
	*events = error == 0 ? info.events : 0;
	docket_ledger_free(l);
	return error < 0 ? die("build the ledger") : 0;
}

typedef struct measure {
	const char *name;
	double wall, cpu;
	long rss_kb;
} measure;

/* Run argv with stdout to `out` (NULL: /dev/null); fastest round kept in m. */
static int run_child(measure *m, char *const argv[], const char *threads, const char *out)
{
	struct rusage ru;
	double t0 = bench_now_s(), wall, cpu;
	int status, fd;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(127);
		if (threads)
			setenv("DOCKET_REPLAY_THREADS", threads, 1);
		else
			unsetenv("DOCKET_REPLAY_THREADS");
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return -1;
	wall = bench_now_s() - t0;
	cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	      (double)ru.ru_stime.tv_usec / 1e6;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench_replay: FAIL: %s exited with status %d\n", m->name, status);
		return -1;
	}
	if (m->wall == 0 || wall < m->wall)
		m->wall = wall;
	if (m->cpu == 0 || cpu < m->cpu)
		m->cpu = cpu;
	if (ru.ru_maxrss > m->rss_kb)
		m->rss_kb = ru.ru_maxrss;
	return 0;
}

/* The replay report's totals.calls, or -1. */
static long long report_calls(const char *path)
{
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr);
	long long n = doc ? json_integer_value(json_object_get(json_object_get(doc, "totals"), "calls")) : -1;

	json_decref(doc);
	return n;
}

static void print_row(const measure *m, size_t n, const char *unit)
{
	printf("%-18s %8.2f s wall %8.2f s CPU %11.0f %s/s %11.0f %s/s/core %7.1f MB peak RSS\n", m->name,
	       m->wall, m->cpu, (double)n / m->wall, unit, (double)n / m->cpu, unit, (double)m->rss_kb / 1024);
}

static json_t *row_json(const measure *m, size_t n, const char *unit)
{
	char per_s[32], per_core[32];

	snprintf(per_s, sizeof(per_s), "%s_per_s", unit);
	snprintf(per_core, sizeof(per_core), "%s_per_core_s", unit);
	return json_pack("{s:f, s:f, s:f, s:f, s:f}", "wall_s", m->wall, "cpu_s", m->cpu,
			 per_s, (double)n / m->wall, per_core, (double)n / m->cpu,
			 "peak_rss_mb", (double)m->rss_kb / 1024);
}

/* --rss-max: 0 when every command stayed within `max_mb`. */
static int rss_check(const measure *const *ms, size_t n, double max_mb)
{
	int over = 0;

	for (size_t i = 0; i < n; i++) {
		double mb = (double)ms[i]->rss_kb / 1024;

		printf("rss: %-18s %7.1f MB (bound %.0f MB) %s\n", ms[i]->name, mb, max_mb, mb <= max_mb ? "ok" : "OVER");
		over |= mb > max_mb;
	}
	if (over)
		fprintf(stderr, "bench_replay: FAIL: a command's peak RSS passed %.0f MB\n", max_mb);
	return over;
}

/* ---- the floor ---- */

typedef enum stage { KINDS, READ, UNPACK, PARSE, EVAL, STAGES } stage;
static const char *const stage_names[STAGES] = { "kinds", "+ read", "+ unpack", "+ parse", "+ eval" };

static const char floor_context[] = "{\"platform\":\"linux\",\"cwd\":\"/home/u/app\","
				    "\"workspace_roots\":[\"/home/u/app\"],\"env\":{\"HOME\":\"/home/u\"}}";

/* What a floor pass works with. */
typedef struct floor_ctx {
	docket_ledger *l;
	docket_policy *policy;
	docket_policy_context *ctx;
	docket_policy_result *res;
	docket_json_tape *tape;
	docket_arena arena;        /* each event is unpacked in here, as replay's scan */
	ProtobufCAllocator pb;
} floor_ctx;

/* The kinds replay reads (replay/scan.c's `wanted`). */
static int replay_reads(unsigned kind)
{
	return kind == 0 || kind == DOCKET__V1__EVENT__BODY_SESSION_OPENED ||
	       kind == DOCKET__V1__EVENT__BODY_POLICY_REVISED || kind == DOCKET__V1__EVENT__BODY_TOOL_INTENT ||
	       kind == DOCKET__V1__EVENT__BODY_APPROVAL_SETTLED || kind == DOCKET__V1__EVENT__BODY_SESSION_CLOSED;
}

/* Parse (and with EVAL build and evaluate) one intent's call. */
static int floor_intent(floor_ctx *f, const docket_event *ev, stage upto)
{
	const char *text = ev->tool_intent->args_json;
	docket_policy_call *call = NULL;
	docket_jv_doc d;
	int error;

	if ((error = docket_jv_parse(&d, f->tape, text, strlen(text))) == 0 && upto >= EVAL &&
	    /* a call the policy cannot build is an outcome replay reports, not a failure */
	    docket_policy_call_from_jv(&call, ev->tool_intent->tool, d.ops, d.root) == 0)
		error = docket_policy_eval(f->res, f->policy, call, f->ctx);
	docket_policy_call_free(call);
	docket_jv_doc_dispose(&d);
	return error;
}

/* One pass over events 1..last doing the work up to `upto`; the intents seen. */
static int floor_pass(floor_ctx *f, uint64_t last, stage upto, size_t *intents)
{
	ledger_reader r;
	MDB_txn *txn = NULL;
	int error = 0;

	*intents = 0;
	reader_init(&r, f->l, NULL);
	r.scan = 1;
	for (uint64_t seq = 1; seq <= last && error == 0; seq++) {
		const uint8_t *p;
		size_t len;
		unsigned kind;
		docket_event *ev = NULL;

		/* a fresh read transaction per 1,024 events, as replay's scan */
		if (seq % 1024 == 1) {
			if (txn)
				store_txn_abort(f->l, txn);
			if ((error = store_txn_begin(&txn, f->l, MDB_RDONLY)) < 0)
				break;
			reader_set_txn(&r, txn);
		}
		if ((error = reader_kind(&r, seq, &kind)) < 0)
			break;
		if (!replay_reads(kind))
			continue;
		*intents += kind == DOCKET__V1__EVENT__BODY_TOOL_INTENT;
		if (upto < READ || (error = reader_payload(&r, seq, &p, &len)) < 0 || upto < UNPACK)
			continue;
		if ((error = event_unpack_in(&ev, &f->pb, p, len)) < 0)
			break;
		if (upto >= PARSE && ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_INTENT)
			error = floor_intent(f, ev, upto);
		if (!docket_arena_reset(&f->arena))
			docket__v1__event__free_unpacked(ev, &f->pb);
	}
	reader_dispose(&r);
	if (txn)
		store_txn_abort(f->l, txn);
	return error;
}

static int floor_open(floor_ctx *f, const char *dir, const char *policy)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	json_t *cj = NULL;
	int error;

	memset(f, 0, sizeof(*f));
	oo.flags = DOCKET_OPEN_READONLY;
	if ((error = docket_ledger_open(&f->l, dir, &oo)) < 0 ||
	    (error = docket_policy_load(&f->policy, policy)) < 0 ||
	    (error = docket_arena_init(&f->arena, (size_t)64 << 10)) < 0 ||
	    (error = docket_policy_result_new(&f->res)) < 0 ||
	    (error = docket_json_parse(&cj, floor_context, strlen(floor_context))) < 0 ||
	    (error = docket_policy_context_from_json(&f->ctx, cj)) < 0)
		goto done;
	if (!(f->tape = docket_json_tape_new()))
		error = docket_error_set(DOCKET_ENOMEM, "out of memory");
	docket_arena_pb(&f->pb, &f->arena);
done:
	json_decref(cj);
	return error;
}

static void floor_close(floor_ctx *f)
{
	docket_json_tape_free(f->tape);
	docket_policy_context_free(f->ctx);
	docket_policy_result_free(f->res);
	docket_policy_free(f->policy);
	docket_arena_dispose(&f->arena);
	docket_ledger_free(f->l);
}

/* The floor table; 1 when a pass fails or misses an intent. */
static int measure_floor(const char *dir, const char *policy, size_t intents, size_t events, double replay_cpu)
{
	floor_ctx f;
	double prev = 0, cpu = 0;
	int error;

	if ((error = floor_open(&f, dir, policy)) < 0) {
		bench_docket_fail("floor: open the ledger and the policy");
		floor_close(&f);
		return 1;
	}
	printf("floor (this process, CPU time per intent, cumulative):\n");
	for (stage s = KINDS; s < STAGES && error == 0; s++) {
		uint64_t t0 = bench_cpu_ns();
		size_t seen;

		if ((error = floor_pass(&f, events, s, &seen)) < 0) {
			bench_docket_fail(stage_names[s]);
			break;
		}
		cpu = (double)(bench_cpu_ns() - t0) / 1e9;
		if (seen != intents) {
			fprintf(stderr, "bench_replay: FAIL: %s saw %zu of %zu intents\n", stage_names[s], seen, intents);
			error = -1;
			break;
		}
		printf("  %-9s %6.3f us/intent (+%.3f)  %10.0f intents/s/core\n", stage_names[s],
		       cpu * 1e6 / (double)intents, (cpu - prev) * 1e6 / (double)intents, (double)intents / cpu);
		prev = cpu;
	}
	if (error == 0)
		printf("  replay    %6.3f us/intent (+%.3f: sessions, memo, invocations, report; 1 thread)\n",
		       replay_cpu * 1e6 / (double)intents, (replay_cpu - cpu) * 1e6 / (double)intents);
	floor_close(&f);
	return error < 0;
}

static int measure_all(const char *docket, const char *dir, size_t intents, size_t events, int quick,
		       double rss_max)
{
	char settings_path[4200], policy[4300], report_path[4200];
	measure ex = { "export jsonl", 0, 0, 0 }, r1 = { "replay, 1 thread", 0, 0, 0 },
		r2 = { "replay, 2 threads", 0, 0, 0 }, ve = { "verify", 0, 0, 0 };
	measure rb = { "replay, 1t, before", 0, 0, 0 };
	const measure *all[] = { &ex, &r1, &r2, &ve };
	char *export_argv[] = { (char *)docket, "-L", (char *)dir, "export", "--format", "jsonl", NULL };
	char *verify_argv[] = { (char *)docket, "-L", (char *)dir, "verify", NULL };
	char *replay_argv[] = { (char *)docket, "-L", (char *)dir, "replay", "--policy", policy, "--format", "json", NULL };
	char *before_argv[] = { (char *)before, "-L", (char *)dir, "replay", "--policy", policy, "--format", "json", NULL };
	FILE *f;
	long long calls;
	int rc = 0;

	snprintf(settings_path, sizeof(settings_path), "%s/bench-settings.json", dir);
	snprintf(policy, sizeof(policy), "claude:%s", settings_path);
	snprintf(report_path, sizeof(report_path), "%s/bench-report.json", dir);
	if (!(f = fopen(settings_path, "w")) || fputs(settings, f) < 0 || fclose(f) != 0)
		return 1;
	for (int round = 0; round < (quick ? 1 : rounds) && rc == 0; round++)
		rc = run_child(&ex, export_argv, NULL, NULL) < 0 || run_child(&r1, replay_argv, "1", NULL) < 0 ||
		     (before && run_child(&rb, before_argv, "1", NULL) < 0) ||
		     run_child(&r2, replay_argv, "2", quick ? report_path : NULL) < 0 ||
		     run_child(&ve, verify_argv, NULL, NULL) < 0;
	if (rc)
		return 1;
	if (quick && (calls = report_calls(report_path)) != (long long)intents) {
		fprintf(stderr, "bench_replay: FAIL: the report counts %lld of %zu intents\n", calls, intents);
		return 1;
	}
	print_row(&ex, intents, "intents");
	print_row(&r1, intents, "intents");
	print_row(&r2, intents, "intents");
	print_row(&ve, events, "events");
	if (before) {
		print_row(&rb, intents, "intents");
		printf("replay, 1 thread, CPU per intent ÷ the --before binary's, same rounds: %.3fx\n", r1.cpu / rb.cpu);
	}
	printf("export, by events: %.0f events/s/core (goal >= 500,000 events/s)\n", (double)events / ex.cpu);
	printf("ratios: replay/export wall %.2fx (goal <= 1.5x), CPU %.2fx; replay 1 thread/export wall %.2fx; "
	       "2 threads vs 1 wall %.2fx faster\n",
	       r2.wall / ex.wall, r2.cpu / ex.cpu, r1.wall / ex.wall, r1.wall / r2.wall);
	printf("goals: %.0f intents/s/core (1 thread) vs 1,000,000; peak RSS %.0f MB vs 256 MB\n",
	       (double)intents / r1.cpu, (double)r2.rss_kb / 1024);
	bench_print_result(json_pack("{s:s, s:I, s:I, s:o, s:o, s:o, s:o, s:f, s:f}", "bench", "replay", "intents",
				     (json_int_t)intents, "events", (json_int_t)events, "export",
				     row_json(&ex, intents, "intents"), "replay_1_thread", row_json(&r1, intents, "intents"),
				     "replay", row_json(&r2, intents, "intents"), "verify", row_json(&ve, events, "events"),
				     "replay_over_export_wall", r2.wall / ex.wall, "replay_over_export_cpu",
				     r2.cpu / ex.cpu));
	if (measure_floor(dir, policy, intents, events, r1.cpu) != 0)
		return 1;
	return rss_max > 0 ? rss_check(all, sizeof(all) / sizeof(all[0]), rss_max) : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_replay DOCKET [--quick] [--intents N] [--keep DIR] [--ledger DIR] [--rounds N] "
		"[--rss-max MB] [--min-ledger-mb MB] [--before OLD]\n");
	return 2;
}

/* The ledger's event count and the size of its data file. */
static int ledger_facts(const char *dir, size_t *events, double *file_mb)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	docket_ledger_info info;

	oo.flags = DOCKET_OPEN_READONLY;
	if (docket_ledger_open(&l, dir, &oo) < 0 || docket_ledger_info_get(l, &info) < 0) {
		docket_ledger_free(l);
		return die("read the ledger's facts");
	}
	*events = (size_t)info.events;
	*file_mb = (double)info.file_bytes / (1024 * 1024);
	docket_ledger_free(l);
	return 0;
}

/* A kept ledger's intent count lives beside it, in DIR.intents. */
static int intents_file(const char *dir, size_t *intents, int write)
{
	char path[4200];
	unsigned long long n = *intents;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s.intents", dir);
	if (!(f = fopen(path, write ? "w" : "r")))
		return 1;
	ok = write ? fprintf(f, "%llu\n", n) > 0 : fscanf(f, "%llu", &n) == 1;
	if (fclose(f) != 0 || !ok)
		return 1;
	*intents = (size_t)n;
	return 0;
}

int main(int argc, char **argv)
{
	size_t want = 1000000, intents = 0, events = 0;
	const char *keep = NULL, *reuse = NULL, *tmp = getenv("TMPDIR"), *docket;
	char dir[4096];
	int quick = 0, rc;
	double t0, rss_max = 0, min_mb = 0, file_mb = 0;

	/* the docket binary comes first: "--help" or any option there is not
	 * a path to run for minutes */
	if (argc < 2 || argv[1][0] == '-')
		return usage();
	docket = argv[1];
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--intents") == 0 && i + 1 < argc)
			want = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
			keep = argv[++i];
		else if (strcmp(argv[i], "--ledger") == 0 && i + 1 < argc)
			reuse = argv[++i];
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
		else if (strcmp(argv[i], "--rss-max") == 0 && i + 1 < argc)
			rss_max = strtod(argv[++i], NULL);
		else if (strcmp(argv[i], "--min-ledger-mb") == 0 && i + 1 < argc)
			min_mb = strtod(argv[++i], NULL);
		else if (strcmp(argv[i], "--before") == 0 && i + 1 < argc)
			before = argv[++i];
		else {
			return usage();
		}
	}
	if (quick)
		want = 5000;
	if (reuse) {
		snprintf(dir, sizeof(dir), "%s", reuse);
		if (intents_file(dir, &intents, 0) != 0) {
			fprintf(stderr, "bench_replay: no %s.intents (make the ledger with --keep)\n", dir);
			return 1;
		}
		printf("ledger %s: %zu tool intents (reused)\n", dir, intents);
	} else {
		if (keep) {
			snprintf(dir, sizeof(dir), "%s", keep);
		} else {
			snprintf(dir, sizeof(dir), "%s/docket-bench-replay-XXXXXX", tmp && *tmp ? tmp : "/tmp");
			if (!mkdtemp(dir))
				return 1;
		}
		t0 = bench_now_s();
		if (make_ledger(dir, want, &intents, &events) != 0)
			return 1;
		printf("ledger: %zu events, %zu tool intents (written in %.1fs, not timed)\n", events, intents,
		       bench_now_s() - t0);
		if (keep && intents_file(dir, &intents, 1) != 0)
			return 1;
	}
	if (ledger_facts(dir, &events, &file_mb) != 0)
		return 1;
	printf("data.mdb: %.1f MB, %zu events\n", file_mb, events);
	if (file_mb < min_mb) {
		fprintf(stderr, "bench_replay: FAIL: the ledger is %.1f MB, less than --min-ledger-mb %.0f\n", file_mb,
			min_mb);
		return 1;
	}
	printf("machine: %ld cores online, load average shared with other work: compare the ratios\n",
	       sysconf(_SC_NPROCESSORS_ONLN));
	fflush(stdout);
	rc = measure_all(docket, dir, intents, events, quick, rss_max);
	if (!keep && !reuse)
		bench_remove_tree(dir);
	return rc;
}
