/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_checkpoint.c: checkpoint records are outside input (a copied ledger's
 * `checkpoints` table, a witness file given to `docket verify --witness`).
 * Parse arbitrary bytes as one; when they parse, the record must serialise
 * and parse back to the same record. Must never crash or leak.
 */
#include <stdlib.h>
#include <string.h>

#include "audit/checkpoint.h"
#include "util/alloc.h"
#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	checkpoint_record c, again;
	docket_buf text = DOCKET_BUF_INIT;
	json_t *obj = NULL;

	docket_alloc_install_json();
	if (checkpoint_parse(&c, (const char *)data, size) != 0)
		return 0;
	if (checkpoint_to_json(&obj, &c) != 0 || docket_json_dump(&text, obj) != 0)
		abort();
	if (checkpoint_parse(&again, text.ptr, text.len) != 0 || memcmp(&c, &again, sizeof(c)) != 0)
		abort();  /* the round trip must be exact */
	json_decref(obj);
	docket_buf_dispose(&text);
	return 0;
}
