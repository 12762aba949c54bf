#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docket's OCSF export validates against the JSON Schema of the classes it
# emits (fixtures/ocsf/, generated from the OCSF schema repository by
# gen_ocsf_schema.py), denials carry status_detail and message, and the
# check rejects broken records (mutants.py). The real transcripts of
# ../shared/corpus are checked too when present.
#   ocsf-schema.sh DOCKET SOURCE_ROOT
set -euo pipefail
docket=$(realpath "$1")
root=$2
schema=$root/fixtures/ocsf/docket-ocsf-classes.schema.json
check=$root/tests/ocsf/check_ocsf.py
python3 -c 'import jsonschema' 2>/dev/null || { echo "python3-jsonschema is not installed: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$docket" -L fx init >/dev/null
for f in demo-basic audit-risky open-pending; do
	"$docket" -L fx record "$root/fixtures/sessions/$f.jsonl" >/dev/null
done
"$docket" -L fx export --format ocsf >fx.ndjson
python3 "$check" "$schema" fx.ndjson
mkdir mutants
python3 "$root/tests/ocsf/mutants.py" fx.ndjson mutants
for m in mutants/*.ndjson; do
	if python3 "$check" "$schema" "$m" 2>/dev/null; then
		echo "FAIL: the schema check accepted the broken record $m" >&2
		exit 1
	fi
done
echo "$(ls mutants | wc -l) broken records rejected"
corpus=$root/../shared/corpus
if [ -d "$corpus" ]; then
	"$docket" -L real init >/dev/null
	"$docket" -L real import codex "$corpus"/codex/*.jsonl >/dev/null 2>&1 || true
	"$docket" -L real import claude "$corpus"/claude/*.jsonl >/dev/null 2>&1 || true
	"$docket" -L real export --format ocsf >real.ndjson
	python3 "$check" "$schema" real.ndjson
fi
