# Claude Code's Bash(npm run test:*) allows `npm run test ...` segments only:
# a chained command is decided segment by segment, and a deny rule on any
# segment denies the whole script
cp "$FIXTURES/policies/settings.json" .
ctx='{"platform":"linux","cwd":"/home/dev/app","workspace_roots":["/home/dev/app"],"env":{"HOME":"/home/dev"}}'
for script in 'npm run test:unit && rm -rf /' 'npm run test -- --watch && make deploy' 'npm run test'; do
	echo "\$ $script"
	docket policy eval claude:settings.json --context "$ctx" \
		--call "{\"tool\":\"Bash\",\"args\":{\"command\":\"$script\"}}" || exit
done
echo
docket policy eval claude:settings.json --context "$ctx" --json \
	--call '{"tool":"Bash","args":{"command":"npm run test:unit && rm -rf /"}}'
