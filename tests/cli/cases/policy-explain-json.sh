# explain --json: the same policy as JSON, each rule with its origin
cp "$FIXTURES/policies/team.yaml" .
docket policy explain --json team.yaml
