# examples survive convert: a docket YAML policy with match / not_match
# converts to itself (alternatives of the first word stay one rule), and
# the converted file loads (its examples checked again)
cp "$FIXTURES/policies/authoring.yaml" .
docket policy convert authoring.yaml > c1.yaml || exit
sed -n '/^commands:/,/^tools:/p' c1.yaml
docket policy convert c1.yaml | tail -n +2 > c2.yaml && tail -n +2 c1.yaml | cmp - c2.yaml && echo "round trip: same"
