/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_util.c: the helpers every benchmark had a copy of (see bench_util.h).
 *
 * Scratch directories are removed only at the end (bench_tempdirs_dispose):
 * deleting tens of MB between runs (with online discard) would stall the
 * next run's fsyncs.
 */
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "docket/ledger.h"

static const char *prog = "bench";
static int failures;
static char **doomed;
static size_t ndoomed;

void bench_init(const char *name)
{
	prog = name;
}

int bench_common_flag(const char *arg, int *quick, int *keep)
{
	if (strcmp(arg, "--quick") == 0)
		*quick = 1;
	else if (strcmp(arg, "--keep") == 0)
		*keep = 1;
	else
		return 0;
	return 1;
}

/* ---- clocks ---- */

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t bench_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

uint64_t bench_cpu_sys_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000ull;
}

/* ---- failures ---- */

void bench_fail(const char *what, const char *detail)
{
	fprintf(stderr, "%s: FAIL: %s%s%s\n", prog, what, detail ? ": " : "", detail ? detail : "");
	failures++;
}

void bench_docket_fail(const char *what)
{
	bench_fail(what, docket_error_last()->message);
}

int bench_failures(void)
{
	return failures;
}

void bench_print_result(json_t *out)
{
	char *line;

	json_object_set_new(out, "checks_ok", json_boolean(failures == 0));
	line = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	printf("%s\n", line ? line : "{}");
	free(line);
	json_decref(out);
}

/* ---- files and scratch directories ---- */

char *bench_path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + lb + 2);

	if (!p)
		return NULL;
	memcpy(p, a, la);
	p[la] = '/';
	memcpy(p + la + 1, b, lb + 1);
	return p;
}

uint64_t bench_file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int bench_remove_tree(const char *dir)
{
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

void bench_settle_disk(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd >= 0) {
		syncfs(fd);
		close(fd);
	}
}

char *bench_tempdir(const char *base, const char *pattern)
{
	char *t = bench_path_join(base, pattern);
	char **d;

	if (t && !mkdtemp(t)) {
		fprintf(stderr, "%s: cannot create a directory in %s: %s\n", prog, base, strerror(errno));
		free(t);
		return NULL;
	}
	if (t && (d = realloc(doomed, (ndoomed + 1) * sizeof(*d)))) {
		doomed = d;
		doomed[ndoomed++] = t;
		return t;
	}
	free(t);
	return NULL;
}

void bench_tempdirs_dispose(int keep)
{
	for (size_t i = 0; i < ndoomed; i++) {
		if (keep)
			fprintf(stderr, "%s: kept %s\n", prog, doomed[i]);
		else if (bench_remove_tree(doomed[i]) < 0)
			fprintf(stderr, "%s: warning: cannot remove %s: %s\n", prog, doomed[i], strerror(errno));
		free(doomed[i]);
	}
	free(doomed);
	doomed = NULL;
	ndoomed = 0;
}

/* ---- latencies ---- */

void bench_lat_push(bench_lat *l, uint64_t ns)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		uint64_t *p = realloc(l->v, cap * sizeof(*p));

		if (!p)
			return;
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double bench_lat_ms(bench_lat *l, unsigned pct)
{
	if (l->n == 0)
		return 0;
	qsort(l->v, l->n, sizeof(l->v[0]), cmp_u64);
	return (double)l->v[(l->n - 1) * pct / 100] / 1e6;
}

void bench_lat_dispose(bench_lat *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
