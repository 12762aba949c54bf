/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_frame.c: frames read from disk are untrusted. Decode arbitrary bytes
 * as a frame (header, zstd with and without the ledger's dictionary) and the
 * payload as a docket.v1.Event, then as JSON. Must never crash or leak.
 *
 * It decodes against the scratch ledger of fuzz_ledger.c (a trained
 * dictionary).
 */
#include <stdlib.h>

#include "fuzz_ledger.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	docket_buf payload = DOCKET_BUF_INIT;
	docket_event *ev = NULL;
	frame_header hdr;
	MDB_txn *txn = NULL;
	json_t *obj = NULL;
	docket_ledger *ledger = fuzz_ledger();

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
