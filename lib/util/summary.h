/* SPDX-License-Identifier: Apache-2.0 */
/* summary.h: the one-line summary of a tool call (summary.c). */
#ifndef DOCKET_UTIL_SUMMARY_H
#define DOCKET_UTIL_SUMMARY_H

#include <stddef.h>

#include <jansson.h>

#include "buf.h"
#include "docket/common.h"

/*
 * Append the summary of a call of `tool` with `args` to `b`: the command
 * line of a shell call (the script of `bash -lc SCRIPT`), the changes of an
 * apply_patch, the path of a file tool, the URL or search of a network
 * call, the packages of an install, server/tool of an MCP call, else the
 * args as JSON. Control characters become spaces. With `max` >= 4, at most
 * `max` code points (the cut marked "..."); 0: no limit.
 */
int docket_call_summary(docket_buf *b, const char *tool, const json_t *args, size_t max) DOCKET_MUST_USE;

#endif
