/* SPDX-License-Identifier: Apache-2.0 */
/*
 * call_schema.h: the published call schema (docs/call.schema.json) for the
 * args of canonical tools a runtime sends (serve's tool.intent, `record`).
 * Other tool names are recorded as they are.
 */
#ifndef DOCKET_RUNTIME_CALL_SCHEMA_H
#define DOCKET_RUNTIME_CALL_SCHEMA_H

#include "util/jv.h"

/*
 * 0 when `args` (absent: v.p NULL) of tool `tool` fits the schema, else
 * DOCKET_EINVALID with a message "WHERE: tool TOOL: args.FIELD must be ...".
 */
int call_schema_check(const char *where, const char *tool, const docket_jv_ops *o, docket_jv args) DOCKET_MUST_USE;

/* The same for a parsed event: 0 unless it is a tool.intent of a canonical
 * tool whose args do not fit (`record` checks every line with it). */
struct Docket__V1__Event;
int call_schema_check_event(const char *where, const struct Docket__V1__Event *ev) DOCKET_MUST_USE;

#endif
