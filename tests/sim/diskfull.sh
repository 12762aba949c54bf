#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# A full disk (issue 11): on a 1 MiB tmpfs, a commit that does not fit says
# "no space left on device" and what to do, exit 3, and leaves the ledger
# as it was (it still verifies, the earlier events all there); verify with
# its scratch copy on the full disk is exit 3 naming the scratch copy, never
# a verdict about the ledger.
#
# Needs to mount a tmpfs (root); exit 77 (skipped) otherwise.
# usage: diskfull.sh DOCKET SOURCE_ROOT
set -u
docket=$1
fixtures=$2/fixtures
work=$(mktemp -d "${TMPDIR:-/tmp}/docket-full.XXXXXX")
mnt=$work/mnt
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=1m,mode=0700 tmpfs "$mnt" 2>/dev/null; then
	rmdir "$mnt" "$work"
	echo "diskfull: cannot mount a tmpfs (needs root): skipped"
	exit 77
fi
trap 'umount "$mnt"; rm -rf "$work"' EXIT
export NO_COLOR=1 LC_ALL=C TZ=UTC
fails=0
check() { # check NAME WANT_EXIT WANT_TEXT CMD...
	local name=$1 want=$2 text=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" != "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
		echo "FAIL $name: exit $rc (want $want), output:"
		echo "$out" | head -5
		fails=$((fails + 1))
	else
		echo "ok   $name: $(tail -1 <<<"$out")"
	fi
}

L=$mnt/ledger
"$docket" -L "$L" init >/dev/null || exit 99
"$docket" -L "$L" record "$fixtures/sessions/demo-basic.jsonl" >/dev/null || exit 99
before=$("$docket" -L "$L" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')

# 3,000 calls with 1 KiB outputs in one file: one commit, more than the disk holds
python3 - "$work/big.jsonl" <<'PY'
import json, os, sys
# random outputs: format 2 compresses segments well, so repetitive text
# would fit the small disk
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"type": "session.opened", "session": "big", "runtime": "t/1"}) + "\n")
    for i in range(3000):
        c = "call_%d" % i
        f.write(json.dumps({"type": "tool.intent", "session": "big", "invocation": c, "tool": "shell",
                            "args": {"command": ["echo", c]}, "decision": {"verdict": "allowed"}}) + "\n")
        f.write(json.dumps({"type": "tool.dispatched", "session": "big", "invocation": c}) + "\n")
        f.write(json.dumps({"type": "tool.completed", "session": "big", "invocation": c, "status": "ok",
                            "exit_code": 0, "output": os.urandom(512).hex() + c}) + "\n")
PY
check "a commit past the end of the disk" 3 "no space left on device" "$docket" -L "$L" record "$work/big.jsonl"
check "... says what to do" 3 "free some space or move the ledger" "$docket" -L "$L" record "$work/big.jsonl"
check "the ledger still verifies" 0 "$before events verified" "$docket" -L "$L" verify
after=$("$docket" -L "$L" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
if [ "$after" = "$before" ]; then echo "ok   nothing of the failed commit was written ($after events)"; else
	echo "FAIL events: $after, want $before"; fails=$((fails + 1)); fi

# verify with its scratch copy on a disk that is full, or that holds its
# lock file but not the rebuild
for left in 0 64; do
	rm -f "$mnt/filler"
	avail=$(df -B1 --output=avail "$mnt" | tail -1)
	head -c $((avail - left * 1024)) /dev/zero >"$mnt/filler" 2>/dev/null
	check "verify, scratch on a disk with ${left} KiB left" 3 "verify could not finish" \
		env TMPDIR="$mnt" "$docket" -L "$L" verify
	check "... names what ran out" 3 "no space left on device" env TMPDIR="$mnt" "$docket" -L "$L" verify
done
rm -f "$mnt/filler"

[ "$fails" -eq 0 ] && echo "diskfull: all cases passed" && exit 0
echo "diskfull: $fails case(s) failed"
exit 1
