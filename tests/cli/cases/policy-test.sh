# policy test: a policy's test file passes (exit 0); -v lists every case;
# --json gives each case's expectation and what it got
cp "$FIXTURES/policies/authoring.yaml" "$FIXTURES/policies/authoring.test.yaml" .
docket policy test authoring.yaml authoring.test.yaml || exit
docket policy test -v authoring.yaml authoring.test.yaml || exit
docket policy test authoring.yaml authoring.test.yaml --json | jq -c '.passed, .failed, .cases[3]'
