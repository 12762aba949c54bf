# --call that is not JSON: exit 2, naming the option and the position
cp "$FIXTURES/policies/team.yaml" .
docket policy eval team.yaml --call '{"tool":"shell","args":{"command":["ls"]}'
