/* SPDX-License-Identifier: Apache-2.0 */
/*
 * import_state.c: importer progress per source file, in the `imports` table.
 *
 * The table is primary data (not a projection: reindex and verify leave it
 * alone). Keys and values are opaque to the ledger; importers/import.c
 * defines them (a 32-byte key per source file, a small versioned record).
 * Each put is its own short durable write transaction, replayed in a larger
 * map on MDB_MAP_FULL like every other write.
 */
#include <string.h>

#include "ledger_internal.h"
#include "util/error.h"

int ledger_import_state_get(docket_ledger *l, const void *key, size_t klen, docket_buf *out)
{
	MDB_txn *txn = NULL;
	MDB_val k = { klen, (void *)(uintptr_t)key }, v;
	int rc, error;

	docket_buf_clear(out);
	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	rc = mdb_get(txn, l->dbi.imports, &k, &v);
	if (rc == MDB_NOTFOUND)
		error = DOCKET_ENOTFOUND;
	else if (rc != 0)
		error = store_error(rc, "read import progress");
	else
		error = docket_buf_put(out, v.mv_data, v.mv_size);  /* copied before the txn ends */
	store_txn_abort(l, txn);
	return error;
}

int ledger_import_state_put(docket_ledger *l, const void *key, size_t klen, const void *value,
			    size_t len)
{
	MDB_txn *txn = NULL;
	MDB_val k = { klen, (void *)(uintptr_t)key }, v = { len, (void *)(uintptr_t)value };
	int rc, error;

	if (l->flags & DOCKET_OPEN_READONLY)
		return docket_error_set(DOCKET_EINVALID, "ledger %s is open read-only", l->path);
	for (;;) {
		if ((error = store_txn_begin(&txn, l, 0)) < 0)
			return error;
		rc = mdb_put(txn, l->dbi.imports, &k, &v, 0);
		if (rc == 0) {
			error = store_txn_commit(l, txn);
		} else {
			store_txn_abort(l, txn);
			error = store_error(rc, "write import progress");
		}
		if (error != DOCKET_EMAPFULL)
			return error;
		if ((error = store_grow(l)) < 0)
			return error;
	}
}
