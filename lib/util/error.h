/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DOCKET_UTIL_ERROR_H
#define DOCKET_UTIL_ERROR_H

#include "docket/common.h"

/*
 * Record an error where it is detected and return `code` so that callers can
 * write `return docket_error_set(DOCKET_EINVALID, "...")`. Propagating callers
 * return the code unchanged and do not overwrite the message.
 */
int docket_error_set(int code, const char *fmt, ...) DOCKET_PRINTF(2, 3);

/*
 * Out of memory: the one message for it, set without formatting or
 * allocating (libgit2's git_error_set_oom). Returns DOCKET_ENOMEM, so that
 * callers write `return docket_error_set_oom();`.
 */
int docket_error_set_oom(void);

/* Same, naming the DESIGN §3 invariant that was broken. */
int docket_error_invariant(int code, int invariant, const char *fmt, ...) DOCKET_PRINTF(3, 4);

/* Prefix the current message with more context ("file.jsonl:12: "). */
void docket_error_prefix(const char *fmt, ...) DOCKET_PRINTF(1, 2);

/* Name the 1-based index of the batch event the current error is about. */
void docket_error_set_index(size_t index);

void docket_error_clear(void);

/* Make a saved error the current one again (errors carried across calls). */
void docket_error_restore(const docket_error *e);

#endif
