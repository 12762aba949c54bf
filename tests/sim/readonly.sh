#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Read-only ledgers (issue 11): a ledger its reader cannot write (a 0555
# directory, another user's files, a copy without its lock file) is opened
# by the read commands without LMDB's lock file when no writer can exist,
# and refused with an explanation when one might.
#
# Needs root (to act as another user with setpriv); exit 77 (skipped)
# otherwise. usage: readonly.sh DOCKET SOURCE_ROOT
set -u
docket=$1
fixtures=$2/fixtures
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "readonly: needs root and setpriv to act as another user: skipped"
	exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/docket-ro.XXXXXX")
holder=
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$work"' EXIT
chmod 755 "$work"
export NO_COLOR=1 LC_ALL=C TZ=UTC
fails=0

nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
check() { # check NAME WANT_EXIT WANT_TEXT CMD...: exit status and a text in stdout+stderr
	local name=$1 want=$2 text=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" != "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
		echo "FAIL $name: exit $rc (want $want), output:"
		echo "$out" | head -5
		fails=$((fails + 1))
	else
		echo "ok   $name"
	fi
}

L=$work/ledger
"$docket" -L "$L" init >/dev/null || exit 99
"$docket" -L "$L" record "$fixtures/sessions/demo-basic.jsonl" >/dev/null || exit 99
"$docket" -L "$L" log >"$work/log.want" || exit 99

# root's ledger, as created (0700): another user cannot even enter it
check "0700 directory" 3 "Permission denied" nobody "$docket" -L "$L" log

# 0555 directory, 0444 data file, lock file 0600 (unreadable): nobody can
# write the data file, so no writer can exist: read without the lock file
chmod 555 "$L"; chmod 444 "$L/data.mdb"
nobody "$docket" -L "$L" log >"$work/log.got" 2>"$work/err"
if cmp -s "$work/log.want" "$work/log.got"; then echo "ok   0444 data file: log as another user"; else
	echo "FAIL 0444 data file: log as another user differs:"; head -3 "$work/err"; fails=$((fails + 1)); fi
check "0444 data file: verify" 0 "24 events verified" nobody "$docket" -L "$L" verify
check "0444 data file: sessions" 0 "demo-basic" nobody "$docket" -L "$L" sessions
check "0444 data file: stats" 0 "events" nobody "$docket" -L "$L" stats
check "0444 data file: show" 0 "demo-basic" nobody "$docket" -L "$L" show demo-basic
check "0444 data file: a write is refused" 3 "cannot open ledger" nobody "$docket" -L "$L" record "$fixtures/sessions/open-pending.jsonl"

# the owner may write the data file and its lock file is unreadable: a
# writer could be using it, and docket cannot tell: refused, with the way out
chmod 644 "$L/data.mdb"
check "owner-writable, lock unreadable" 3 "read a copy of it" nobody "$docket" -L "$L" log

# lock file readable and nobody holds it: no writer is running: readable
chmod 644 "$L/lock.mdb"
check "lock readable, no writer" 0 "session.opened" nobody "$docket" -L "$L" log

# ... while a writer holds the ledger open, refused (pid named)
chmod 755 "$L"
mkfifo "$work/fifo"
"$docket" -L "$L" record - <"$work/fifo" >/dev/null 2>&1 &
holder=$!
exec 3>"$work/fifo"
# wait until the writer has the lock file open
for _ in $(seq 200); do
	ls -l /proc/[0-9]*/fd 2>/dev/null | grep -qF "$L/lock.mdb" && break
	sleep 0.05
done
chmod 555 "$L"
check "lock readable, a writer running" 3 "has it open" nobody "$docket" -L "$L" log
exec 3>&-
wait "$holder" 2>/dev/null
holder=

# the issue's case: a copy without its lock file, 0500 / 0400, of its owner
C=$work/copy
mkdir "$C" && cp "$L/data.mdb" "$C/" && chown -R 65534:65534 "$C" && chmod 400 "$C/data.mdb" && chmod 500 "$C"
check "0500/0400 copy, no lock file: log" 0 "session.opened" nobody "$docket" -L "$C" log
check "0500/0400 copy, no lock file: verify" 0 "24 events verified" nobody "$docket" -L "$C" verify

[ "$fails" -eq 0 ] && echo "readonly: all cases passed" && exit 0
echo "readonly: $fails case(s) failed"
exit 1
