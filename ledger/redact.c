/* SPDX-License-Identifier: Apache-2.0 */
/*
 * redact.c: write-time redaction of secrets (issue 7). Until redaction
 * rules can be configured on a ledger, nothing is redacted.
 */
#include "ledger_internal.h"

int ledger_redact_event(docket_ledger *l, MDB_txn *txn, docket_event *ev)
{
	(void)l;
	(void)txn;
	(void)ev;
	return 0;
}
