# explain prints the normalised policy as docket YAML (defaults filled in)
cp "$FIXTURES/policies/team.yaml" .
docket policy explain team.yaml
