#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# run.sh DOCKET SOURCE_ROOT CASE: one fleet test case against a real,
# throwaway PostgreSQL server (pg.sh), with the fleet schema created.
# Cases are the functions case_* of cases.sh; exit 0 pass, 1 fail, 77 skip.
set -uo pipefail

docket_bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$2" && pwd)
name=$3
here=$root/tests/fleet
. "$here/pg.sh"
. "$here/cases.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/docket-fleet.XXXXXX")
pg_start
trap 'pg_cleanup; rm -rf "$work"' EXIT
cd "$work" || exit 99
FIXTURES=$root/fixtures
GEN=$here/gen.py

# (background jobs run "$docket_bin" itself: $! must be its pid, not a subshell's)
docket() { "$docket_bin" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_exit CODE CMD...: run CMD, its stderr to ./err, and check its status.
expect_exit() {
	local want=$1 got
	shift
	"$@" >out 2>err
	got=$?
	[ "$got" -eq "$want" ] || { cat out err >&2; fail "'$*' exited $got, expected $want"; }
}
# ledger DIR JSONL...: a fresh ledger holding these events
ledger() {
	local dir=$1 f
	shift
	docket -L "$dir" init >/dev/null || exit 99
	for f in "$@"; do
		docket -L "$dir" record "$f" >/dev/null || { echo "cannot record $f" >&2; exit 99; }
	done
}
# a login role in docket_shipper
shipper_role() {
	pg_sql -c "CREATE ROLE $1 LOGIN PASSWORD '$2' IN ROLE docket_shipper"
}
url_as() { echo "postgresql:///postgres?host=$PG_DIR&user=$1&password=$2"; }
events_held() { pg_sql -c "SELECT count(*) || ' ' || count(DISTINCT seq) || ' ' || coalesce(max(seq), 0) FROM docket_events WHERE ledger_id = '$1'"; }
ledger_id() { docket -L "$1" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ledger_id"])'; }

docket fleet init --db "$PG_URL" >/dev/null || { echo "fleet init failed" >&2; exit 99; }
"case_$name"
echo "ok: $name"
