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
`$DOCKET_LEDGER`, else `./.docket`). Every command has `--help`; every read
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
# commands with subcommands of their own (docket fleet SUBCOMMAND)
for sub in $(NO_COLOR=1 "$docket" fleet --help | awk '/^subcommands:/{f=1;next} f&&/^  [a-z]/{print $1}'); do
	printf '\n## docket fleet %s\n\n```\n' "$sub"
	NO_COLOR=1 "$docket" fleet "$sub" --help
	echo '```'
done
