/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bypass_run: the bypass property, in process. For --count scripts from
 * the grammar (bypass_gen.c), under the curl/rm deny policy in all three
 * formats, as a Codex shell call (bash -lc) and as a Claude Code Bash call
 * (bash -c), in the context where the engine allows the most (approval
 * never, a sandbox the client really applies, Claude's bypassPermissions):
 * the enforced verdict must never be `allowed`. Prints the counts; exit 1
 * with the script on the first violation.
 *
 *   bypass_run [--count N] [--seed S] [--emit FILE [--emit-count M]] [--policies DIR]
 *
 * --emit writes M scripts as JSON strings, one a line (for the CLI and hook
 * test, bypass_cli.sh); --policies writes the three policy files into DIR.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bypass_gen.h"
#include "docket/policy.h"
#include "util/buf.h"
#include "util/error.h"

static const char *const ctx_json =
	"{\"cwd\":\"/w\",\"workspace_roots\":[\"/w\"],\"env\":{\"HOME\":\"/home/u\"},"
	"\"approval_policy\":\"never\",\"sandbox_policy\":{\"type\":\"workspace-write\"},"
	"\"client_sandbox\":true}";

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned long long count = 5000, seed = 26, emit_count = 200;
	const char *emit = NULL, *pdir = NULL;
	docket_policy *pol[3] = { NULL, NULL, NULL };
	docket_policy_context *ctx = NULL;
	docket_policy_result *res = NULL;
	size_t np, hist[4] = { 0, 0, 0, 0 };
	const bypass_policy *bp = bypass_policies(&np);
	docket_buf script = DOCKET_BUF_INIT;
	unsigned constructs = 0;
	FILE *ef = NULL;
	json_t *cj;
	int rc = 1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
			count = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--emit") == 0 && i + 1 < argc)
			emit = argv[++i];
		else if (strcmp(argv[i], "--emit-count") == 0 && i + 1 < argc)
			emit_count = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--policies") == 0 && i + 1 < argc)
			pdir = argv[++i];
		else {
			fprintf(stderr, "usage: bypass_run [--count N] [--seed S] [--emit FILE [--emit-count M]] [--policies DIR]\n");
			return 2;
		}
	}
	if (pdir) {
		for (size_t k = 0; k < np; k++)
			if (write_file(pdir, bp[k].file_name, bp[k].text) < 0) {
				perror(pdir);
				return 2;
			}
	}
	for (size_t k = 0; k < np; k++) {
		docket_policy_format f = strcmp(bp[k].format, "codex") == 0  ? DOCKET_POLICY_CODEX :
					 strcmp(bp[k].format, "claude") == 0 ? DOCKET_POLICY_CLAUDE : DOCKET_POLICY_DOCKET;

		if (docket_policy_load_buffer(&pol[k], f, bp[k].file_name, bp[k].text, strlen(bp[k].text)) < 0) {
			fprintf(stderr, "policy %s: %s\n", bp[k].format, docket_error_last()->message);
			goto done;
		}
	}
	cj = json_loads(ctx_json, 0, NULL);
	if (!cj || docket_policy_context_from_json(&ctx, cj) < 0 || docket_policy_result_new(&res) < 0) {
		json_decref(cj);
		fprintf(stderr, "setup: %s\n", docket_error_last()->message);
		goto done;
	}
	json_decref(cj);
	if (emit && !(ef = fopen(emit, "w"))) {
		perror(emit);
		goto done;
	}
	for (unsigned long long n = 0; n < count; n++) {
		bypass_gen g;

		bypass_gen_seed(&g, seed * 1000003ull + n);
		if (bypass_script(&g, &script) < 0)
			goto done;
		constructs |= g.constructs;
		if (ef && n < emit_count) {
			json_t *s = json_string(script.ptr);
			char *line = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;

			if (line)
				fprintf(ef, "%s\n", line);
			free(line);
			json_decref(s);
		}
		for (size_t k = 0; k < np; k++) {
			for (int client = 0; client < 2; client++) {
				const char *v[3] = { "bash", client ? "-c" : "-lc", script.ptr };
				json_t *args = json_pack("{s[sss]}", "command", v[0], v[1], v[2]);
				docket_policy_call *call = NULL;
				int error = args ? docket_policy_call_from_args(&call, "shell", args) : -1;

				json_decref(args);
				if (error < 0 || docket_policy_eval_enforced(res, pol[k], call, ctx) < 0) {
					fprintf(stderr, "eval: %s\n", docket_error_last()->message);
					docket_policy_call_free(call);
					goto done;
				}
				docket_policy_call_free(call);
				hist[docket_policy_result_verdict(res)]++;
				if (docket_policy_result_verdict(res) == DOCKET_VERDICT_ALLOWED) {
					fprintf(stderr, "BYPASS (%s policy, %s call, seed %llu, script %llu):\n%s\n",
						bp[k].format, client ? "claude" : "codex", seed, n, script.ptr);
					goto done;
				}
			}
		}
	}
	printf("bypass: %llu scripts x %zu policy formats x 2 call forms = %llu enforced verdicts, none allowed\n",
	       count, np, count * np * 2);
	printf("bypass: approval_required %zu, denied %zu, unsupported %zu\n", hist[1], hist[2], hist[3]);
	for (unsigned i = 0; i < BYPASS_NCONSTRUCTS; i++)
		if (!(constructs & (1u << i)) && count >= 1000) {
			fprintf(stderr, "construct never generated: %s\n", bypass_construct_name(i));
			goto done;
		}
	rc = 0;
done:
	if (ef)
		fclose(ef);
	docket_buf_dispose(&script);
	docket_policy_result_free(res);
	docket_policy_context_free(ctx);
	for (size_t k = 0; k < 3; k++)
		docket_policy_free(pol[k]);
	return rc;
}
