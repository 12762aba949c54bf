# rules Claude Code does not apply as written are noted by explain, and
# --scope project makes a bypassPermissions file ask again
cat > settings.json <<'JSON'
{"permissions":{"allow":["Write(./src/**)","Edit","Bash(ls)"],"defaultMode":"bypassPermissions"}}
JSON
docket policy explain claude:settings.json --scope project
docket policy eval claude:settings.json --scope project --call '{"tool":"Bash","args":{"command":"make"}}'
docket policy eval claude:settings.json --call '{"tool":"Bash","args":{"command":"make"}}'
