# a command an allow rule covers: allowed, and (as in Codex) it runs outside
# the sandbox; the matched rule names file:line
cp "$FIXTURES/policies/team.yaml" .
ctx='{"platform":"linux","cwd":"/home/dev/app","workspace_roots":["/home/dev/app"]}'
call='{"tool":"shell","args":{"command":["npm","run","lint"]}}'
docket policy eval team.yaml --call "$call" --context "$ctx" &&
docket policy eval team.yaml --call "$call" --context "$ctx" --json
