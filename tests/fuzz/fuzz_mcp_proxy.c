/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_mcp_proxy.c: the lines `docket mcp-proxy` reads are outside input
 * (whatever the MCP client and server write). Each input is a conversation
 * (fuzz_relay_common.h) handled by one proxy against a scratch ledger,
 * alternately without and with an enforced policy (denials, and asks that
 * become elicitations), then finished. Nothing may crash or leak, and no
 * line may fail except for lack of memory.
 */
#include "docket/policy.h"
#include "fuzz_relay_common.h"
#include "integrations/mcp_proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static docket_policy *policy;
static unsigned round_no;

static void free_policy(void)
{
	docket_policy_free(policy);
}

static int client(void *p, const char *line, size_t len)
{
	return docket_mcp_proxy_from_client(p, line, len);
}

static int server(void *p, const char *line, size_t len)
{
	return docket_mcp_proxy_from_server(p, line, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char yaml[] = "version: 1\ntools:\n  deny: [\"mcp__echo__touch\"]\n"
				   "  ask: [\"mcp__echo__fail\"]\n";
	docket_mcp_proxy_options mo = DOCKET_MCP_PROXY_OPTIONS_INIT;
	docket_mcp_proxy *p = NULL;
	char session[32];

	if (!fuzz_ledger) {
		fuzz_relay_setup("mcp-proxy");
		if (docket_policy_load_buffer(&policy, DOCKET_POLICY_DOCKET, "fuzz", yaml, sizeof(yaml) - 1) != 0)
			abort();
		atexit(free_policy);
	}
	snprintf(session, sizeof(session), "fuzz-%u", ++round_no);
	mo.name = "echo";
	mo.session = session;
	mo.policy = (round_no & 1) ? policy : NULL;
	if (docket_mcp_proxy_new(&p, fuzz_ledger, &mo, fuzz_null, fuzz_null) < 0)
		return 0;
	fuzz_relay_feed(p, data, size, client, server);
	docket_mcp_proxy_finish(p);
	docket_mcp_proxy_free(p);
	return 0;
}
