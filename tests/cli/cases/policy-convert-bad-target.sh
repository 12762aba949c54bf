# convert writes docket YAML or Codex .rules only
cp "$FIXTURES/policies/settings.json" .
docket policy convert claude:settings.json --to claude
