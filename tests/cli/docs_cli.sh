#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/cli.md must be what scripts/gen-cli-doc.sh writes for this build.
set -euo pipefail
docket=$1
root=$2
if ! diff -u "$root/docs/cli.md" <(bash "$root/scripts/gen-cli-doc.sh" "$docket"); then
	echo "docs/cli.md is out of date: run scripts/gen-cli-doc.sh build/cli/docket > docs/cli.md" >&2
	exit 1
fi
