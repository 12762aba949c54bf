/* SPDX-License-Identifier: Apache-2.0 */
/* test_audit_util.h: helpers shared by test_audit.c and test_export.c. */
#ifndef DOCKET_TEST_AUDIT_UTIL_H
#define DOCKET_TEST_AUDIT_UTIL_H

#include <stddef.h>

#include <jansson.h>

#include "docket/audit.h"
#include "docket/export.h"
#include "docket/ledger.h"

/* A new ledger in a fresh temporary directory (*dir: free with test_rmdir_free). */
docket_ledger *audit_new_ledger(char **dir);
/* Reopen the ledger in `dir`. */
docket_ledger *audit_open(const char *dir);
/* Append every line of fixtures/<rel> as one batch. */
void audit_record_fixture(docket_ledger *l, const char *rel);
/* Append JSON lines given as text, as one batch. */
void audit_record_text(docket_ledger *l, const char *jsonl);
/* The export as a malloc'd string. */
char *audit_export(docket_ledger *l, const docket_export_options *o);
/* Each line of `text` parsed as JSON, in an array. */
json_t *audit_lines(const char *text);
/* 1 if `needle` occurs in any regular file under `dir` (raw bytes). */
int audit_grep_dir(const char *dir, const char *needle);
/* A path under `dir` (malloc'd). */
char *audit_path(const char *dir, const char *name);

#endif
