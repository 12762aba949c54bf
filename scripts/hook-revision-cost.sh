#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# hook-revision-cost.sh DOCKET_HOOK_BIN strace|callgrind: the cost of one
# --enforce PreToolUse event (denied) of the lean docket-hook in a Claude
# Code session that already records its revision (docs/performance.md,
# "The enforced policy as a revision"): its fsync-class syscalls, or its
# instruction count. Run it for a base build and this one, alternated.
# One PreToolUse (denied by the policy) into a session that already has its revision.
set -e
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); SRC=$(cd "$(dirname "$0")/.." && pwd); W=$(mktemp -d); cd $W
export HOME=$W DOCKET_CLAUDE_MANAGED_SETTINGS=/nonexistent
cp "$SRC/fixtures/policies/team.yaml" p.yaml
E='"session_id":"perf","cwd":"/w","permission_mode":"default"'
ev() { printf '{%s,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf b%s"},"tool_use_id":"t%s"}\n' "$E" "$1" "$1"; }
echo "{$E,\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}" | $B -L l hook claude --enforce --policy p.yaml >/dev/null
ev 1 | $B -L l hook claude --enforce --policy p.yaml >/dev/null
if [ "$2" = strace ]; then
  ev 2 | strace -f -c -e trace=fsync,fdatasync,msync,sync_file_range $B -L l hook claude --enforce --policy p.yaml 2>&1 >/dev/null | grep -E "fsync|fdatasync|msync|total"
else
  ev 2 | valgrind --tool=callgrind --callgrind-out-file=$W/cg.out $B -L l hook claude --enforce --policy p.yaml 2>&1 >/dev/null | grep -E "Collected"
fi
rm -rf $W
