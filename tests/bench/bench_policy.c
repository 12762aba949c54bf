/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_policy.c: policy decisions per second on one core, for a 200-rule
 * policy (150 command prefix rules, 50 tool rules) over a realistic mix of
 * calls: short and long `bash -lc` scripts, unsplittable scripts, plain
 * argv, reads and writes, network and MCP calls. The goal is >= 1M/s.
 *
 *   bench_policy [--quick] [--seconds N] [--count N [--only engine|enforced]]
 *
 * --count runs exactly N decisions a loop and --only one loop: under a
 * loaded machine, `perf stat -e instructions:u` of the two (minus a
 * --count 0 run) gives the enforced/engine cost ratio that timing cannot.
 *
 * --quick (run by plain `meson test`) checks that every call evaluates and
 * that a warm result does not allocate; it asserts nothing about speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docket/policy.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

static const char *const programs[] = {
	"git", "npm", "cargo", "make", "python3", "go", "docker", "kubectl", "terraform", "yarn",
	"pnpm", "pip", "uv", "rustc", "gcc", "cmake", "ninja", "meson", "pytest", "node",
	"bun", "deno", "gh", "jq", "curl",
};

static const char *const subs[] = { "status", "build", "test", "run", "install", "push" };

static int build_policy(docket_policy **out)
{
	docket_buf y = DOCKET_BUF_INIT;
	int error = docket_buf_puts(&y, "version: 1\nsandbox: workspace_write\napproval: on_request\ncommands:\n");
	size_t np = sizeof(programs) / sizeof(programs[0]), ns = sizeof(subs) / sizeof(subs[0]);

	for (size_t i = 0; i < 150 && error == 0; i++)
		error = docket_buf_printf(&y, "  - pattern: [%s, %s%s]\n    decision: %s\n", programs[i % np],
					  subs[(i / np) % ns], i % 7 == 0 ? ", --force" : "",
					  i % 5 == 0 ? "deny" : i % 3 == 0 ? "ask" : "allow");
	if (error == 0)
		error = docket_buf_puts(&y, "tools:\n  deny:\n");
	for (size_t i = 0; i < 25 && error == 0; i++)
		error = docket_buf_printf(&y, "    - \"Read(./secret%zu/**)\"\n", i);
	if (error == 0)
		error = docket_buf_puts(&y, "  ask:\n");
	for (size_t i = 0; i < 25 && error == 0; i++)
		error = docket_buf_printf(&y, "    - \"Bash(%s %s *)\"\n", programs[i % np], i % 2 ? "deploy" : "publish");
	if (error == 0)
		error = docket_policy_load_buffer(out, DOCKET_POLICY_DOCKET, "bench", y.ptr, y.len);
	docket_buf_dispose(&y);
	return error;
}

static const char *const calls[] = {
	"{\"tool\":\"shell\",\"args\":{\"command\":[\"bash\",\"-lc\",\"git status\"]}}",
	"{\"tool\":\"shell\",\"args\":{\"command\":[\"bash\",\"-lc\",\"npm run build && npm test -- --coverage | tee out.log; git status\"]}}",
	"{\"tool\":\"shell\",\"args\":{\"command\":[\"bash\",\"-lc\",\"cargo build --release && cargo test --all && git add -A && git commit -m 'bench: a long message with spaces' && git push origin main && echo done || echo failed\"]}}",
	"{\"tool\":\"shell\",\"args\":{\"command\":[\"bash\",\"-lc\",\"cd /home/u/app && make -j8 && ninja -C build && meson test -C build && python3 -m pytest -q tests/unit tests/integration && docker build -t app:latest . && kubectl apply -f k8s/ && terraform plan -out plan.bin\"]}}",
	"{\"tool\":\"shell\",\"args\":{\"command\":[\"bash\",\"-lc\",\"echo $(git rev-parse HEAD) > rev.txt\"]}}",
	"{\"tool\":\"shell\",\"args\":{\"command\":[\"ls\",\"-la\",\"/home/u/app\"]}}",
	"{\"tool\":\"shell\",\"args\":{\"command\":[\"/usr/bin/git\",\"push\",\"--force\"]}}",
	"{\"tool\":\"shell\",\"args\":{\"command\":[\"rm\",\"-rf\",\"build\"]}}",
	"{\"tool\":\"read_file\",\"args\":{\"path\":\"src/main.c\"}}",
	"{\"tool\":\"read_file\",\"args\":{\"path\":\"secret3/key.pem\"}}",
	"{\"tool\":\"write_file\",\"args\":{\"path\":\"src/../src/main.c\"}}",
	"{\"tool\":\"apply_patch\",\"args\":{\"changes\":[{\"path\":\"a.c\",\"op\":\"update\"},{\"path\":\".git/config\",\"op\":\"update\"}]}}",
	"{\"tool\":\"network\",\"args\":{\"url\":\"https://api.github.com/repos\"}}",
	"{\"tool\":\"mcp\",\"args\":{\"server\":\"github\",\"tool\":\"list_issues\",\"arguments\":{}}}",
	"{\"tool\":\"install_packages\",\"args\":{\"ecosystem\":\"npm\",\"packages\":[\"left-pad@1.3.0\"]}}",
	"{\"tool\":\"shell\",\"args\":{\"command\":[\"zsh\",\"-lc\",\"yarn install --frozen-lockfile && yarn lint && yarn test && yarn build\"]}}",
};

#define NCALLS (sizeof(calls) / sizeof(calls[0]))

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	docket_policy *p = NULL;
	docket_policy_call *c[NCALLS] = { 0 };
	docket_policy_context *ctx = NULL;
	docket_policy_result *r = NULL;
	json_t *cj;
	int quick = 0, counts[4] = { 0 };
	double seconds = 3.0, t0, t1;
	unsigned long n = 0, fixed = 0;
	const char *only = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
			fixed = strtoul(argv[++i], NULL, 10);   /* exactly this many decisions a loop (perf stat) */
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = argv[++i];                        /* "engine" or "enforced": one loop */
	}
	if (build_policy(&p) < 0) {
		fprintf(stderr, "bench_policy: %s\n", docket_error_last()->message);
		return 1;
	}
	cj = json_loads("{\"platform\":\"linux\",\"cwd\":\"/home/u/app\",\"workspace_roots\":[\"/home/u/app\"],"
			"\"env\":{\"HOME\":\"/home/u\",\"TMPDIR\":\"/tmp\"}}", 0, NULL);
	if (!cj || docket_policy_context_from_json(&ctx, cj) < 0 || docket_policy_result_new(&r) < 0)
		return 1;
	json_decref(cj);
	for (size_t i = 0; i < NCALLS; i++) {
		json_t *j = json_loads(calls[i], 0, NULL);

		if (!j || docket_policy_call_from_json(&c[i], j) < 0) {
			fprintf(stderr, "bench_policy: call %zu: %s\n", i, docket_error_last()->message);
			return 1;
		}
		json_decref(j);
	}
	/* warm up, then check that a warm result does not allocate */
	for (size_t i = 0; i < NCALLS; i++) {
		if (docket_policy_eval(r, p, c[i], ctx) < 0)
			return 1;
		counts[docket_policy_result_verdict(r)]++;
	}
	docket_alloc_fail_after(0);
	for (size_t i = 0; i < NCALLS; i++)
		if (docket_policy_eval(r, p, c[i], ctx) < 0) {
			docket_alloc_fail_reset();
			fprintf(stderr, "bench_policy: call %zu allocated on a warm result\n", i);
			return 1;
		}
	docket_alloc_fail_reset();
	printf("policy: %zu rules; calls: %zu (allowed %d, approval_required %d, denied %d, unsupported %d)\n",
	       docket_policy_rule_count(p), NCALLS, counts[0], counts[1], counts[2], counts[3]);
	if (quick)
		seconds = 0.05;
	t0 = now();
	do {
		for (int k = 0; k < 1000 && (!fixed || n < fixed) && (!only || strcmp(only, "engine") == 0); k++, n++)
			if (docket_policy_eval(r, p, c[n % NCALLS], ctx) < 0)
				return 1;
		t1 = now();
	} while (fixed ? n < fixed && (!only || strcmp(only, "engine") == 0) : t1 - t0 < seconds);
	printf("decisions: %lu in %.2fs = %.0f decisions/s (one core)\n", n, t1 - t0, (double)n / (t1 - t0));
	{
		/* the enforced verdict (issue 26) over the same calls: engine + shell analysis */
		double engine_rate = (double)n / (t1 - t0), t2, t3;
		unsigned long m = 0;

		for (size_t i = 0; i < NCALLS; i++)
			if (docket_policy_eval_enforced(r, p, c[i], ctx) < 0)
				return 1;
		docket_alloc_fail_after(0);
		for (size_t i = 0; i < NCALLS; i++)
			if (docket_policy_eval_enforced(r, p, c[i], ctx) < 0) {
				docket_alloc_fail_reset();
				fprintf(stderr, "bench_policy: call %zu allocated on a warm result (enforced)\n", i);
				return 1;
			}
		docket_alloc_fail_reset();
		t2 = now();
		do {
			for (int k = 0; k < 1000 && (!fixed || m < fixed) && (!only || strcmp(only, "enforced") == 0);
			     k++, m++)
				if (docket_policy_eval_enforced(r, p, c[m % NCALLS], ctx) < 0)
					return 1;
			t3 = now();
		} while (fixed ? m < fixed && (!only || strcmp(only, "enforced") == 0) : t3 - t2 < seconds);
		printf("enforced:  %lu in %.2fs = %.0f decisions/s (one core), %.2fx the engine's rate\n", m, t3 - t2,
		       (double)m / (t3 - t2), engine_rate > 0 ? ((double)m / (t3 - t2)) / engine_rate : 0.0);
	}
	for (size_t i = 0; i < NCALLS; i++)
		docket_policy_call_free(c[i]);
	docket_policy_result_free(r);
	docket_policy_context_free(ctx);
	docket_policy_free(p);
	return 0;
}
