# replay against Claude Code settings decides each session under its
# recorded Claude Code version (issue 33): a version docket does not model
# (claude-code/2.1.0 here) is decided as the nearest modelled one, and the
# session line says so; Codex sessions get no note, and neither does a
# replay against a docket policy (its verdicts do not depend on the version).
seed replay/sandboxes.jsonl
cp "$FIXTURES/replay/strict.yaml" .
echo '{"permissions":{"allow":["Bash(git status)"]}}' > settings.json
echo '$ docket replay --policy claude:settings.json'
docket replay --policy claude:settings.json | sed -n '1,/^$/p'
echo '$ docket replay --policy strict.yaml'
docket replay --policy strict.yaml | grep 'note:' || echo '(no note)'
