# the same input gives byte-identical output, in every format
seed replay/sessions.jsonl
cp "$FIXTURES/replay/loose.yaml" .
for f in table json junit markdown; do
	docket replay --policy loose.yaml --format "$f" > "a.$f"
	docket replay --policy loose.yaml --format "$f" > "b.$f"
	cmp "a.$f" "b.$f" && echo "$f: identical ($(wc -c < "a.$f") bytes)"
done
