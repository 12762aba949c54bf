/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_codex_relay.c: the lines `docket codex-relay` reads are outside input
 * (whatever codex app-server and its client write). Each input is a
 * conversation (fuzz_relay_common.h) handled by one relay against a scratch
 * ledger, then finished. Nothing may crash or leak, no line may fail except
 * for lack of memory, and the ledger must keep its invariants (appends that
 * break one are refused, not written).
 */
#include "fuzz_relay_common.h"
#include "integrations/codex_relay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int client(void *r, const char *line, size_t len)
{
	return docket_codex_relay_from_client(r, line, len);
}

static int server(void *r, const char *line, size_t len)
{
	return docket_codex_relay_from_server(r, line, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	docket_codex_relay *r = NULL;

	if (!fuzz_ledger)
		fuzz_relay_setup("codex-relay");
	if (docket_codex_relay_new(&r, fuzz_ledger, fuzz_null, fuzz_null) < 0)
		return 0;
	fuzz_relay_feed(r, data, size, client, server);
	docket_codex_relay_finish(r);
	docket_codex_relay_free(r);
	return 0;
}
