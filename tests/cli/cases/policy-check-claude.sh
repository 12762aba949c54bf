# a Claude Code settings.json: the permissions are read, other keys (env)
# are ignored
cp "$FIXTURES/policies/settings.json" .
docket policy check claude:settings.json &&
docket policy check --json claude:settings.json
