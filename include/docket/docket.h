/* SPDX-License-Identifier: Apache-2.0 */
/* docket.h: the umbrella header of libdocket. */
#ifndef DOCKET_H
#define DOCKET_H

#include "docket/common.h"
#include "docket/ledger.h"

#endif
