# Codex .rules: a file, and a directory of them; the match/not_match
# examples are checked when the rules load
cp "$FIXTURES/policies/default.rules" .
mkdir rules
cp default.rules rules/
for src in codex:default.rules codex:rules; do
	echo "\$ docket policy check $src"
	docket policy check "$src" || exit
done
