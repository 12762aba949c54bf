# load errors (exit 2): a command rule without a decision (it used to mean
# allow), a failing match / not_match example, and a Claude settings file or
# Codex rules loaded as docket YAML ("did you mean claude:/codex:")
printf 'version: 1\ncommands:\n  - pattern: [rm, -rf]\n' > nodecision.yaml
printf 'version: 1\ncommands:\n  - pattern: [git, status]\n    decision: allow\n    match: ["git push"]\n' > match.yaml
printf 'version: 1\ncommands:\n  - pattern: [git]\n    decision: deny\n    not_match: [[git, push]]\n' > notmatch.yaml
cp "$FIXTURES/policies/settings.json" settings.json
cp "$FIXTURES/policies/default.rules" default.rules
for f in nodecision.yaml match.yaml notmatch.yaml settings.json default.rules; do
	docket policy check $f
	echo "exit $?"
done
