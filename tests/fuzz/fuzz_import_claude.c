/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_import_claude.c: the Claude Code importer on arbitrary bytes; the
 * properties and the oracle are those of fuzz_import_codex.c. */
#define FUZZ_IMPORT_FORMAT DOCKET_IMPORT_CLAUDE
#include "fuzz_import_codex.c"
