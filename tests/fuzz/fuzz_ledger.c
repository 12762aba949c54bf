/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_ledger.c: the scratch ledger the storage fuzz targets decode against
 * (fuzz_frame, fuzz_segment): 769 events, enough for a trained dictionary,
 * made once per process and removed at exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_ledger.h"

static docket_ledger *ledger;
static char dir[256];

static void cleanup(void)
{
	docket_ledger_free(ledger);
	store_remove_tree(dir);
}

static void seed_ledger(void)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	const char *tmp = getenv("TMPDIR");
	json_t *evs[64];
	char buf[64];

	snprintf(dir, sizeof(dir), "%s/docket-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	opts.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&ledger, dir, &opts) != 0)
		abort();
	atexit(cleanup);
	evs[0] = json_pack("{s:s, s:s}", "type", "session.opened", "session", "s");
	if (docket_ledger_append_json(ledger, evs, 1, NULL) != 0)
		abort();
	json_decref(evs[0]);
	for (int b = 0; b < 12; b++) {
		for (int i = 0; i < 64; i++) {
			snprintf(buf, sizeof(buf), "c%d", b * 64 + i);
			evs[i] = json_pack("{s:s, s:s, s:s, s:s, s:{s:[s,s]}}", "type", "tool.intent",
					   "session", "s", "invocation", buf, "tool", "shell",
					   "args", "command", "git", i % 2 ? "status" : "diff --stat");
		}
		if (docket_ledger_append_json(ledger, evs, 64, NULL) != 0)
			abort();
		for (int i = 0; i < 64; i++)
			json_decref(evs[i]);
	}
}

docket_ledger *fuzz_ledger(void)
{
	if (!ledger)
		seed_ledger();
	return ledger;
}
