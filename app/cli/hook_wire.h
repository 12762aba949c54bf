/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hook_wire.h: the hook server's side of the protocol docket-hook-fast
 * speaks (hook_fast.c has it whole): a request read, an answer made.
 */
#ifndef DOCKET_CLI_HOOK_WIRE_H
#define DOCKET_CLI_HOOK_WIRE_H

#include "util/buf.h"

#define HOOK_WIRE_INPUT_MAX ((size_t)64 << 20)   /* cmd_hook.c's INPUT_MAX */
#define HOOK_WIRE_CONTEXT_MAX ((size_t)4 << 20)

/*
 * Read one request from `conn` (a blocking socket with timeouts): 1 when
 * its context is `mine` byte for byte (*in then holds the event, NUL
 * terminated), 0 for another context (read no further: answer 'F'), -1
 * for anything malformed, too large or cut short (answer nothing).
 */
int hook_wire_read_request(int conn, const docket_buf *mine, docket_buf *in);

/* The answer, into `out` (cleared first): 'A' with the exit code, stdout
 * and stderr texts (either may be NULL), or 'F'. 0, or DOCKET_ENOMEM. */
int hook_wire_answer(docket_buf *out, char kind, int exit_code, const char *out_text, const char *err_text);

#endif
