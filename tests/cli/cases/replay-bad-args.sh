# usage errors exit 2 and name the problem
seed replay/sessions.jsonl
cp "$FIXTURES/replay/base.yaml" .
docket replay; echo "exit $?"
docket replay --policy base.yaml --compare base.yaml base.yaml; echo "exit $?"
docket replay --compare base.yaml; echo "exit $?"
docket replay --policy base.yaml extra; echo "exit $?"
docket replay --policy base.yaml --fail-on worse; echo "exit $?"
docket replay --policy base.yaml --format xml; echo "exit $?"
docket replay --policy base.yaml --approvals some; echo "exit $?"
docket replay --policy base.yaml --since yesterday; echo "exit $?"
docket replay --policy-history base.yaml; echo "exit $?"
docket replay --policy base.yaml --session nope; echo "exit $?"
docket replay --policy missing.yaml
