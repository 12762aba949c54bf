/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_inv_record.c: invocation records are read from disk (the
 * `invocations` table, state_record.c's own layout): decode arbitrary bytes;
 * what decodes must encode and decode again to the same record, and its
 * encoding must be stable. Must never crash or leak.
 */
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	docket_buf a = DOCKET_BUF_INIT, b = DOCKET_BUF_INIT;
	inv_state first, second;

	if (inv_state_decode(&first, "s", "i", data, size) != 0)
		return 0;
	if (inv_state_encode(&a, &first) != 0 || inv_state_decode(&second, "s", "i", a.ptr, a.len) != 0 ||
	    memcmp(&first, &second, sizeof(first)) != 0 || inv_state_encode(&b, &second) != 0 ||
	    a.len != b.len || memcmp(a.ptr, b.ptr, a.len) != 0)
		abort();
	docket_buf_dispose(&a);
	docket_buf_dispose(&b);
	return 0;
}
