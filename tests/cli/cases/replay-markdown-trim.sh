# markdown for a pull-request comment stays within 65,536 characters, with a
# "… and N more" line counting the rows left out (rows + N = the changed
# calls): 250 changed calls of a session with a 252-character id fill the
# byte budget before 200 rows; 250 of a short one stop at 200 rows; 3 fit
# whole (no "… and" line). A policy named in the head is cut at 512 bytes.
# Of 12 sessions the head names 10 (ids cut at 64 bytes) and counts the rest.
docket init >/dev/null
long=$(printf 'x%.0s' $(seq 250))
calls() {  # calls SESSION COUNT
	echo '{"type":"session.opened","session":"'"$1"'","runtime":"codex/0.60.1","platform":"linux","cwd":"/w","workspace_roots":["/w"],"env":{"HOME":"/h"},"time":"2025-04-01T10:00:00Z"}'
	for i in $(seq "$2"); do
		printf '{"type":"tool.intent","session":"%s","invocation":"c%d","tool":"shell","args":{"command":["rm","-rf","b%d"],"cwd":"/w"},"decision":{"verdict":"allowed","source":"runtime"},"time":"2025-04-01T10:00:01Z"}\n' "$1" "$i" "$i"
	done
}
{ calls "s-$long" 250; calls s-short 250; calls s-few 3; for i in $(seq 9); do calls "s-n$i" 1; done; } > calls.jsonl
docket record calls.jsonl >/dev/null || exit 99
part=$(printf 'd%.0s' $(seq 99))
dir=$part/$part/$part/$part/$part/$part
mkdir -p "$dir" && cp "$FIXTURES/replay/strict.yaml" "$dir/p.yaml"
for s in "s-$long" s-short s-few; do
	docket replay --policy "$dir/p.yaml" --format markdown --session "$s" > out.md || exit
	rows=$(grep -c '^| tightened |  |' out.md)
	more=$(sed -nE 's/^… and ([0-9]+) more .*/\1/p' out.md)
	echo "${s:0:7}: $(wc -c < out.md) bytes, within 65536: $([ "$(wc -c < out.md)" -le 65536 ] && echo yes || echo no);" \
		"rows $rows + more ${more:-0} = $((rows + ${more:-0}))"
	grep -F '… and' out.md
done
echo "policy cut at 512 bytes: $(grep -cF "<code>${dir:0:512}…</code>" out.md)"
docket replay --policy "$dir/p.yaml" --format markdown > all.md || exit
echo "all: $(wc -c < all.md) bytes; session rows: $(grep -c '^| <code>s-' all.md)"
grep -F 'more sessions' all.md
echo "session id cut at 64 bytes: $(grep -cF "<code>s-${long:0:62}…</code>" all.md)"
