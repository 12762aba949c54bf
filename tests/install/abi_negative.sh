#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# abi_exports must fail, naming the symbol, when the headers and the
# library's exports disagree: a declaration without DOCKET_EXTERN, a
# declaration nothing defines, an exported function no header declares, a
# header docket/docket.h does not include.
#
#   abi_negative.sh NM LIBDOCKET_SO SOURCE_ROOT STATIC_ARCHIVE
set -euo pipefail
nm=$1 so=$2 src=$3 archive=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "abi_negative: FAIL: $*" >&2; exit 1; }

# expect_failure WHAT MESSAGE: abi_exports on $dir/inc fails saying MESSAGE
expect_failure() {
	if python3 "$src/tests/install/abi_exports.py" "$nm" "$so" "$dir/inc" "$archive" 2>"$dir/err"; then
		fail "$1 passed"
	fi
	grep -qF -- "$2" "$dir/err" || fail "$1: the message does not say '$2': $(cat "$dir/err")"
}
fresh() { rm -rf "$dir/inc"; cp -r "$src/include/docket" "$dir/inc"; }

fresh
python3 "$src/tests/install/abi_exports.py" "$nm" "$so" "$dir/inc" "$archive" >/dev/null \
	|| fail "abi_exports fails on an unchanged copy of the headers"

fresh
printf 'int docket_ledger_frobnicate(docket_ledger *ledger);\n' >>"$dir/inc/ledger.h"
expect_failure "an unmarked declaration" "ledger.h: docket_ledger_frobnicate is declared without DOCKET_EXTERN"

fresh
printf 'DOCKET_EXTERN int docket_ledger_frobnicate(docket_ledger *ledger);\n' >>"$dir/inc/ledger.h"
expect_failure "a declaration nothing defines" "ledger.h: docket_ledger_frobnicate is declared but nothing in libdocket defines it"

fresh
grep -v 'docket_ledger_reindex' "$src/include/docket/ledger.h" >"$dir/inc/ledger.h"
expect_failure "an undeclared export" "exports docket_ledger_reindex, which no include/docket/*.h declares"
fresh
printf '/* SPDX-License-Identifier: Apache-2.0 */\n#include "docket/common.h"\n' >"$dir/inc/extra.h"
expect_failure "a header the umbrella misses" "include/docket/extra.h is not included by the umbrella docket/docket.h"
echo "abi_negative: ok"
