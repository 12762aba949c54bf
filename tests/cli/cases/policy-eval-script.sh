# bash -lc with two segments: a prefix rule allows the first, nothing matches
# the second (a dangerous rm -f): the strictest wins, and each segment is shown
cp "$FIXTURES/policies/default.rules" .
ctx='{"platform":"linux","cwd":"/home/dev/app","workspace_roots":["/home/dev/app"],"approval_policy":"on-request","sandbox_policy":{"type":"workspace-write","network_access":false}}'
call='{"tool":"shell","args":{"command":["bash","-lc","npm run test && rm -f coverage/lcov.info"]}}'
docket policy eval codex:default.rules --call "$call" --context "$ctx" &&
docket policy eval codex:default.rules --call "$call" --context "$ctx" --json
