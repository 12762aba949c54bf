/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_segment.c: segments read from disk are untrusted. Load arbitrary
 * bytes as the format-2 segment at seq 1 (header, index, zstd with and
 * without the ledger's dictionary), then read every event in it: payload,
 * chain hash (checked against the stored one), docket.v1.Event, JSON.
 * Must never crash or leak.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger/ledger_internal.h"

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

/* A ledger with a trained dictionary (codec-2 segments name id 1). */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ledger_reader r;
	MDB_txn *txn = NULL;

	if (!ledger)
		seed_ledger();
	if (store_txn_begin(&txn, ledger, MDB_RDONLY) != 0)
		abort();
	reader_init(&r, ledger, txn);
	r.prev_ok = 1; /* seq 1: the chain starts from zeros */
	if (reader_adopt(&r, 1, data, size) == 0) {
		for (uint64_t seq = 1; seq <= r.count; seq++) {
			uint8_t hash[LEDGER_HASH_LEN];
			docket_event *ev = NULL;
			json_t *obj = NULL;
			const uint8_t *p;
			size_t n;

			if (reader_payload(&r, seq, &p, &n) != 0)
				break;
			(void)reader_hash(&r, seq, hash);
			if (event_unpack(&ev, p, n) == 0 && docket_event_to_json(&obj, ev) == 0)
				json_decref(obj);
			docket_event_free(ev);
		}
	}
	reader_dispose(&r);
	store_txn_abort(ledger, txn);
	return 0;
}
