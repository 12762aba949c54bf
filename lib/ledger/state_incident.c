// SPDX-License-Identifier: Apache-2.0
/*
 * state_incident.c: the incident index, meta "incidents:<session>" (docs/
 * write-path.md §3).
 *
 * An incident is in no session (the session its spool entry names may be
 * closed or unknown), so `show` and `sessions` find a session's incidents
 * through meta "incidents:<session>" (their seqs, be64 each, in order;
 * "incidents:" for those whose entry names no session): O(incidents of the
 * session), never a scan of the log. A projection like the others: written
 * by the transition that appends the incident, so reindex, verify's
 * rebuild and compact's copy make it again from the events.
 */
#include <string.h>

#include "state_internal.h"
#include "util/json.h"
#include "util/alloc.h"
#include "util/error.h"

static const char INCIDENTS[] = "incidents:";

static int incidents_key(docket_buf *out, const char *session)
{
	return docket_buf_printf(out, "%s%s", INCIDENTS, session);
}

/* The session the incident's entry text names, or "" (a new string). */
static char *incident_session(const Docket__V1__LedgerIncident *b)
{
	json_t *entry = NULL;
	const char *s = NULL;
	char *out;

	if (b->entry && docket_json_parse(&entry, b->entry, strlen(b->entry)) == 0)
		s = json_string_value(json_object_get(entry, "session"));
	docket_error_clear();
	out = docket_strdup(s ? s : "");
	json_decref(entry);
	return out;
}

int state_incident_index(state_txn *st, const docket_event *ev, uint64_t seq)
{
	docket_buf key = DOCKET_BUF_INIT, seqs = DOCKET_BUF_INIT;
	char *session = incident_session(ev->ledger_incident);
	uint8_t be[8];
	MDB_val v;
	int error;

	if (!session)
		return docket_error_set_oom();
	if ((error = incidents_key(&key, session)) < 0)
		goto done;
	error = state_meta_get(st, st->l, st->txn, key.ptr, key.len, &v);
	if (error == 0)
		error = docket_buf_put(&seqs, v.mv_data, v.mv_size);  /* copied before the put */
	else if (error == DOCKET_ENOTFOUND) {
		docket_error_clear();
		error = 0;
	}
	docket_be64_put(be, seq);
	if (error == 0 && (error = docket_buf_put(&seqs, be, sizeof(be))) == 0)
		error = overlay_put(&st->ov, st->l->dbi.meta, key.ptr, key.len, seqs.ptr, seqs.len);
done:
	docket_free(session);
	docket_buf_dispose(&key);
	docket_buf_dispose(&seqs);
	return error;
}

int ledger_incidents_get(docket_ledger *l, MDB_txn *txn, const char *session, docket_buf *out)
{
	docket_buf key = DOCKET_BUF_INIT;
	MDB_val v;
	int error;

	if ((error = incidents_key(&key, session)) == 0 &&
	    (error = state_meta_get(NULL, l, txn, key.ptr, key.len, &v)) == 0)
		error = docket_buf_put(out, v.mv_data, v.mv_size);
	if (error == DOCKET_ENOTFOUND) {
		docket_error_clear();
		error = 0;
	}
	docket_buf_dispose(&key);
	return error;
}

int state_incident_clear(docket_ledger *l, MDB_txn *txn)
{
	return state_meta_drop_prefix(l, txn, INCIDENTS);
}
