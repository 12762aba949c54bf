#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The schema check must fail on broken records: write one mutant of the
first record of EXPORT per line of OUT_DIR/<name>.ndjson.

  mutants.py EXPORT.ndjson OUT_DIR
"""
import copy
import json
import os
import sys

MUTANTS = {
    "extra-field": lambda r: r.__setitem__("not_an_ocsf_field", 1),
    "activity-out-of-enum": lambda r: r.__setitem__("activity_id", 42),
    "no-severity": lambda r: r.pop("severity_id"),
    "no-product": lambda r: r["metadata"].pop("product"),
    "time-as-text": lambda r: r.__setitem__("time", "yesterday"),
    "unknown-class": lambda r: r.__setitem__("class_uid", 1008),
    "denial-without-detail": lambda r: (r.__setitem__("action_id", 2), r.pop("status_detail", None)),
    "other-version": lambda r: r["metadata"].__setitem__("version", "1.8.0"),
    "profile-without-its-fields": lambda r: r["metadata"]["profiles"].append("cloud"),
}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        first = json.loads(f.readline())
    for name, mutate in MUTANTS.items():
        rec = copy.deepcopy(first)
        mutate(rec)
        with open(os.path.join(sys.argv[2], name + ".ndjson"), "w", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
