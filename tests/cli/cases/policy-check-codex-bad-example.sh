# a .rules file whose `match` example does not match its own pattern is
# rejected at load, naming the example's position; exit 2
cp "$FIXTURES/policies/bad-example.rules" .
docket policy check codex:bad-example.rules
