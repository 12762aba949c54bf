# integrate --check: every way a client would run calls unrecorded is a FAIL
# with its fix (exit 1): no hooks, disableAllHooks, managed-only hooks, a
# hook program that is gone, a timeout not above docket's 2 s budget, a
# missing ledger, an untrusted Codex hook, Codex's allow_managed_hooks_only.
# User scope records into one ledger ($XDG_DATA_HOME/docket, else ~/.docket).
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/managed.json
export CODEX_HOME=$PWD/home/.codex DOCKET_CODEX_MANAGED_DIR=$PWD/etc-codex
unset CLAUDE_CONFIG_DIR CLAUDE_PROJECT_DIR DOCKET_LEDGER XDG_DATA_HOME
mkdir -p home
mask() { sed -e "s|$PWD|<dir>|g" -e "s| /[^ ]*/docket\(-hook\(-fast\)\{0,1\}\)\{0,1\} | <docket> |g"; }
S=home/.claude/settings.json
docket integrate claude --check | mask; echo "exit $?"
docket integrate claude | mask; echo "exit $?"
test -d home/.docket && echo "the user-scope ledger is ~/.docket"
jq '.disableAllHooks = true' $S >t && mv t $S
docket integrate claude --check | mask; echo "exit ${PIPESTATUS[0]}"
jq 'del(.disableAllHooks) | .hooks.PreToolUse[0].hooks[0].timeout = 2' $S >t && mv t $S
docket integrate claude --check | mask; echo "exit ${PIPESTATUS[0]}"
jq '.hooks.PreToolUse[0].hooks[0].timeout = 30 | .hooks.Stop[0].hooks[0].command = "/nonexistent/docket-hook -L /x hook claude"' $S >t && mv t $S
docket integrate claude --check | mask; echo "exit ${PIPESTATUS[0]}"
# a hand-written command with double quotes and a backslash is read as sh reads it
jq '.hooks.Stop[0].hooks[0].command = "\"/no such/dir\"/docket\\-hook -L \"/x\" hook claude"' $S >t && mv t $S
docket integrate claude --check | mask | grep 'hooks.Stop'
jq 'del(.hooks.SessionEnd)' $S >t && mv t $S
docket integrate claude --check | mask; echo "exit ${PIPESTATUS[0]}"
echo '{"allowManagedHooksOnly": true}' >managed.json
XDG_DATA_HOME=$PWD/xdg docket integrate claude | mask; echo "exit ${PIPESTATUS[0]}"
rm managed.json
# Codex: trust entries are part of being on
docket integrate codex | mask; echo "exit ${PIPESTATUS[0]}"
sed -i 's/trusted_hash = "sha256:./trusted_hash = "sha256:0/' home/.codex/config.toml
docket integrate codex --check | mask; echo "exit ${PIPESTATUS[0]}"
docket integrate codex | grep -c '^ok'
mkdir -p etc-codex && printf '[hooks]\nallow_managed_hooks_only = true\n' >etc-codex/requirements.toml
docket integrate codex --check | mask; echo "exit ${PIPESTATUS[0]}"
rm etc-codex/requirements.toml
rm -r home/.docket
docket integrate codex --check | mask | grep -c 'which is not a ledger directory'
docket integrate codex --check --scope managed | mask; echo "exit ${PIPESTATUS[0]}"
