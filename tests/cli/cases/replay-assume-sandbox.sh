# the assumptions of a replay (issue 30): each session is named with the
# sandbox the policy assumed and why, the one its runtime had, and its
# baseline; a warning when they differ. A Claude Code session ran with no
# sandbox; a Codex one with its recorded sandbox_policy (captured live) or
# none recorded (a codex: source then says it assumes Codex's default); a
# Claude Code session whose recorded settings enable its sandbox had
# workspace_write; an imported one's baseline says its permission rules are
# not in the transcript.
# --assume-sandbox replays every session as if its runtime had that sandbox
# (none: the Claude Code warning goes, the recorded Codex one warns, and the
# Claude Code call is decided "unrestricted", not "sandboxed"); an
# unknown mode is a usage error (exit 2).
seed replay/sandboxes.jsonl
cp "$FIXTURES/replay/strict.yaml" "$FIXTURES/policies/default.rules" .
echo '$ docket replay --policy strict.yaml'
docket replay --policy strict.yaml
echo '$ docket replay --policy strict.yaml --assume-sandbox none'
docket replay --policy strict.yaml --assume-sandbox none
echo '$ docket replay --policy codex:default.rules'
docket replay --policy codex:default.rules | sed -n '1,/^$/p'
echo '$ docket replay --policy codex:default.rules --format json (sessions)'
docket replay --policy codex:default.rules --format json | grep '"sessions"'
echo '$ docket replay --policy strict.yaml --assume-sandbox workspace-write'
docket replay --policy strict.yaml --assume-sandbox workspace-write
