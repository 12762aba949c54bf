# policy check catches what would silently never match: misspelt Claude
# tool names and specifiers are errors with "did you mean" (exit 1)
cp "$FIXTURES/policies/typos-settings.json" settings.json
docket policy check claude:settings.json
echo "exit $?"
docket policy check claude:settings.json --json | jq -c '.findings[] | {severity, code, line}'
