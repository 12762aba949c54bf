# the table fits the terminal: COLUMNS=80 narrows the widest text cells and
# ends them in "…"; no COLUMNS and no terminal (a pipe): every cell whole;
# a COLUMNS that is no number is ignored (line lengths count "…" as one)
seed replay/sessions.jsonl
cp "$FIXTURES/replay/strict.yaml" .
echo '$ COLUMNS=80 docket replay --policy strict.yaml'
COLUMNS=80 docket replay --policy strict.yaml
echo "longest line: $(COLUMNS=80 docket replay --policy strict.yaml | sed 's/…/./g' | awk '{ n = length($0); if (n > m) m = n } END { print m }')"
echo "without COLUMNS: $(docket replay --policy strict.yaml | sed 's/…/./g' | awk '{ n = length($0); if (n > m) m = n } END { print m }')"
echo "COLUMNS=wide: $(COLUMNS=wide docket replay --policy strict.yaml | sed 's/…/./g' | awk '{ n = length($0); if (n > m) m = n } END { print m }')"
