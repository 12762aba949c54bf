/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_frame.c: frames read from disk are untrusted. Decode arbitrary bytes
 * as a frame (header, zstd with and without the ledger's dictionary) and the
 * payload as a docket.v1.Event, then as JSON. Must never crash or leak.
 *
 * A scratch ledger with a trained dictionary is made once per process.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger/ledger_internal.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static docket_ledger *ledger;
static char dir[256];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	docket_ledger_free(ledger);
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void seed_ledger(void)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	const char *tmp = getenv("TMPDIR");
	json_t *evs[64];
	char buf[256];

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	docket_buf payload = DOCKET_BUF_INIT;
	docket_event *ev = NULL;
	frame_header hdr;
	MDB_txn *txn = NULL;
	json_t *obj = NULL;

	if (!ledger)
		seed_ledger();
	if (store_txn_begin(&txn, ledger, MDB_RDONLY) != 0)
		abort();
	if (frame_decode(&payload, &hdr, ledger, txn, data, size) == 0 &&
	    event_unpack(&ev, (const uint8_t *)payload.ptr, payload.len) == 0 &&
	    docket_event_to_json(&obj, ev) == 0)
		json_decref(obj);
	docket_event_free(ev);
	store_txn_abort(ledger, txn);
	docket_buf_dispose(&payload);
	return 0;
}
