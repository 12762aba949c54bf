# docket-hook (the lean build integrate installs) records exactly what
# `docket hook` records: a Claude Code session fed event by event to both,
# each into its own ledger, gives the same events, and both verify. Both
# hash with libcrypto's SHA256_* (no EVP fetch, lib/ledger/frame.c); on a
# ledger docket-hook creates, OpenSSL's default provider draws the ledger id
# (RAND_bytes); in enforce mode it denies as docket does
mkdir -p home/.claude app/.claude
echo '{"permissions":{"allow":["Bash(git status)"],"deny":["Bash(rm:*)"],"defaultMode":"acceptEdits"},"model":"x"}' >home/.claude/settings.json
echo '{"permissions":{"ask":["Bash(npm:*)"],"allow":["Bash(git status)"]}}' >app/.claude/settings.json
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none CLAUDE_PROJECT_DIR=$PWD/app
cp "$FIXTURES/hooks/claude/transcript.jsonl" transcript.jsonl
lean=$(dirname "$(readlink -f "$(command -v docket)")")/docket-hook
events() { docket -L "$1" log --json | jq -c 'del(.time, .hash, .seq, .epoch)
	| if .type == "tool.dispatched" then del(.token) else . end'; }
docket -L full init >/dev/null && docket -L lean init >/dev/null
feed_claude_session full docket
feed_claude_session lean "$lean"
feed_claude_session created "$lean"    # no ledger yet: docket-hook creates it
events full >full.txt
events lean >lean.txt
events created >created.txt
echo "events: $(wc -l <full.txt)"
cmp full.txt lean.txt && echo "lean = full"
cmp full.txt created.txt && echo "created = full"
for l in full lean created; do docket -L "$l" verify >/dev/null && echo "$l verifies"; done
echo '{"session_id":"e","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_use_id":"d1","cwd":"/w"}' |
	"$lean" -L lean hook claude --enforce --policy "$FIXTURES/policies/team.yaml" | jq -r '.hookSpecificOutput.permissionDecision'
docket -L lean verify >/dev/null && echo "lean verifies after a denial"
