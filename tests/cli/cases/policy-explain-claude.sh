# a Claude Code settings.json explained: the rule strings are kept as they
# are, defaultMode becomes mode with Claude's heuristics
cp "$FIXTURES/policies/settings.json" .
docket policy explain claude:settings.json
