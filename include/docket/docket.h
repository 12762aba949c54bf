/* SPDX-License-Identifier: Apache-2.0 */
/* docket.h: the umbrella header of libdocket. */
#ifndef DOCKET_H
#define DOCKET_H

#include "docket/common.h"
#include "docket/audit.h"
#include "docket/export.h"
#include "docket/import.h"
#include "docket/ledger.h"
#include "docket/policy.h"
#include "docket/recover.h"
#include "docket/replay.h"
#include "docket/runtime.h"
#include "docket/tlog.h"

#endif
