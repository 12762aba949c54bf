/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_segment.c: segments read from disk are untrusted. Load arbitrary
 * bytes as the format-2 or format-3 segment at seq 1 (header, index, each
 * part zstd with and without the ledger's dictionary), read the events of
 * part A alone first (as replay does: part B stays compressed), then every
 * event in it: payload (the same bytes whichever part was decompressed
 * first), chain hash (checked against the stored one), docket.v1.Event,
 * JSON, and the session field as the session index's reader finds it.
 * Must never crash or leak.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_ledger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ledger_reader r;
	MDB_txn *txn = NULL;
	docket_ledger *ledger = fuzz_ledger();
	uint8_t *first_a = NULL;
	uint64_t first_a_seq = 0;
	size_t first_a_len = 0;

	if (store_txn_begin(&txn, ledger, MDB_RDONLY) != 0)
		abort();
	reader_init(&r, ledger, txn);
	r.prev_ok = 1; /* seq 1: the chain starts from zeros */
	if (reader_adopt(&r, 1, data, size) == 0) {
		/* part A alone: what it gives must not change once part B is in */
		for (uint64_t seq = 1; seq <= r.count; seq++) {
			const uint8_t *p;
			size_t n;

			if (r.parts[seq - 1] || reader_payload(&r, seq, &p, &n) != 0)
				continue;
			if (r.decoded & 2)
				abort(); /* part B decompressed for a part-A read */
			if (!first_a_seq && (first_a = malloc(n + 1))) {
				memcpy(first_a, p, n);
				first_a_seq = seq;
				first_a_len = n;
			}
		}
		for (uint64_t seq = 1; seq <= r.count; seq++) {
			uint8_t hash[LEDGER_HASH_LEN];
			docket_event *ev = NULL;
			json_t *obj = NULL;
			const uint8_t *p;
			size_t n;

			if (reader_payload(&r, seq, &p, &n) != 0)
				break;
			if (seq == first_a_seq && (n != first_a_len || memcmp(p, first_a, n) != 0))
				abort();
			(void)reader_hash(&r, seq, hash);
			if (event_unpack(&ev, p, n) == 0) {
				/* the session index's reader (read.c) agrees with protobuf-c */
				int is = ledger_payload_session_is(p, n, ev->session, strlen(ev->session));

				if (is < 0 || (*ev->session && ledger_payload_session_is(p, n, "s", 1) == 1 &&
					       strcmp(ev->session, "s") != 0))
					abort();
				if (docket_event_to_json(&obj, ev) == 0)
					json_decref(obj);
			}
			docket_event_free(ev);
		}
	}
	free(first_a);
	reader_dispose(&r);
	store_txn_abort(ledger, txn);
	return 0;
}
