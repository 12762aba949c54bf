#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/cli.md and man/ (the man pages and the meson.build that installs
# them) must be what scripts/gen-cli-doc.sh writes for this build.
set -euo pipefail
docket=$1
root=$2
fix="run scripts/gen-cli-doc.sh --update build/app/cli/docket"
if ! diff -u "$root/docs/cli.md" <(bash "$root/scripts/gen-cli-doc.sh" "$docket"); then
	echo "docs/cli.md is out of date: $fix" >&2
	exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bash "$root/scripts/gen-cli-doc.sh" --man "$dir" "$docket"
if ! diff -ru "$root/man" "$dir"; then
	echo "man/ is out of date (a page changed, or a command was added or removed): $fix" >&2
	exit 1
fi
