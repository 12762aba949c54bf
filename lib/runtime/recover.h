/* SPDX-License-Identifier: Apache-2.0 */
/* recover.h: the recovery engine (DESIGN §6), internal interface. */
#ifndef DOCKET_RUNTIME_RECOVER_H
#define DOCKET_RUNTIME_RECOVER_H

#include <jansson.h>

#include "authority.h"
#include "docket/recover.h"
#include "ledger/ledger_sys.h"

/*
 * The plan: one item per pending invocation (read from the pending index:
 * O(pending)), each with the action, the events applying it appends, what
 * the runtime must do afterwards and the lineage owning its session
 * ("owner", absent when none). `a` may be NULL (no evaluation); `only`
 * non-NULL: the items of that lineage's sessions only (a runtime's view).
 */
int recover_plan(json_t **plan, docket_ledger *l, authority *a, const docket_recover_options *opts,
		 const state_lineage *only);

#endif
