# convert --to codex: command rules (examples kept), network rules; the
# .rules file loads as codex: and converts back to the same rules; what
# .rules cannot say (a tool rule) is refused (exit 2), never dropped
cp "$FIXTURES/policies/authoring.yaml" .
sed '/^tools:/,$d' authoring.yaml > commands.yaml
printf 'network:\n  rules:\n    - {host: registry.npmjs.org, decision: allow}\n' >> commands.yaml
docket policy convert commands.yaml --to codex > c.rules || exit
cat c.rules
docket policy convert codex:c.rules | sed -n '/^commands:/,$p' > back.yaml || exit
docket policy convert commands.yaml | sed -n '/^commands:/,$p' > direct.yaml || exit
diff direct.yaml back.yaml && echo "back to docket YAML: the same command rules"
docket policy convert authoring.yaml --to codex
