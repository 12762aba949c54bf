# integrate codex: hooks in $CODEX_HOME/hooks.json and their trust entries in
# config.toml (Codex skips an untrusted hook silently), verified after writing;
# the user's settings stay byte for byte; a second run changes nothing;
# --uninstall removes both; --scope managed writes the managed file, no trust
export CODEX_HOME=$PWD/codex-home DOCKET_CODEX_MANAGED_DIR=$PWD/etc-codex
mkdir -p "$CODEX_HOME"
printf 'model = "gpt-5"\napproval_policy = "on-request"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n' >"$CODEX_HOME/config.toml"
cp "$CODEX_HOME/config.toml" original.toml
mask() { sed -e "s|$PWD|<dir>|g" -e "s|'[^']*/docket\(-hook\(-fast\)\{0,1\}\)\{0,1\}'|'<docket>'|g" -e "s| /[^ ]*/docket\(-hook\(-fast\)\{0,1\}\)\{0,1\} | <docket> |g"; }
docket integrate codex --enforce --policy "$FIXTURES/policies/team.yaml" | mask
docket integrate codex --enforce --policy "$FIXTURES/policies/team.yaml" | mask
grep -c '^\[hooks.state' "$CODEX_HOME/config.toml"
head -5 "$CODEX_HOME/config.toml"
grep -o 'hooks.state."[^"]*"' "$CODEX_HOME/config.toml" | mask
jq -r '.hooks | keys_unsorted | join(" ")' "$CODEX_HOME/hooks.json"
# the hash follows the formula: sha256 of the compact, key-sorted handler JSON
cmd=$(jq -r '.hooks.PreToolUse[0].hooks[0].command' "$CODEX_HOME/hooks.json")
want=$(jq -cnS --arg c "$cmd" '{event_name:"pre_tool_use",hooks:[{type:"command",command:$c,timeout:600,async:false}]}' | tr -d '\n' | sha256sum | cut -c1-64)
grep -A1 ':pre_tool_use:0:0"' "$CODEX_HOME/config.toml" | grep -q "sha256:$want" && echo "pre_tool_use hash matches the formula"
docket integrate codex --uninstall | mask
cmp "$CODEX_HOME/config.toml" original.toml && echo "config.toml: the original bytes"
cat "$CODEX_HOME/hooks.json"
docket integrate codex --scope managed | mask
jq -r '.hooks.Stop[0].hooks[0].command' etc-codex/hooks.json | mask
docket integrate codex --settings x.json
echo "exit $?"
