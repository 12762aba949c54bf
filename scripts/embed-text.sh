#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# embed-text.sh NAME IN OUT: write OUT, a C file defining
# `const char *const NAME`: the bytes of IN and a final NUL (the build embeds
# docs/call.schema.json this way: `docket policy schema` prints that file).
set -euo pipefail
name=$1 in=$2 out=$3
{
	printf '/* generated from %s by scripts/embed-text.sh: do not edit */\n' "$(basename "$in")"
	printf 'static const unsigned char bytes[] = {\n'
	od -An -v -tx1 "$in" | sed -e 's/  */ /g' -e 's/^ //' -e '/^$/d' -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'
	printf '0x00\n};\n'
	printf 'extern const char *const %s;\nconst char *const %s = (const char *)bytes;\n' "$name" "$name"
} >"$out.tmp"
mv "$out.tmp" "$out"
