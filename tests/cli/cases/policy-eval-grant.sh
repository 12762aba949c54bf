# a session grant turns approval_required into allowed, but never overrides
# a deny rule
cp "$FIXTURES/policies/default.rules" .
ctx='{"platform":"linux","cwd":"/home/dev/app","workspace_roots":["/home/dev/app"],"approval_policy":"on-request","sandbox_policy":{"type":"workspace-write"},"grants":[{"command":["git","push"]},{"command":["rm","-rf","node_modules"]}]}'
echo '$ git push (granted, an ask rule)'
docket policy eval codex:default.rules --context "$ctx" \
	--call '{"tool":"shell","args":{"command":["git","push"]}}' || exit
echo '$ rm -rf node_modules (granted, a forbidden rule)'
docket policy eval codex:default.rules --context "$ctx" \
	--call '{"tool":"shell","args":{"command":["rm","-rf","node_modules"]}}' || exit
docket policy eval codex:default.rules --context "$ctx" --json \
	--call '{"tool":"shell","args":{"command":["rm","-rf","node_modules"]}}'
