# a malformed test file is bad input (exit 2) naming file:line:column: an
# unknown key, a missing expect, a verdict that does not exist, two calls
cp "$FIXTURES/policies/authoring.yaml" .
printf 'tests:\n  - command: ls\n    expct: allowed\n' > a.yaml
printf 'tests:\n  - command: ls\n' > b.yaml
printf 'tests:\n  - command: ls\n    expect: allow\n' > c.yaml
printf 'tests:\n  - command: ls\n    path: /x\n    expect: allowed\n' > d.yaml
printf '[{"command": "ls", "expect": "allowed", "context": 3}]' > e.json
printf 'tests:\n  - command: "ls \x27unbalanced"\n    expect: allowed\n' > f.yaml
for f in a.yaml b.yaml c.yaml d.yaml e.json; do
	docket policy test authoring.yaml $f
	echo "exit $?"
done
docket policy test authoring.yaml f.yaml
echo "exit $?"
docket policy test authoring.yaml missing.yaml
