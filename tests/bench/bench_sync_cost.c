/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_sync_cost.c: what one durable write costs on this disk, by kind,
 * alternated per round so that all see the same load (issue 27, the hook's
 * latency floor; docs/performance.md):
 *
 *   append        a 200-byte O_APPEND write + fdatasync (the spool journal,
 *                 bench_hook's "fdatasync" baseline)
 *   overwrite     200 bytes rewritten in place + fdatasync
 *   dsync         200 bytes rewritten through an O_DSYNC descriptor
 *   lmdb_commit   16 KiB of pages rewritten + fdatasync, then a 120-byte
 *                 O_DSYNC write (LMDB's commit: data pages, then meta page)
 *
 *   bench_sync_cost [DIR] [--rounds N]   one JSON line: p50/p99 ms of each,
 *                                        and lmdb_commit / append
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { KINDS = 4 };

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int open_in(const char *dir, const char *name, int flags)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, flags | O_CLOEXEC, 0600);
}

/* One round: each kind once, its time into t[k]; 0 or -1 on an I/O error. */
static int round_once(double t[KINDS], int fa, int fo, int fd, unsigned i, const char *buf)
{
	double t0 = now_ms();
	int ok = write(fa, buf, 200) == 200 && fdatasync(fa) == 0;

	t[0] = now_ms() - t0;
	t0 = now_ms();
	ok = ok && pwrite(fo, buf, 200, (off_t)(i % 64) * 200) == 200 && fdatasync(fo) == 0;
	t[1] = now_ms() - t0;
	t0 = now_ms();
	ok = ok && pwrite(fd, buf, 200, 65536 + (off_t)(i % 64) * 200) == 200;
	t[2] = now_ms() - t0;
	t0 = now_ms();
	ok = ok && pwrite(fo, buf, 16384, 131072 + (off_t)(i % 16) * 16384) == 16384 && fdatasync(fo) == 0 &&
	     pwrite(fd, buf, 120, 12288) == 120;
	t[3] = now_ms() - t0;
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const char *const names[KINDS] = { "append", "overwrite", "dsync", "lmdb_commit" };
	const char *dir = "/tmp";
	unsigned n = 300;
	char buf[16384];
	double *t[KINDS], row[KINDS], p50[KINDS];
	int fa, fo, fd;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			n = (unsigned)strtoul(argv[++i], NULL, 10);
		else
			dir = argv[i];
	}
	if (n < 2)
		n = 2;
	memset(buf, 'x', sizeof(buf));
	fa = open_in(dir, "sync-cost-append", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
	fo = open_in(dir, "sync-cost-pages", O_RDWR | O_CREAT | O_TRUNC);
	for (int k = 0; fo >= 0 && k < 24; k++)
		if (write(fo, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	fd = fo >= 0 && fsync(fo) == 0 ? open_in(dir, "sync-cost-pages", O_WRONLY | O_DSYNC) : -1;
	if (fa < 0 || fo < 0 || fd < 0) {
		perror("bench_sync_cost");
		return 1;
	}
	for (int k = 0; k < KINDS; k++)
		if (!(t[k] = calloc(n, sizeof(double))))
			return 1;
	for (unsigned i = 0; i < n; i++) {
		if (round_once(row, fa, fo, fd, i, buf) < 0) {
			perror("bench_sync_cost");
			return 1;
		}
		for (int k = 0; k < KINDS; k++)
			t[k][i] = row[k];
	}
	printf("{\"rounds\":%u", n);
	for (int k = 0; k < KINDS; k++) {
		qsort(t[k], n, sizeof(double), cmp);
		p50[k] = t[k][n / 2];
		printf(",\"%s_p50_ms\":%.3f,\"%s_p99_ms\":%.3f", names[k], p50[k], names[k], t[k][n * 99 / 100]);
		free(t[k]);
	}
	printf(",\"lmdb_commit_over_append_p50\":%.2f}\n", p50[3] / (p50[0] + 1e-9));
	close(fa);
	close(fd);
	close(fo);
	return 0;
}
