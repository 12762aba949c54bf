# docket-hook-fast (what integrate installs on x86-64 Linux) hands each
# event to the hook server, the lingering folder an earlier docket-hook of
# the same context left, and records exactly what docket-hook records. The
# server answers only its own context; anything else, a dead or a stopped
# server, goes to docket-hook beside it, and with no docket-hook either the
# hook fails closed. The policy is read for every event. (docket-hook is
# made unrunnable, not removed, to show who answered: the context names it
# by its file's identity, so that a server of a docket-hook an upgrade
# replaced is not asked.)
mkdir -p home bin
echo '{"permissions":{"allow":["Bash(git status)"],"deny":["Bash(rm:*)"]}}' >home/settings.json
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none
cp "$FIXTURES/hooks/claude/transcript.jsonl" transcript.jsonl
built=$(dirname "$(readlink -f "$(command -v docket)")")
cp "$built/docket-hook" "$built/docket-hook-fast" bin/
fast=$PWD/bin/docket-hook-fast
events() { docket -L "$1" log --json | jq -c 'del(.time, .hash, .seq, .epoch)
	| if .type == "tool.dispatched" then del(.token) else . end'; }
pre() { printf '{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"%s"},"tool_use_id":"%s"}\n' "$1" "$2"; }
server() { pgrep -f "docket-hook -L $PWD/$1 hook" | head -1; }
# the server of LEDGER listens (it starts once its first fold is done)
listening() {
	python3 -c 'import socket, sys, time
for _ in range(200):
    try:
        socket.socket(socket.AF_UNIX).connect(sys.argv[1] + "/spool/.hook.sock"); sys.exit(0)
    except OSError:
        time.sleep(0.025)
sys.exit(1)' "$PWD/$1" || echo "$1: no server"
}
# the decision a PreToolUse answer carries ("none": allowed, nothing to say)
decision() { jq -rs '.[0].hookSpecificOutput.permissionDecision // "none"'; }

echo "== the same records as docket hook"
docket -L full init >/dev/null
feed_claude_session full docket
feed_claude_session "$PWD/fast" "$fast"
events full >full.txt
events fast >fast.txt
cmp full.txt fast.txt && echo "fast = full ($(wc -l <full.txt) events)"
docket -L fast verify >/dev/null && echo "fast verifies"

echo "== the server answers: docket-hook cannot run"
listening fast
chmod -x bin/docket-hook
pre "git status" t1 | "$fast" -L "$PWD/fast" hook claude; echo "exit $?"
docket -L fast log --json | jq -r 'select(.invocation == "t1") | .type'

echo "== another context (an environment variable) is not the server's"
pre "git status" t2 | X=1 "$fast" -L "$PWD/fast" hook claude 2>&1; echo "exit $?"
# the same length, one byte apart
pre "git status" t4 | DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/nonf "$fast" -L "$PWD/fast" hook claude 2>&1; echo "exit $?"
pre "rm -rf b" t3 | X=1 "$fast" -L "$PWD/fast" hook claude --enforce --policy "claude:$PWD/home/settings.json" 2>&1
echo "exit $?"
chmod +x bin/docket-hook

echo "== the newest context wins: the server of the old one stepped down"
pre "git status" y1 | Y=1 "$fast" -L "$PWD/fast" hook claude; echo "exit $?"
listening fast
chmod -x bin/docket-hook
pre "git status" y2 | Y=1 "$fast" -L "$PWD/fast" hook claude; echo "exit $?"
chmod +x bin/docket-hook
docket -L fast log --json | jq -r 'select(.invocation == "y1" or .invocation == "y2") | .invocation + " " + .type'

echo "== enforce: the policy is read for every event (a budget of 400 ms throughout)"
P="claude:$PWD/home/settings.json"
pre "git status" e0 | "$fast" -L "$PWD/enf" hook claude --enforce --policy "$P" --budget 400 | decision
listening enf
chmod -x bin/docket-hook
pre "rm -rf b" e1 | "$fast" -L "$PWD/enf" hook claude --enforce --policy "$P" --budget 400 | decision
pre "git status" e2 | "$fast" -L "$PWD/enf" hook claude --enforce --policy "$P" --budget 400 | decision
echo '{"permissions":{"deny":["Bash(git:*)","Bash(rm:*)"]}}' >home/settings.json
pre "git status" e3 | "$fast" -L "$PWD/enf" hook claude --enforce --policy "$P" --budget 400 | decision
chmod +x bin/docket-hook
docket -L enf log --json | jq -r 'select(.type == "tool.denied") | .invocation'

echo "== a stopped server: docket-hook answers within the budget"
pid=$(server enf)
kill -STOP "$pid"
start=$(date +%s%N)
pre "rm -rf c" e4 | "$fast" -L "$PWD/enf" hook claude --enforce --policy "$P" --budget 400 | decision
ms=$((($(date +%s%N) - start) / 1000000))
[ "$ms" -lt 400 ] && echo "answered within the budget"
kill -CONT "$pid"
listening enf

echo "== a killed server: its socket is stale, docket-hook answers and serves again"
# killed while idle (its folds done); one killed inside a write transaction
# is a writer killed there: the next writer recovers LMDB's lock
for i in $(seq 100); do [ -s enf/spool/journal ] || break; sleep 0.05; done
kill -KILL "$pid"
# gone once its folder lock is free (init reaps it when it will)
for i in $(seq 100); do flock -n enf/spool/.folder true && break; sleep 0.05; done
pre "git status" e5 | "$fast" -L "$PWD/enf" hook claude --enforce --policy "$P" --budget 400 | decision
listening enf
chmod -x bin/docket-hook
pre "rm -rf d" e6 | "$fast" -L "$PWD/enf" hook claude --enforce --policy "$P" --budget 400 | decision
chmod +x bin/docket-hook
docket -L enf log --json | jq -r 'select(.type == "tool.intent") | .invocation' | sort | uniq -c | awk '{print $2, $1}'
docket -L enf verify >/dev/null && echo "enf verifies"

echo "== an upgraded docket-hook: the server of the old one is not asked"
pre "git status" u0 | "$fast" -L "$PWD/up" hook claude; echo "exit $?"
listening up
cp bin/docket-hook bin/docket-hook.new && mv bin/docket-hook.new bin/docket-hook
chmod -x bin/docket-hook
pre "git status" u1 | "$fast" -L "$PWD/up" hook claude 2>&1; echo "exit $?"
chmod +x bin/docket-hook

echo "== DOCKET_HOOK_LINGER_MS=0: the folder folds and goes, no server"
pre "git status" z1 | DOCKET_HOOK_LINGER_MS=0 "$fast" -L "$PWD/nolinger" hook claude; echo "exit $?"
for i in $(seq 100); do [ -z "$(server nolinger)" ] && break; sleep 0.05; done
[ -e nolinger/spool/.hook.sock ] || echo "no server"
docket -L nolinger log --json | jq -r 'select(.invocation == "z1") | .type'

echo "== an event that never ends (stdin left open): the budget's answer, as docket-hook's watchdog"
sleep 1 | "$fast" -L "$PWD/enf" hook claude --enforce --policy "$P" --budget 300 2>&1; echo "exit $?"
sleep 1 | "$fast" -L "$PWD/enf" hook claude --budget 300 2>&1; echo "exit $?"
