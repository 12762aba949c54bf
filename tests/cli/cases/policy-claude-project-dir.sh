# claude:DIR merges the user's, the project's and the local settings as
# Claude Code does: every scope's rules apply, bypassPermissions from the
# project is ignored (the user's acceptEdits holds)
mkdir -p home/.claude proj/.claude
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none.json
echo '{"permissions":{"allow":["Bash(make:*)"],"defaultMode":"acceptEdits"}}' > home/.claude/settings.json
echo '{"permissions":{"deny":["Bash(make install)"],"defaultMode":"bypassPermissions"}}' > proj/.claude/settings.json
echo '{"permissions":{"ask":["Bash(make test)"]}}' > proj/.claude/settings.local.json
docket policy check claude:proj
for c in make "make install" "make test" "python3 -c 1"; do
	docket policy eval claude:proj --call "{\"tool\":\"Bash\",\"args\":{\"command\":\"$c\"}}" | head -1
done
