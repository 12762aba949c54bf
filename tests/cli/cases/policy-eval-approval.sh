# an ask rule: approval_required, with the rule's justification as the reason
cp "$FIXTURES/policies/team.yaml" .
ctx='{"platform":"linux","cwd":"/home/dev/app","workspace_roots":["/home/dev/app"]}'
call='{"tool":"shell","args":{"command":["git","push","origin","main"]}}'
docket policy eval team.yaml --call "$call" --context "$ctx" &&
docket policy eval team.yaml --call "$call" --context "$ctx" --json
