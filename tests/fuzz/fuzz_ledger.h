/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ledger.h: the scratch ledger of the storage fuzz targets. */
#ifndef DOCKET_FUZZ_LEDGER_H
#define DOCKET_FUZZ_LEDGER_H

#include "ledger/ledger_internal.h"

/* Made at the first call (with a trained dictionary), removed at exit. */
docket_ledger *fuzz_ledger(void);

#endif
