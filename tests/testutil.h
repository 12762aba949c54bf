/* SPDX-License-Identifier: Apache-2.0 */
/* testutil.h: helpers shared by the cmocka tests. */
#ifndef DOCKET_TESTUTIL_H
#define DOCKET_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

/* A fresh empty directory under $TMPDIR (or /tmp); free with test_rmdir_free. */
char *test_mkdtemp(void);
/* rm -rf the directory and free the string. */
void test_rmdir_free(char *dir);
/* Parse JSON text that the test wrote itself; fails the test if invalid. */
json_t *test_json(const char *text);
/* Path of ../shared/corpus/<rel> relative to the source tree, or NULL when absent. */
char *test_shared_path(const char *rel);
/*
 * The text between "<!-- MARKER -->" and "<!-- /MARKER -->" of the source
 * tree's file `rel` (docs/policy.md ...): *start and *end point into the
 * returned buffer (free it). Skips the test without DOCKET_SOURCE_ROOT;
 * fails it when the file or the markers are missing.
 */
char *test_doc_block(const char *rel, const char *marker, const char **start, const char **end);

#endif
