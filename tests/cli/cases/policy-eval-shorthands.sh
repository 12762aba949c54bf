# policy eval shorthands: --command split like a shell, --path, --url,
# --tool; --exit-code maps the verdict (0 allowed, 10 approval_required,
# 11 denied); without it a verdict is not an error (exit 0)
cp "$FIXTURES/policies/authoring.yaml" .
ctx='{"platform":"linux","cwd":"/home/dev/app","workspace_roots":["/home/dev/app"]}'
docket policy eval authoring.yaml --context "$ctx" --command 'rm -rf "my dir"' --json | jq -c '.verdict, .segments[0].command'
docket policy eval authoring.yaml --context "$ctx" --path /home/dev/app/.env --json | jq -c '.verdict'
docket policy eval authoring.yaml --context "$ctx" --url https://example.com/x --json | jq -c '.verdict'
docket policy eval authoring.yaml --context "$ctx" --tool Read --path src/a.c --json | jq -c '.verdict'
for c in 'git status' 'git push' 'rm -rf x'; do
	docket policy eval authoring.yaml --context "$ctx" --command "$c" --exit-code >/dev/null
	echo "$c: exit $?"
done
docket policy eval authoring.yaml --context "$ctx" --command 'rm -rf x' >/dev/null
echo "no --exit-code: exit $?"
