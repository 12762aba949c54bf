/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_verify.c: `docket verify` events/s per core (issue 15, goal >= 1M
 * with the hash work included), and where its floor is.
 *
 *   bench_verify DOCKET [--baseline DOCKET_OLD] [--ledger DIR [--make N]] [--rounds N] [--quick]
 *
 * 1. `DOCKET -L DIR verify` through the CLI (and, with --baseline, the same
 *    command of another build, interleaved round by round on the same
 *    ledger): CPU seconds of the child (user + system, wait4), events per
 *    CPU-second, and its wall seconds (verify hashes on a second thread:
 *    issue 34), the fastest round of each; the ratios of the two.
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
 * `meson test`) checks only that verify passes and every pass reads every
 * event; nothing about speed is asserted.
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

/* Run `DOCKET -L DIR verify`; its CPU seconds (and *wall, its wall
 * seconds), -1 when it fails. */
static double run_verify(const char *docket, const char *dir, double *wall)
{
	char *argv[] = { (char *)docket, "-L", (char *)dir, "verify", NULL };
	struct rusage ru;
	int status, fd;
	double start = bench_now_s();
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if ((fd = open("/dev/null", O_WRONLY)) < 0 || dup2(fd, 1) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		bench_fail("verify", docket);
		return -1;
	}
	*wall = bench_now_s() - start;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
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

static void print_verify(const char *name, double cpu, double wall, uint64_t events)
{
	printf("verify %-9s %7.2f s CPU %10.0f events/s/core %6.3f us/event; wall %7.2f s %6.3f us/event\n", name,
	       cpu, (double)events / cpu, cpu * 1e6 / (double)events, wall, wall * 1e6 / (double)events);
}

int main(int argc, char **argv)
{
	const char *docket, *baseline = NULL, *reuse = NULL, *tmp = getenv("TMPDIR");
	double now = 0, base = 0, now_wall = 0, base_wall = 0;
	uint64_t events = 0;
	int quick = 0, rounds = 3;
	long make = 0;
	char dir[4096];

	bench_init("bench_verify");
	if (argc < 2) {
		fprintf(stderr, "usage: bench_verify DOCKET [--baseline DOCKET] [--ledger DIR [--make N]] [--rounds N] [--quick]\n");
		return 2;
	}
	docket = argv[1];
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--baseline") == 0 && i + 1 < argc)
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
	printf("ledger %s: %llu events; machine: %ld cores online, shared: compare the ratios\n", dir,
	       (unsigned long long)events, sysconf(_SC_NPROCESSORS_ONLN));
	for (int round = 0; round < (quick ? 1 : rounds) && !bench_failures(); round++) {
		double wa = 0, wb = 0;
		double a = run_verify(docket, dir, &wa), b = baseline ? run_verify(baseline, dir, &wb) : 0;

		if (a > 0 && (now == 0 || a < now))
			now = a;
		if (b > 0 && (base == 0 || b < base))
			base = b;
		if (a > 0 && (now_wall == 0 || wa < now_wall))
			now_wall = wa;
		if (b > 0 && (base_wall == 0 || wb < base_wall))
			base_wall = wb;
	}
	if (!bench_failures()) {
		print_verify("", now, now_wall, events);
		if (baseline) {
			print_verify("baseline", base, base_wall, events);
			printf("ratio: %.2fx the baseline's events/s/core, %.2fx its events/s of wall "
			       "(fastest round of each)\n", base / now, base_wall / now_wall);
		}
		(void)measure_floor(dir, events, now);
	}
	if (!reuse)
		bench_remove_tree(dir);
	if (bench_failures())
		return 1;
	bench_print_result(json_pack("{s:s, s:I, s:f, s:f}", "bench", "verify", "events", (json_int_t)events,
				     "events_per_core_s", (double)events / now,
				     "baseline_events_per_core_s", base > 0 ? (double)events / base : 0.0));
	return 0;
}
