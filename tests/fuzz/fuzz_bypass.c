/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_bypass.c: the bypass property of issue 26 under a fuzzer, and the
 * two new parsers of outside input (policy/shparse.c, policy/url.c).
 *
 * First byte even: the rest drives the bypass grammar (tests/bypass): the
 * script runs curl or rm, so its enforced verdict under the deny policies
 * must never be `allowed` (abort otherwise).
 * First byte odd: the rest is a raw script (analysed, classified, evaluated
 * enforced; every command's words stay inside the analysis text) and a URL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../bypass/bypass_gen.h"
#include "docket/policy.h"
#include "policy/policy.h"
#include "policy/risk.h"
#include "policy/shparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static docket_policy *pol[3];
static docket_policy_context *ctx;
static docket_policy_result *res;

static void setup(void)
{
	size_t np;
	const bypass_policy *bp = bypass_policies(&np);
	json_t *cj = json_loads("{\"cwd\":\"/w\",\"workspace_roots\":[\"/w\"],\"env\":{\"HOME\":\"/home/u\"},"
				"\"approval_policy\":\"never\",\"client_sandbox\":true}", 0, NULL);

	for (size_t k = 0; k < np && k < 3; k++) {
		docket_policy_format f = strcmp(bp[k].format, "codex") == 0  ? DOCKET_POLICY_CODEX :
					 strcmp(bp[k].format, "claude") == 0 ? DOCKET_POLICY_CLAUDE : DOCKET_POLICY_DOCKET;

		if (docket_policy_load_buffer(&pol[k], f, bp[k].file_name, bp[k].text, strlen(bp[k].text)) < 0)
			abort();
	}
	if (!cj || docket_policy_context_from_json(&ctx, cj) < 0 || docket_policy_result_new(&res) < 0)
		abort();
	json_decref(cj);
}

/* The enforced verdict of `bash -lc script` under policy k; -1 when it cannot be evaluated. */
static int enforced(size_t k, const char *script)
{
	json_t *args = json_pack("{s[sss]}", "command", "bash", "-lc", script);
	docket_policy_call *call = NULL;
	int v = -1;

	if (args && docket_policy_call_from_args(&call, "shell", args) == 0 &&
	    docket_policy_eval_enforced(res, pol[k], call, ctx) == 0)
		v = (int)docket_policy_result_verdict(res);
	docket_policy_call_free(call);
	json_decref(args);
	return v;
}

static void raw(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	sh_analysis a;
	json_t *args;
	docket_risk_call rc;
	pol_url u;

	if (!s)
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	sh_init(&a);
	if (sh_analyze(&a, s, size, "/w", "/home/u") == 0) {
		if (a.incomplete && !a.why)
			abort();
		for (size_t i = 0; i < a.ncmds; i++) {
			const sh_cmd *c = &a.cmds[i];

			if (c->word0 + c->nwords > a.nwords || c->redir0 + c->nredir > a.nredirs)
				abort();
			for (size_t w = c->word0; w < c->word0 + c->nwords; w++)
				if (a.word_off[w] >= a.text.len)
					abort();
		}
	}
	sh_dispose(&a);
	if (strlen(s) == size) {
		(void)enforced(0, s);
		args = json_pack("{s[sss]}", "command", "bash", "-c", s);
		memset(&rc, 0, sizeof(rc));
		rc.tool = "shell";
		rc.args = args;
		rc.cwd = "/w";
		(void)docket_call_risk(&rc);
		json_decref(args);
		memset(&u, 0, sizeof(u));
		if (pol_url_parse(&u, s) == 0 && (!u.host.ptr || strlen(u.host.ptr) != u.host.len))
			abort();
		pol_url_dispose(&u);
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bypass_gen g;
	docket_buf script = DOCKET_BUF_INIT;

	if (!res)
		setup();
	if (size == 0)
		return 0;
	if (data[0] & 1) {
		raw(data + 1, size - 1);
		return 0;
	}
	bypass_gen_bytes(&g, data + 1, size - 1);
	if (bypass_script(&g, &script) == 0)
		for (size_t k = 0; k < 3; k++)
			if (enforced(k, script.ptr) == DOCKET_VERDICT_ALLOWED)
				abort();   /* a denied program ran behind some construct: a bypass */
	docket_buf_dispose(&script);
	return 0;
}
