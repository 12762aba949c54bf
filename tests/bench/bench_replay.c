/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_replay.c: replay end to end (issue 5): a ledger of realistic
 * sessions (gen_mix.c: shell commands, patches, reads, approvals, outputs
 * with a long tail of multi-KB logs) holding N tool intents is replayed
 * against a 60-rule docket policy: read every frame, decompress, decode,
 * evaluate, classify and write the report (to /dev/null). The goal is
 * >= 1M intents/s on one core with memory bounded independently of the
 * ledger's size.
 *
 *   bench_replay [--quick] [--intents N] [--keep DIR]   (--keep: a new directory, kept)
 *   bench_replay --replay DIR     (internal: the measured child process)
 *
 * The ledger is written first (not timed), in chunks, so the generator never
 * holds the whole stream. The replay then runs in a fresh process (exec of
 * this binary with --replay) so that its peak RSS is its own: VmHWM counts
 * the ledger pages LMDB maps in (file-backed, shared with the page cache),
 * RssAnon the process's own heap. --quick (plain `meson test`) checks that
 * every intent is replayed and that the replay's heap stays small; it asserts
 * nothing about speed.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "docket/ledger.h"
#include "docket/replay.h"
#include "gen_mix.h"
#include "util/buf.h"
#include "util/error.h"

#define CHUNK_EVENTS 60000
#define BATCH 4096

static const char *const programs[] = {
	"git", "npm", "cargo", "make", "python3", "go", "docker", "kubectl", "pytest", "node",
	"yarn", "pnpm", "pip", "gh", "jq",
};
static const char *const subs[] = { "status", "build", "test", "push" };

static int build_policy(docket_policy **out)
{
	docket_buf y = DOCKET_BUF_INIT;
	int error = docket_buf_puts(&y, "version: 1\nsandbox: workspace_write\napproval: on_request\ncommands:\n");

	for (size_t i = 0; i < 60 && error == 0; i++)
		error = docket_buf_printf(&y, "  - pattern: [%s, %s]\n    decision: %s\n",
					  programs[i % 15], subs[(i / 15) % 4],
					  i % 5 == 0 ? "deny" : i % 3 == 0 ? "ask" : "allow");
	if (error == 0)
		error = docket_buf_puts(&y, "  - pattern: [rm, -rf]\n    decision: deny\n"
					    "tools:\n  deny: [\"Read(./secrets/**)\"]\n  ask: [\"Edit(./migrations/**)\"]\n");
	if (error == 0)
		error = docket_policy_load_buffer(out, DOCKET_POLICY_DOCKET, "bench.yaml", y.ptr, y.len);
	docket_buf_dispose(&y);
	return error;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
	json_t *batch[BATCH];
	size_t n = 0;
	char *line, *save = NULL;
	int error;

	if ((error = gen_mix(&text, events, seed, &st)) < 0)
		return error;
	*intents += st.calls;
	for (line = strtok_r(text.ptr, "\n", &save); line && error == 0; line = strtok_r(NULL, "\n", &save)) {
		if (!(batch[n++] = json_loads(line, 0, NULL)))
			error = docket_error_set(DOCKET_EINVALID, "generated line does not parse");
		if (error == 0 && n == BATCH) {
			error = docket_ledger_append_json(l, batch, n, NULL);
			for (size_t i = 0; i < n; i++)
				json_decref(batch[i]);
			n = 0;
		}
	}
	if (error == 0 && n)
		error = docket_ledger_append_json(l, batch, n, NULL);
	for (size_t i = 0; i < n; i++)
		json_decref(batch[i]);
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
	oo.map_size = (size_t)1 << 30;
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

static long status_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0)
			v = strtol(line + strlen(key) + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* The measured part: replay the ledger at `dir` and report. */
static int replay_only(const char *dir)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_replay_report_info info = DOCKET_REPLAY_REPORT_INFO_INIT;
	docket_replay_report *r = NULL;
	docket_ledger *l = NULL;
	docket_policy *p = NULL;
	const docket_policy *ps[1];
	FILE *devnull = fopen("/dev/null", "w");
	double t0, c0, wall, cpu;
	uint64_t calls = 0;

	oo.flags = DOCKET_OPEN_READONLY;
	if (!devnull || docket_ledger_open(&l, dir, &oo) < 0 || build_policy(&p) < 0)
		return die("setup");
	ps[0] = p;
	info.policy = "bench.yaml";
	info.fail_on = DOCKET_REPLAY_FAIL_LOOSENED;
	if (docket_replay_report_new(&r, &info) < 0)
		return die("report");
	t0 = bench_now_s();
	c0 = cpu_now();
	if (docket_replay_run(l, NULL, ps, 1, NULL, docket_replay_report_add, r) < 0 ||
	    docket_replay_report_finish(r, devnull) < 0)
		return die("replay");
	wall = bench_now_s() - t0;
	cpu = cpu_now() - c0;
	for (int c = 0; c < 4; c++)
		calls += docket_replay_report_count(r, (docket_replay_class)c);
	printf("replayed %llu intents in %.3fs wall, %.3fs CPU = %.0f intents/s (wall), %.0f intents/s (CPU)\n",
	       (unsigned long long)calls, wall, cpu, (double)calls / wall, (double)calls / cpu);
	printf("classes: unchanged %llu, tightened %llu, loosened %llu (human denied %llu), undecided %llu\n",
	       (unsigned long long)docket_replay_report_count(r, DOCKET_REPLAY_UNCHANGED),
	       (unsigned long long)docket_replay_report_count(r, DOCKET_REPLAY_TIGHTENED),
	       (unsigned long long)docket_replay_report_count(r, DOCKET_REPLAY_LOOSENED),
	       (unsigned long long)docket_replay_report_human_denied(r),
	       (unsigned long long)docket_replay_report_count(r, DOCKET_REPLAY_UNDECIDED));
	printf("memory: peak RSS %ld KiB (VmHWM, includes mapped ledger pages), heap RssAnon %ld KiB\n",
	       status_kb("VmHWM:"), status_kb("RssAnon:"));
	printf("RESULT intents=%llu rss_anon_kb=%ld\n", (unsigned long long)calls, status_kb("RssAnon:"));
	docket_replay_report_free(r);
	docket_policy_free(p);
	docket_ledger_free(l);
	fclose(devnull);
	return 0;
}

/* Run `self --replay dir` and check what it printed. */
static int run_child(const char *self, const char *dir, size_t intents, int quick)
{
	char cmd[8400], line[512];
	unsigned long long got = 0;
	long anon = -1;
	FILE *p;
	int rc;

	snprintf(cmd, sizeof(cmd), "'%s' --replay '%s'", self, dir);
	if (!(p = popen(cmd, "r")))
		return 1;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "RESULT intents=%llu rss_anon_kb=%ld", &got, &anon) == 2)
			continue;
		fputs(line, stdout);
	}
	rc = pclose(p);
	if (rc != 0 || got != intents) {
		fprintf(stderr, "bench_replay: FAIL: replayed %llu of %zu intents (status %d)\n", got, intents, rc);
		return 1;
	}
#if defined(__SANITIZE_ADDRESS__)
	quick = 0;   /* ASan's shadow memory and quarantine are not the replay's */
#endif
	if (quick && anon > 64 * 1024) {
		fprintf(stderr, "bench_replay: FAIL: replay heap %ld KiB\n", anon);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t want = 1000000, intents = 0, events = 0;
	const char *keep = NULL, *tmp = getenv("TMPDIR");
	char dir[4096], self[4096];
	ssize_t n;
	int quick = 0, rc;
	double t0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--replay") == 0 && i + 1 < argc)
			return replay_only(argv[i + 1]);
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--intents") == 0 && i + 1 < argc)
			want = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
			keep = argv[++i];
		else {
			fprintf(stderr, "usage: bench_replay [--quick] [--intents N] [--keep DIR]\n");
			return 2;
		}
	}
	if (quick)
		want = 5000;
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return 1;
	self[n] = '\0';
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
	printf("ledger: %zu events, %zu tool intents (written in %.1fs, not timed)\n", events, intents, bench_now_s() - t0);
	fflush(stdout);
	rc = run_child(self, dir, intents, quick);
	if (!keep)
		bench_remove_tree(dir);
	return rc;
}
