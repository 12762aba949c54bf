#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Writes docs/cli.md, the CLI reference, from the commands' own --help, so
# the reference cannot drift from the program. A test (docs_cli) checks that
# the committed file matches; after changing a command run:
#   scripts/gen-cli-doc.sh build/cli/docket > docs/cli.md
set -euo pipefail
docket=${1:?usage: gen-cli-doc.sh DOCKET_BIN}

cat <<'HEAD'
# docket command-line reference

Generated from `docket --help` and `docket COMMAND --help` by
`scripts/gen-cli-doc.sh`; the test `docs_cli` keeps it in step with the
program.

Global options come before the command: `-L PATH` names the ledger (else
`$DOCKET_LEDGER`, else `./.docket`); `--map-max SIZE` (else `$DOCKET_MAP_MAX`)
caps how large the ledger's data file may grow, in bytes with an optional
`K`, `M`, `G` or `T` (powers of 1024). The default cap is 1T on 64-bit hosts
(2G on 32-bit ones); the map starts at 64M and doubles as needed up to the
cap. A commit that would pass the cap is refused whole, exit 3, "ledger is
full: it reached its size cap"; raise the cap to append more. The cap does
not shrink an existing file, and verify's scratch copy is not bound by it. Every command has `--help`; every read
command has `--json`. Colour only on a terminal, never with `NO_COLOR`.

**Exit codes:** 0 ok; 1 a check found something (verify failed, replay changes
matching `--fail-on`); 2 usage or bad input, nothing was written; 3 storage or
system error.

## docket

```
HEAD
NO_COLOR=1 "$docket" --help
echo '```'
for cmd in $(NO_COLOR=1 "$docket" --help | awk '/^commands:/{f=1;next} f&&/^  [a-z]/{print $1} f&&/^$/{exit}'); do
	[ "$cmd" = help ] && continue
	printf '\n## docket %s\n\n```\n' "$cmd"
	NO_COLOR=1 "$docket" "$cmd" --help
	echo '```'
done
