/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_util.h: what the benchmarks share: clocks, failure counting,
 * scratch directories removed at exit, and commit/invocation latencies with
 * their percentiles.
 *
 * Messages on stderr start with the name given to bench_init().
 */
#ifndef DOCKET_BENCH_UTIL_H
#define DOCKET_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Latencies in ns, in the order they were taken (sorted by bench_lat_ms). */
typedef struct bench_lat {
	uint64_t *v;
	size_t n, cap;
} bench_lat;

/* The program name that prefixes every message. */
void bench_init(const char *name);

/* --quick and --keep, which every benchmark with scratch stores takes: sets
 * the flag and returns 1 if arg is one of them, else 0. */
int bench_common_flag(const char *arg, int *quick, int *keep);

/* ---- clocks ---- */

uint64_t bench_now_ns(void);          /* CLOCK_MONOTONIC */
double bench_now_s(void);             /* CLOCK_MONOTONIC, in seconds */
uint64_t bench_cpu_ns(void);          /* user + system time of this process */
uint64_t bench_cpu_sys_ns(void);      /* its system time alone */

/* ---- failures: counted, never fatal ---- */

void bench_fail(const char *what, const char *detail);
void bench_docket_fail(const char *what);   /* detail: docket_error_last() */
int bench_failures(void);
/* Add "checks_ok" (no failures) to out, print it as one JSON line and free it. */
void bench_print_result(json_t *out);

/* ---- files and scratch directories ---- */

char *bench_path_join(const char *a, const char *b);   /* malloc'd a/b, or NULL */
uint64_t bench_file_size(const char *path);           /* 0 if it cannot be stat'ed */
int bench_remove_tree(const char *dir);                /* rm -rf, silent; 0 or -1 */
/* syncfs the file system of dir, so that one run's writeback does not land
 * in the next run's fsyncs. */
void bench_settle_disk(const char *dir);
/* mkdtemp(base/pattern), remembered for bench_tempdirs_dispose; NULL (and a
 * message) on failure. The directory belongs to this module. */
char *bench_tempdir(const char *base, const char *pattern);
/* Remove every directory bench_tempdir made, or with keep name them on stderr. */
void bench_tempdirs_dispose(int keep);

/* ---- latencies ---- */

void bench_lat_push(bench_lat *l, uint64_t ns);   /* drops the sample when out of memory */
double bench_lat_ms(bench_lat *l, unsigned pct);  /* percentile 0..100, in ms; 0 if empty */
void bench_lat_dispose(bench_lat *l);

#endif
