# on Windows the policy says the sandbox cannot be enforced: a call that
# would run inside it is unsupported (final: no rule is proposed that would
# let it run unsandboxed)
cp "$FIXTURES/policies/team.yaml" .
ctx='{"platform":"windows","cwd":"C:\\work\\app"}'
call='{"tool":"shell","args":{"command":["make","build"]}}'
docket policy eval team.yaml --call "$call" --context "$ctx" &&
docket policy eval team.yaml --call "$call" --context "$ctx" --json
