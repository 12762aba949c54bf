# a misspelt key is an error (it must not silently widen the policy), with
# its position and the keys that are allowed there; exit 2
cp "$FIXTURES/policies/unknown-key.yaml" .
docket policy check unknown-key.yaml
