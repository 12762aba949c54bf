# a deny rule: denied (a verdict, not an error: exit 0)
cp "$FIXTURES/policies/team.yaml" .
ctx='{"platform":"linux","cwd":"/home/dev/app","workspace_roots":["/home/dev/app"]}'
call='{"tool":"shell","args":{"command":["rm","-rf","build"]}}'
docket policy eval team.yaml --call "$call" --context "$ctx" &&
docket policy eval team.yaml --call "$call" --context "$ctx" --json
