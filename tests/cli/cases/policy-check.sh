# a valid docket YAML policy: one summary line (JSON with --json), exit 0
cp "$FIXTURES/policies/team.yaml" .
docket policy check team.yaml &&
docket policy check --json team.yaml
