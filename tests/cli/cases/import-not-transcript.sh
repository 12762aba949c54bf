# a file of no known format is refused (exit 2) whatever FORMAT says
docket init >/dev/null
printf 'root:x:0:0:root:/root:/bin/bash\n' > passwd
printf '{"type":"message","text":"hello"}\n{"id":1}\n' > other.jsonl
docket import claude passwd
echo "exit $?"
docket import other.jsonl
echo "exit $?"
docket import codex passwd other.jsonl
