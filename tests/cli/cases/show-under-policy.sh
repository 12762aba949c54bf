# show --policy SRC (issue 26): each intent also shows its verdict under SRC,
# replayed in the session's context; both the engine's and the enforced one
# when they differ (c1: Codex would run `env curl` sandboxed, the deny rule
# names curl; c5: sudo rm). Without --policy nothing changes; a policy that
# does not load is exit 2.
seed replay/ran-despite-deny.jsonl
cp "$FIXTURES/replay/deny-curl-rm.yaml" .
echo '$ docket show s1 --policy deny-curl-rm.yaml'
docket show s1 --policy deny-curl-rm.yaml | grep intent
echo '$ docket show s1 --policy deny-curl-rm.yaml --json'
docket show s1 --policy deny-curl-rm.yaml --json | jq -c '.invocations[] | [.invocation, .under_policy]'
echo '$ docket show s1 --json (no policy)'
docket show s1 --json | jq -c '[.invocations[] | has("under_policy")]'
echo '$ docket show s1 --policy missing.yaml'
docket show s1 --policy missing.yaml
echo "exit $?"
