# Two verdicts in replay (issue 26): the engine's (what Codex decides) and
# the enforced one (what docket's hooks decide, never looser). A kept call
# whose enforced verdict is stricter shows both (c5: Codex would ask for
# `sudo rm`, the deny rule on rm holds behind sudo); the head counts them.
# --ran-despite-deny lists the calls that ran (were dispatched) although a
# deny rule names them: c1 (`env curl`, which the engine allows) and c4;
# not c3 (never dispatched) nor c2 (no rule). Exit 1 when it finds one,
# 0 when none (a policy with no rules); it takes --policy only (exit 2).
seed replay/ran-despite-deny.jsonl
cp "$FIXTURES/replay/deny-curl-rm.yaml" .
printf 'version: 1\n' > open.yaml
echo '$ docket replay --policy deny-curl-rm.yaml'
docket replay --policy deny-curl-rm.yaml
echo '$ docket replay --policy deny-curl-rm.yaml --json (totals, c5)'
docket replay --policy deny-curl-rm.yaml --json | jq -c '.totals, (.changes[] | select(.invocation == "c5") | {now, enforced, enforced_reason})'
echo '$ docket replay --policy deny-curl-rm.yaml --ran-despite-deny'
docket replay --policy deny-curl-rm.yaml --ran-despite-deny
echo "exit $?"
echo '$ docket replay --policy deny-curl-rm.yaml --ran-despite-deny --json'
docket replay --policy deny-curl-rm.yaml --ran-despite-deny --json
echo "exit $?"
echo '$ docket replay --policy open.yaml --ran-despite-deny'
docket replay --policy open.yaml --ran-despite-deny
echo "exit $?"
echo '$ docket replay --compare open.yaml deny-curl-rm.yaml --ran-despite-deny'
docket replay --compare open.yaml deny-curl-rm.yaml --ran-despite-deny
echo "exit $?"
