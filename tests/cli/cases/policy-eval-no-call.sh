# eval without --call: exit 2
cp "$FIXTURES/policies/team.yaml" .
docket policy eval team.yaml
