#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# run.sh DOCKET SOURCE_ROOT CASE...: fleet test cases against one real,
# throwaway PostgreSQL server (pg.sh), started once for all of them. Each
# case gets a database of its own (with the fleet schema) and a directory of
# its own, runs in a subshell, and leaves nothing behind: its databases and
# the login roles it made are dropped after it. Cases are the functions
# case_* of cases.sh; exit 0 when all pass, 1 when one fails, 77 skip.
set -uo pipefail

docket_bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$2" && pwd)
shift 2
here=$root/tests/fleet
. "$here/pg.sh"
. "$here/cases.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/docket-fleet.XXXXXX")
pg_start
trap 'pg_cleanup; rm -rf "$work"' EXIT
FIXTURES=$root/fixtures
GEN=$here/gen.py
export FLEET_HERE=$here

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
	pg_sql -d postgres -c "CREATE ROLE $1 LOGIN PASSWORD '$2' IN ROLE docket_shipper"
}
url_as() { echo "postgresql:///$PGDATABASE?host=$PG_DIR&user=$1&password=$2"; }
events_held() { pg_sql -c "SELECT count(*) || ' ' || count(DISTINCT seq) || ' ' || coalesce(max(seq), 0) FROM docket_events WHERE ledger_id = '$1'"; }
ledger_id() { docket -L "$1" stats --json | jq -r .ledger_id; }

# what a case made on the server: every database but postgres and the
# templates, every login role but the superuser
case_cleanup() {
	local x
	for x in $(pg_sql -d postgres -c "SELECT datname FROM pg_database WHERE datname NOT IN ('postgres', 'template0', 'template1')"); do
		pg_sql -d postgres -c "DROP DATABASE \"$x\" WITH (FORCE)" || return 1
	done
	for x in $(pg_sql -d postgres -c "SELECT rolname FROM pg_roles WHERE rolcanlogin AND rolname <> 'docket_admin'"); do
		pg_sql -d postgres -c "DROP ROLE \"$x\"" || return 1
	done
}

run_case() (
	local name=$1 start=$SECONDS
	mkdir "$work/$name" && cd "$work/$name" || exit 99
	pg_sql -d postgres -c "CREATE DATABASE c_$name" || exit 99
	export PGDATABASE=c_$name PG_URL="postgresql:///c_$name?host=$PG_DIR&user=docket_admin"
	docket fleet init --db "$PG_URL" >/dev/null || { echo "fleet init failed" >&2; exit 99; }
	"case_$name"
	echo "ok: $name ($((SECONDS - start)) s)"
)

rc=0
for name in "$@"; do
	run_case "$name"
	r=$?
	if [ $r -ne 0 ]; then
		echo "case $name: exit $r" >&2
		[ $r -eq 77 ] && [ $rc -eq 0 ] && rc=77
		[ $r -ne 77 ] && rc=1
	fi
	case_cleanup || { echo "cannot clean up after $name" >&2; rc=1; }
done
exit $rc
