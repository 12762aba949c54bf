# SPDX-License-Identifier: Apache-2.0
"""The functions include/docket/*.h declares, read from the header text.

A small declaration scanner, independent of the compiler and of the
DOCKET_EXTERN marker (so a declaration that lacks the marker is still
found): comments and preprocessor lines are dropped, the rest is cut into
top-level statements at ';', and a statement that is not a typedef, enum or
struct and has the form `... name(...)` declares the function `name`.
Used by abi_exports.py; run alone it prints `header name marked` lines.
"""
import os
import re
import sys

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
FUNC = re.compile(r"([A-Za-z_]\w*)\s*\(")


def statements(text):
    text = COMMENT.sub(" ", text)
    text = "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("#"))
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ";" and depth == 0:
            yield " ".join(text[start:i].split())
            start = i + 1


def declarations(include_dir):
    """[(header, function, has_DOCKET_EXTERN)] for every header, in order."""
    out = []
    for name in sorted(os.listdir(include_dir)):
        if not name.endswith(".h"):
            continue
        with open(os.path.join(include_dir, name), encoding="utf-8") as f:
            text = f.read()
        for st in statements(text):
            first = st.split(" ", 1)[0]
            if first in ("typedef", "enum", "struct", "union") or "{" in st:
                continue
            m = FUNC.search(st)
            if not m or m.group(1) in ("__attribute__",):
                continue
            out.append((name, m.group(1), st.startswith("DOCKET_EXTERN ")))
    return out


if __name__ == "__main__":
    for h, fn, marked in declarations(sys.argv[1]):
        print(h, fn, "DOCKET_EXTERN" if marked else "UNMARKED")
