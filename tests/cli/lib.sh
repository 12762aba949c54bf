# SPDX-License-Identifier: Apache-2.0
# Helpers for the CLI golden cases (sourced by run.sh before each case).

# seed FIXTURE...: a fresh ledger holding the fixtures (paths relative to
# $FIXTURES). Any failure ends the case with status 99 ("setup failed").
seed() {
	docket init >/dev/null || { echo "seed: docket init failed" >&2; exit 99; }
	local f
	for f in "$@"; do
		docket record "$FIXTURES/$f" >/dev/null || { echo "seed: cannot record $f" >&2; exit 99; }
	done
}

# mask_hashes: replace chain hashes in JSON lines by a fixed string, so a
# golden file does not pin the bytes of the encoding.
mask_hashes() {
	sed -E 's/"(hash|chain_head)":"[0-9a-f]{64}"/"\1":"<hash>"/g'
}

# flip_bytes FILE MARKER: overwrite the first byte of every occurrence of
# MARKER in FILE (binary-safe, in place). Fails (99) if MARKER is absent.
flip_bytes() {
	local file=$1 marker=$2 offs off
	offs=$(grep -obUaF -- "$marker" "$file" | cut -d: -f1)
	if [ -z "$offs" ]; then
		echo "flip_bytes: '$marker' not found in $file" >&2
		exit 99
	fi
	for off in $offs; do
		printf 'X' | dd of="$file" bs=1 seek="$off" conv=notrunc status=none || exit 99
	done
}

# flip_segment FILE WHERE: damage the format-2 or -3 segment that ends the log
# (found by the chain head it stores, `docket stats --json`), in place.
# WHERE: "hash" flips a byte of its stored chain hash, "body" one in the
# middle of its (compressed) payloads, "partb" the first byte of a format-3
# segment's part B (the outcomes). Fails (99) if there is no such segment.
flip_segment() {
	local file=$1 where=$2 head
	head=$(docket stats --json | jq -r '.chain_head') || exit 99
	python3 - "$file" "$head" "$where" <<'PY' || exit 99
import sys
path, head, where = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3]
data = bytearray(open(path, "rb").read())
at = -1
pos = data.find(head)
while pos >= 0:
    if pos >= 6 and data[pos - 6] in (2, 3):
        at = pos - 6
        break
    pos = data.find(head, pos + 1)
if at < 0:
    sys.exit("flip_segment: no segment ends at the head")
count = data[at + 4] << 8 | data[at + 5]
p = at + 38
for _ in range(count):
    p += 1
    while data[p] & 0x80:
        p += 1
    p += 1
size_a = -1
if data[at] == 3:
    # format 3: part B's codec, part A's size (LEB128), then part A
    p += 1
    size_a, shift = 0, 0
    while True:
        size_a |= (data[p] & 0x7f) << shift
        shift += 7
        p += 1
        if not data[p - 1] & 0x80:
            break
if where == "partb":
    # format 3: the first byte of part B (its zstd frame's magic number)
    if size_a < 0:
        sys.exit("flip_segment: the segment at the head is not format 3")
    data[p + size_a] ^= 0xff
elif where == "hash":
    data[at + 6 + 16] ^= 0x01
else:
    # the body ends where the value does: LMDB keeps it in one piece; its
    # middle is well inside the zstd frame (format 3: part A's)
    data[p + 24] ^= 0xff
open(path, "r+b").write(data)
PY
}

# wait_for FILE TEXT [SECONDS]: wait until FILE contains TEXT (default 10 s).
wait_for() {
	local file=$1 text=$2 limit=${3:-10} i=0
	while ! grep -qF -- "$text" "$file" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt $((limit * 20)) ]; then
			echo "wait_for: '$text' did not appear in $file" >&2
			return 1
		fi
		sleep 0.05
	done
}

# hook_feed CLIENT FILE [HOOK_ARGS...]: send each line of FILE (hook events,
# TRANSCRIPT replaced by $PWD/transcript.jsonl) to `docket hook CLIENT`, one
# process per event as the client runs it; print what the hook answered
# ("EVENT -> exit N: stdout") for every event that answered something.
hook_feed() {
	local client=$1 file=$2 line out rc name
	shift 2
	while IFS= read -r line || [ -n "$line" ]; do
		[ -z "$line" ] && continue
		line=${line//TRANSCRIPT/$PWD/transcript.jsonl}
		name=$(printf '%s' "$line" | jq -r '.hook_event_name + " " + (.tool_use_id // "")')
		out=$(printf '%s\n' "$line" | docket hook "$client" "$@")
		rc=$?
		if [ $rc -ne 0 ] || [ -n "$out" ]; then
			echo "$name-> exit $rc: $out"
		fi
	done <"$file"
}

# feed_claude_session LEDGER BIN...: each event of the Claude Code fixture
# session (TRANSCRIPT replaced) to `BIN... -L LEDGER hook claude`, one
# process per event; prints only the events that did not answer 0.
feed_claude_session() {
	local ledger=$1 line
	shift
	while IFS= read -r line; do
		printf '%s\n' "${line//TRANSCRIPT/$PWD/transcript.jsonl}" | "$@" -L "$ledger" hook claude >/dev/null ||
			echo "$ledger: exit $?"
	done <"$FIXTURES/hooks/claude/session.jsonl"
}

# trail: the ledger's events without times and hashes, one compact line each.
trail() {
	docket log --json | jq -c '[.seq, .type, .invocation, .status, .result, .decision.verdict, .error]
		| map(select(. != null))'
}

# rpc split|merged ARGS...: run `docket serve --stdio ARGS...` on the
# JSON-RPC requests of stdin, one per batch (split) or all at once
# (merged), and print one summary line per reply (tests/cli/rpc.py).
rpc() {
	local mode=$1
	shift
	python3 "$(dirname "${BASH_SOURCE[0]}")/rpc.py" "$mode" docket serve --stdio "$@"
}

# both_ways FILE ARGS...: the requests of FILE split and merged on fresh
# ledgers; prints each run and whether the ledger verifies.
both_ways() {
	local file=$1 mode
	shift
	for mode in split merged; do
		echo "--- $mode"
		rm -rf "ledger-$mode"
		DOCKET_LEDGER="ledger-$mode" docket init >/dev/null
		DOCKET_LEDGER="ledger-$mode" rpc "$mode" "$@" <"$file"
		DOCKET_LEDGER="ledger-$mode" docket verify >/dev/null && echo "verify ok"
	done
}

# flip_meta FILE NAME OFFSET: flip a byte of the ledger's meta record NAME
# (found by its key, the value follows it in the LMDB leaf node), OFFSET
# bytes into the value, in place. Fails (99) when the record is not found.
flip_meta() {
	python3 - "$1" "$2" "$3" <<'PY' || exit 99
import sys
path, name, off = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
data = bytearray(open(path, "rb").read())
pos = data.find(name)
# an LMDB leaf node: 4-byte data size, 2 flags, 2-byte key size, key, data
while pos >= 0 and int.from_bytes(data[pos - 2:pos], "little") != len(name):
    pos = data.find(name, pos + 1)
if pos < 0:
    sys.exit("flip_meta: no record " + name.decode())
data[pos + len(name) + off] ^= 0x01
open(path, "r+b").write(data)
PY
}

# large_stream FILE: session s, then 6,000 calls (intent, dispatch): 12,001
# lines, enough for record to parse in chunks while it appends.
large_stream() {
	python3 -c '
import json
print(json.dumps({"type": "session.opened", "session": "s", "runtime": "t/1"}))
for i in range(6000):
    c = "c%d" % i
    print(json.dumps({"type": "tool.intent", "session": "s", "invocation": c, "tool": "shell",
                      "args": {"command": ["echo", c]}, "decision": {"verdict": "allowed"}}))
    print(json.dumps({"type": "tool.dispatched", "session": "s", "invocation": c}))
' >"$1"
}
