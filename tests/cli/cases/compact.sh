# `docket compact` rewrites a ledger of many small commits (one segment
# each) into full segments: every seq, time and hash is kept (log --json is
# byte-identical), a checkpoint signed before still verifies, and the file
# has no free pages left
docket init >/dev/null
split -l 30 "$FIXTURES/ledger-v1/bulk-session.jsonl" part.
for f in part.*; do docket record "$f" >/dev/null || exit 1; done
docket keygen --output key >/dev/null
docket checkpoint --key key >/dev/null
docket log --json >before.jsonl
wc -l <before.jsonl
docket compact --json | jq -c '{rewritten, from_format, to_format, events, segments, smaller: (.bytes_after < .bytes_before)}'
docket log --json | cmp - before.jsonl && echo "log --json: identical"
docket verify --pubkey key.pub | sed -E "s/key [0-9a-f]{16}/key K/"
ls -a ledger | grep -v '^\.\.\?$'
# a format-2 ledger compacts again; migrate has nothing to do
docket compact | sed -E 's/head [0-9a-f]{16}/head H/; s/[0-9]+ -> [0-9]+ bytes/N -> M bytes/'
docket migrate | sed -E 's/head [0-9a-f]{16}/head H/'
