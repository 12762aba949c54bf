#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Validate docket's OCSF export (NDJSON) against the generated schema.

  check_ocsf.py SCHEMA.json EXPORT.ndjson

Every record must validate against $defs/class_<class_uid> of SCHEMA (the
JSON Schema tests/ocsf/gen_ocsf_schema.py writes from the OCSF schema
repository), claim the schema's OCSF version (without a -dev suffix), and,
when it records a denial (action_id 2), carry status_detail and message.
Exit 0 when all do, 1 with the first problems listed, 77 (skip) when
python3-jsonschema is not installed.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed: skipped", file=sys.stderr)
    sys.exit(77)


def main():
    schema_path, export_path = sys.argv[1], sys.argv[2]
    with open(schema_path, encoding="utf-8") as f:
        doc = json.load(f)
    version = doc["ocsf_version"].split("-")[0]
    validators = {}
    problems, n, denials = [], 0, 0
    with open(export_path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            rec = json.loads(line)
            n += 1
            uid = rec.get("class_uid")
            key = f"class_{uid}"
            if key not in doc["$defs"]:
                problems.append(f"line {lineno}: class_uid {uid} is not a class docket declares")
                continue
            if key not in validators:
                validators[key] = jsonschema.Draft202012Validator(dict(doc, **{"$ref": f"#/$defs/{key}"}))
            for err in validators[key].iter_errors(rec):
                problems.append(f"line {lineno} (class {uid}): {'/'.join(map(str, err.absolute_path))}: "
                                f"{err.message[:200]}")
            if rec.get("metadata", {}).get("version") != version:
                problems.append(f"line {lineno}: metadata.version {rec.get('metadata', {}).get('version')} "
                                f"is not {version}")
            if rec.get("action_id") == 2:
                denials += 1
                if not rec.get("status_detail") or not rec.get("message"):
                    problems.append(f"line {lineno}: a denial without status_detail or message")
    if problems:
        print(f"{len(problems)} problem(s) in {n} records:", file=sys.stderr)
        for p in problems[:40]:
            print("  " + p, file=sys.stderr)
        sys.exit(1)
    print(f"{n} records valid ({denials} denials with status_detail and message)")


if __name__ == "__main__":
    main()
