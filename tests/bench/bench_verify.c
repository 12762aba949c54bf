/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_verify.c: `docket verify` events/s per core (issue 15, goal >= 1M
 * with the hash work included), and where its floor is.
 *
 *   bench_verify DOCKET [--before|--baseline DOCKET_OLD] [--ledger DIR [--make N]] [--rounds N] [--quick]
 *
 * 1. `DOCKET -L DIR verify` and `DOCKET -L DIR export --format jsonl`
 *    through the CLI (and, with --before, the same commands of another
 *    build, alternated round by round on the same ledger): CPU seconds of
 *    the child (user + system, wait4), events per CPU-second, and events
 *    per second of wall (both hash on a second thread: issue 34), the
 *    fastest round of each; the ratios of the two. The first round's
 *    exports are kept beside the ledger and compared: one line with a hash
 *    per event, and (--before) the same bytes from both binaries.
 * 2. The floor, in this process on the same ledger: what every verify must
 *    do per event whatever its method, one cumulative pass each, CPU time:
 *      read     find and decompress every segment (each once)
 *      + chain  h[n] = SHA-256(h[n-1] || be64(n) || payload)
 *      + tree   the RFC 6962 leaf SHA-256(0x00 || payload) and the nodes it
 *               completes, compared with the stored tree
 *      + decode protobuf-c unpack of every event (into an arena)
 *    What verify costs above the last line is the state machine and the
 *    projections (rebuild and comparison).
 *
 * Without --ledger a ledger of generated sessions (gen_mix.c) is made in a
 * scratch directory (--quick: 5,000 events; else 200,000); --make N first
 * makes one of N events at --ledger DIR (a new directory), kept for later runs. --quick (plain
 * `meson test`) checks only that verify and export pass, export writes a
 * line per event and every pass reads every event; nothing about speed is
 * asserted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "docket/ledger.h"
#include "gen_mix.h"
#include "ledger/ledger_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"


typedef enum stage { READ, CHAIN, TREE, DECODE, STAGES } stage;
static const char *const stage_names[STAGES] = { "read", "+ chain", "+ tree", "+ decode" };

/* The commands measured through the CLI, each the fastest round. */
typedef enum command { VERIFY, EXPORT, COMMANDS } command;
static const char *const command_names[COMMANDS] = { "verify", "export" };

typedef struct best {
	double cpu, wall;  /* seconds; 0: no round yet */
} best;

/* Run `DOCKET -L DIR verify` or `... export --format jsonl` (its stdout
 * into `out`, else /dev/null): 0 and the child's CPU seconds (user +
 * system, wait4) and wall seconds kept in *b when faster, -1 if it fails. */
static int run_command(best *b, const char *docket, const char *dir, command c, const char *out)
{
	char *argv[] = { (char *)docket, "-L", (char *)dir, "verify", NULL, NULL, NULL };
	struct rusage ru;
	int status, fd;
	double start = bench_now_s(), cpu, wall;
	pid_t pid;

	if (c == EXPORT) {
		argv[3] = "export";
		argv[4] = "--format";
		argv[5] = "jsonl";
	}
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		if ((fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 || dup2(fd, 1) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		bench_fail(command_names[c], docket);
		return -1;
	}
	wall = bench_now_s() - start;
	cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	      (double)ru.ru_stime.tv_usec / 1e6;
	if (b->cpu == 0 || cpu < b->cpu)
		b->cpu = cpu;
	if (b->wall == 0 || wall < b->wall)
		b->wall = wall;
	return 0;
}

/* The export's lines: one per event, each a JSON object with a hash. */
static void check_export(const char *path, uint64_t events)
{
	char line[1 << 16];
	uint64_t n = 0, bad = 0;
	FILE *fp = fopen(path, "r");

	while (fp && fgets(line, sizeof(line), fp)) {
		if (strchr(line, '\n')) {
			n++;
			bad += line[0] != '{' || !strstr(line, "\"hash\":\"");
		}
	}
	if (fp)
		fclose(fp);
	if (n != events || bad)
		bench_fail("export", "not one line with a hash per event");
}

/* Whether two files hold the same bytes. */
static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
	int ca = 0, cb = 1;

	if (fa && fb)
		do {
			ca = getc(fa);
			cb = getc(fb);
		} while (ca == cb && ca != EOF);
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return ca == cb;
}

/* One pass over events 1..last doing the work up to `upto`. */
static int floor_pass(docket_ledger *l, uint64_t last, stage upto)
{
	uint8_t head[LEDGER_HASH_LEN] = { 0 };
	merkle_check *mc = NULL;
	docket_arena arena;
	ProtobufCAllocator pb;
	ledger_reader r;
	MDB_txn *txn = NULL;
	int error;

	if ((error = docket_arena_init(&arena, (size_t)64 << 10)) < 0)
		return error;
	docket_arena_pb(&pb, &arena);
	reader_init(&r, l, NULL);
	r.scan = 1;
	if ((error = merkle_check_new(&mc, l)) < 0)
		goto cleanup;
	for (uint64_t seq = 1; seq <= last && error == 0; seq++) {
		const uint8_t *p;
		size_t len;
		docket_event *ev = NULL;

		/* a fresh read transaction per 16,384 events, as verify's chunks */
		if (seq % 16384 == 1) {
			if (txn)
				store_txn_abort(l, txn);
			if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
				break;
			reader_set_txn(&r, txn);
			merkle_check_txn(mc, txn);
		}
		if ((error = reader_payload(&r, seq, &p, &len)) < 0)
			break;
		if (upto >= CHAIN && (error = chain_next(head, head, seq, p, len)) < 0)
			break;
		if (upto >= TREE && (error = merkle_check_leaf(mc, p, len)) < 0)
			break;
		if (upto >= DECODE && (error = event_unpack_in(&ev, &pb, p, len)) == 0)
			docket__v1__event__free_unpacked(ev, &pb);
	}
cleanup:
	merkle_check_free(mc);
	reader_dispose(&r);
	if (txn)
		store_txn_abort(l, txn);
	docket_arena_dispose(&arena);
	return error;
}

static int measure_floor(const char *dir, uint64_t events, double verify_cpu)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	double prev = 0;
	int error;

	oo.flags = DOCKET_OPEN_READONLY;
	if ((error = docket_ledger_open(&l, dir, &oo)) < 0) {
		bench_docket_fail("open the ledger");
		return error;
	}
	printf("floor (this process, CPU time per event, cumulative):\n");
	for (stage s = READ; s < STAGES && error == 0; s++) {
		uint64_t t0 = bench_cpu_ns();
		double cpu;

		if ((error = floor_pass(l, events, s)) < 0) {
			bench_docket_fail(stage_names[s]);
			break;
		}
		cpu = (double)(bench_cpu_ns() - t0) / 1e9;
		printf("  %-9s %6.3f us/event (+%.3f)  %10.0f events/s/core\n", stage_names[s], cpu * 1e6 / (double)events,
		       (cpu - prev) * 1e6 / (double)events, (double)events / cpu);
		if (s == STAGES - 1 && verify_cpu > 0)
			printf("  verify    %6.3f us/event (+%.3f: state machine, projections)\n",
			       verify_cpu * 1e6 / (double)events, (verify_cpu - cpu) * 1e6 / (double)events);
		prev = cpu;
	}
	docket_ledger_free(l);
	return error;
}

static int make_ledger(const char *dir, size_t want)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_buf text = DOCKET_BUF_INIT;
	docket_ledger *l = NULL;
	int error;

	oo.flags = DOCKET_OPEN_CREATE;
	if ((error = docket_ledger_open(&l, dir, &oo)) < 0 || (error = gen_mix(&text, want, 7, NULL)) < 0)
		goto cleanup;
	error = gen_mix_append(l, text.ptr);
cleanup:
	if (error < 0)
		bench_docket_fail("make the ledger");
	docket_buf_dispose(&text);
	docket_ledger_free(l);
	return error;
}

static int ledger_events(const char *dir, uint64_t *events)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	docket_ledger_info info;
	int error;

	oo.flags = DOCKET_OPEN_READONLY;
	if ((error = docket_ledger_open(&l, dir, &oo)) == 0 && (error = docket_ledger_info_get(l, &info)) == 0)
		*events = info.events;
	else
		bench_docket_fail("read the ledger");
	docket_ledger_free(l);
	return error;
}

static void print_best(command c, const char *name, const best *b, uint64_t events)
{
	printf("%-6s %-9s %7.2f s CPU %10.0f events/s/core %6.3f us/event; wall %7.2f s %10.0f events/s\n",
	       command_names[c], name, b->cpu, (double)events / b->cpu, b->cpu * 1e6 / (double)events, b->wall,
	       (double)events / b->wall);
}

int main(int argc, char **argv)
{
	const char *docket, *baseline = NULL, *reuse = NULL, *tmp = getenv("TMPDIR");
	best now[COMMANDS] = { { 0, 0 } }, base[COMMANDS] = { { 0, 0 } };
	uint64_t events = 0;
	int quick = 0, rounds = 3;
	long make = 0;
	char dir[4096], out_now[4200], out_base[4200];

	bench_init("bench_verify");
	if (argc < 2) {
		fprintf(stderr, "usage: bench_verify DOCKET [--before|--baseline DOCKET] [--ledger DIR [--make N]] "
				"[--rounds N] [--quick]\n");
		return 2;
	}
	docket = argv[1];
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if ((strcmp(argv[i], "--baseline") == 0 || strcmp(argv[i], "--before") == 0) && i + 1 < argc)
			baseline = argv[++i];
		else if (strcmp(argv[i], "--ledger") == 0 && i + 1 < argc)
			reuse = argv[++i];
		else if (strcmp(argv[i], "--make") == 0 && i + 1 < argc)
			make = atol(argv[++i]);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
		else {
			fprintf(stderr, "bench_verify: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (reuse) {
		snprintf(dir, sizeof(dir), "%s", reuse);
		if (make > 0 && make_ledger(dir, (size_t)make) < 0)
			return 1;
	} else {
		snprintf(dir, sizeof(dir), "%s/docket-bench-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir) || make_ledger(dir, quick ? 5000 : 200000) < 0)
			return 1;
	}
	if (ledger_events(dir, &events) < 0)
		return 1;
	snprintf(out_now, sizeof(out_now), "%s.export-now.jsonl", dir);
	snprintf(out_base, sizeof(out_base), "%s.export-before.jsonl", dir);
	printf("ledger %s: %llu events; machine: %ld cores online, shared: compare the ratios\n", dir,
	       (unsigned long long)events, sysconf(_SC_NPROCESSORS_ONLN));
	/* each command of both binaries alternated, round by round */
	for (int round = 0; round < (quick ? 1 : rounds) && !bench_failures(); round++)
		for (command c = VERIFY; c < COMMANDS; c++) {
			const char *o = c == EXPORT && round == 0 ? out_now : NULL;

			if (run_command(&now[c], docket, dir, c, o) < 0 ||
			    (baseline && run_command(&base[c], baseline, dir, c, o ? out_base : NULL) < 0))
				break;
		}
	if (!bench_failures()) {
		check_export(out_now, events);
		if (baseline && !same_file(out_now, out_base))
			bench_fail("export", "the two binaries' JSONL differ");
	}
	if (!bench_failures()) {
		for (command c = VERIFY; c < COMMANDS; c++) {
			print_best(c, "", &now[c], events);
			if (!baseline)
				continue;
			print_best(c, "before", &base[c], events);
			printf("%-6s ratio: %.2fx the before binary's events/s/core, %.2fx its events/s of wall "
			       "(fastest round of each)\n", command_names[c], base[c].cpu / now[c].cpu,
			       base[c].wall / now[c].wall);
		}
		if (baseline)
			printf("export: the same bytes from both binaries (compared)\n");
		(void)measure_floor(dir, events, now[VERIFY].cpu);
	}
	unlink(out_now);
	unlink(out_base);
	if (!reuse)
		bench_remove_tree(dir);
	if (bench_failures())
		return 1;
	bench_print_result(json_pack("{s:s, s:I, s:f, s:f, s:f, s:f}", "bench", "verify", "events", (json_int_t)events,
				     "events_per_core_s", (double)events / now[VERIFY].cpu,
				     "baseline_events_per_core_s",
				     base[VERIFY].cpu > 0 ? (double)events / base[VERIFY].cpu : 0.0,
				     "export_events_per_core_s", (double)events / now[EXPORT].cpu,
				     "baseline_export_events_per_core_s",
				     base[EXPORT].cpu > 0 ? (double)events / base[EXPORT].cpu : 0.0));
	return 0;
}
