# a YAML syntax error names file:line:column and what went wrong; exit 2
cp "$FIXTURES/policies/syntax-error.yaml" .
docket policy check syntax-error.yaml
