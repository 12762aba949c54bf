/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_import.c: import throughput (issue 6).
 *
 * Imports the largest transcript of ../shared/corpus (both formats are
 * looked at; the format is taken from the directory) into a fresh ledger,
 * several times, and prints the throughput in MB/s of input (best and
 * median), with the events written per second. The goal is >= 50 MB/s.
 * The whole import is timed: reading, parsing, mapping, the ledger's
 * validation, compression, chaining and the durable commits.
 *
 *   bench_import [--quick] [--runs N] [FORMAT FILE]
 *
 * --quick (the test under plain `meson test`) runs once and checks only that
 * the import succeeded and verifies. Exit 77 (skipped) when no corpus is found.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "docket/import.h"
#include "docket/ledger.h"
#include "util/alloc.h"

#define RUNS 7

/* The largest *.jsonl of ROOT/../shared/corpus/{codex,claude}. */
static int largest(char *path, size_t n, docket_import_format *fmt)
{
	static const char *const subs[] = { "codex", "claude" };
	const char *src = getenv("DOCKET_SOURCE_ROOT");
	off_t best = -1;
	size_t i;

	for (i = 0; i < 2; i++) {
		char dir[2048], file[2400];
		struct dirent *e;
		struct stat st;
		DIR *d;

		snprintf(dir, sizeof(dir), "%s/../shared/corpus/%s", src ? src : ".", subs[i]);
		if (!(d = opendir(dir)))
			continue;
		while ((e = readdir(d))) {
			if (!strstr(e->d_name, ".jsonl"))
				continue;
			snprintf(file, sizeof(file), "%s/%s", dir, e->d_name);
			if (stat(file, &st) == 0 && st.st_size > best) {
				best = st.st_size;
				snprintf(path, n, "%s", file);
				*fmt = i == 0 ? DOCKET_IMPORT_CODEX : DOCKET_IMPORT_CLAUDE;
			}
		}
		closedir(d);
	}
	return best >= 0 ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One import into a fresh ledger; seconds, or < 0 on failure. */
static double one_run(docket_import_format fmt, const char *file, int check, docket_import_stats *s)
{
	char dir[] = "/tmp/docket-bench-import.XXXXXX", cmd[256];
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	double t0, t;
	int rc;

	if (!mkdtemp(dir))
		return -1;
	oo.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&l, dir, &oo) != 0)
		return -1;
	memset(s, 0, sizeof(*s));
	t0 = bench_now_s();
	rc = docket_import_file(l, fmt, file, NULL, s);
	t = bench_now_s() - t0;
	if (rc != 0) {
		fprintf(stderr, "bench_import: %s\n", docket_error_last()->message);
		t = -1;
	}
	if (rc == 0 && check) {
		docket_verify_report rep;

		if (docket_ledger_verify(l, &rep) != 0 || !rep.ok) {
			fprintf(stderr, "bench_import: verify failed: %s\n", rep.problem);
			t = -1;
		}
	}
	docket_ledger_free(l);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_import: could not remove %s\n", dir);
	return t;
}

int main(int argc, char **argv)
{
	docket_import_format fmt = DOCKET_IMPORT_CODEX;
	docket_import_stats s;
	char file[4096];
	double times[64], mb;
	int quick = 0, runs = RUNS, have_file = 0, i;
	struct stat st;

	docket_alloc_install_json();
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (i + 1 < argc && docket_import_format_parse(&fmt, argv[i]) == 0 && (have_file = 1))
			snprintf(file, sizeof(file), "%s", argv[++i]);
		else {
			fprintf(stderr, "usage: bench_import [--quick] [--runs N] [FORMAT FILE]\n");
			return 2;
		}
	}
	if (!have_file && largest(file, sizeof(file), &fmt) < 0) {
		printf("bench_import: no corpus at ../shared/corpus: skipped\n");
		return 77;
	}
	if (runs < 1 || runs > 64)
		runs = RUNS;
	if (quick)
		runs = 1;
	if (stat(file, &st) != 0) {
		fprintf(stderr, "bench_import: %s: not found\n", file);
		return 2;
	}
	mb = (double)st.st_size / 1e6;
	for (i = 0; i < runs; i++)
		if ((times[i] = one_run(fmt, file, quick || i == 0, &s)) < 0)
			return 1;
	qsort(times, (size_t)runs, sizeof(times[0]), cmp_double);
	printf("bench_import: %s (%s, %.2f MB, %llu lines, %llu calls, %llu events)\n", file,
	       docket_import_format_name(fmt), mb, (unsigned long long)s.lines,
	       (unsigned long long)s.calls, (unsigned long long)s.appended);
	printf("  best   %7.1f MB/s  (%.1f ms, %.0f events/s)\n", mb / times[0], times[0] * 1e3,
	       (double)s.appended / times[0]);
	printf("  median %7.1f MB/s  (%.1f ms over %d runs)\n", mb / times[runs / 2],
	       times[runs / 2] * 1e3, runs);
	return 0;
}
