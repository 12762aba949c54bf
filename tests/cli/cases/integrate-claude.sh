# integrate claude: docket's hooks merged into a settings file, the user's own
# keys, rules and hooks untouched; a second run changes nothing; --dry-run
# prints the diff and writes nothing; --uninstall gives back the same document
# (re-indented: docket writes JSON with two-space indentation)
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/managed-settings.json
unset CLAUDE_CONFIG_DIR CLAUDE_PROJECT_DIR
mkdir -p proj/.claude
cat >proj/.claude/settings.json <<'JSON'
{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm run test:*)"],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "./lint-hook.sh"}]
      }
    ]
  }
}
JSON
cp proj/.claude/settings.json original.json
cd proj
mask() { sed -e "s|$(dirname "$PWD")|<dir>|g" -e "s|'[^']*/docket\(-hook\(-fast\)\{0,1\}\)\{0,1\}'|'<docket>'|g" -e "s| /[^ ]*/docket\(-hook\(-fast\)\{0,1\}\)\{0,1\} | <docket> |g"; }
docket integrate claude --scope project --dry-run | mask | grep -v '^@@' | head -12
cmp -s .claude/settings.json ../original.json && echo "dry run: file unchanged"
docket integrate claude --scope project --enforce --policy ../policy.yaml | mask
docket integrate claude --scope project --enforce --policy ../policy.yaml | mask
jq -c '{model, permissions, user_hook: .hooks.PreToolUse[0]}' .claude/settings.json
jq -r '.hooks | keys_unsorted | join(" ")' .claude/settings.json
jq -r '.hooks.PreToolUse[1].hooks[0].command' .claude/settings.json | mask
test -d ledger && echo "ledger created"
docket integrate claude --scope project --uninstall | mask
[ "$(jq -S . .claude/settings.json)" = "$(jq -S . ../original.json)" ] && echo "uninstall: the original document"
docket integrate claude --settings ../fresh/settings.json | mask
jq -r '.hooks.Stop[0].hooks[0].command' ../fresh/settings.json | mask
docket integrate claude --settings ../fresh/settings.json --uninstall | mask
cat ../fresh/settings.json
