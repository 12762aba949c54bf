# convert writes docket YAML only
cp "$FIXTURES/policies/settings.json" .
docket policy convert claude:settings.json --to codex
