#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layering check (docs/architecture.md, "Layers").

Reads the dependency rules (a ```layers block of a markdown file, or a plain
rules file) and checks, for every library and program folder of a tree
(lib/*, app/*):

  include   every #include "X" of its sources names its own folder,
            include/docket/, lib/util/, or a folder the rules allow;
  private   a header of lib/ or app/ that the rules do not name as a friend
            header (a `friend` line) is included only from its own folder;
  symbol    every undefined symbol of its objects that another folder's
            objects define is defined in an allowed folder;
  friend    no object uses a function declared in another folder's private
            header (one reached by a prototype of its own, say).

The objects come from the build directory's compile_commands.json (object
file -> source file), read with nm. Exit 0: no violation; 1: violations,
one line each ("KIND: FOLDER ..."); 2: usage or an unreadable input.

  check_layers.py --tree SRC --build BUILD --rules FILE [--nm NM]
"""
import argparse
import json
import os
import re
import subprocess
import sys

ALWAYS = ("include/docket", "lib/util")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
GENERATED = {"docket.pb-c.h": "lib/schema"}


def read_rules(path):
    """({folder: set(allowed folders)}, set(friend headers)); 'lib/*' and
    'app/*' are wildcards; a line `friend PATH` names a friend header."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"```layers\n(.*?)```", text, re.S)
    body = m.group(1) if m else text
    rules, friends = {}, set()
    for line in body.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        folder, *uses = line.split()
        if folder == "friend":
            friends.update(uses)
            continue
        rules[folder] = set(u for u in uses if u != "-")
    if not rules:
        raise SystemExit(f"check_layers: {path}: no rules")
    return rules, friends


def allowed(rules, user, target):
    if target == user or target in ALWAYS:
        return True
    for a in rules.get(user, ()):
        if a == target or (a.endswith("/*") and target.startswith(a[:-1])):
            return True
    return False


def folder_of(rel):
    """lib/ledger/store.c -> lib/ledger; None outside lib/ and app/."""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[0] in ("lib", "app"):
        return parts[0] + "/" + parts[1]
    return None


def sources(tree):
    for top in ("lib", "app"):
        for d, _, files in os.walk(os.path.join(tree, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h", ".cpp")):
                    yield os.path.relpath(os.path.join(d, f), tree)


def resolve(tree, rel, name):
    """The folder and file an include names, or (None, None) for a system
    or unknown header."""
    own = os.path.join(os.path.dirname(rel), name)
    if os.path.exists(os.path.join(tree, own)):
        return folder_of(own), own
    if name in GENERATED:
        return GENERATED[name], name
    if name.startswith("docket/"):
        return "include/docket", name
    for top in ("lib", "app"):
        cand = os.path.join(top, name)
        if os.path.exists(os.path.join(tree, cand)):
            return folder_of(cand), cand
    return None, None


def is_private(path, friends):
    """A header of lib/ or app/ that is neither lib/util's (everyone's) nor
    a friend header."""
    folder = folder_of(path)
    return folder is not None and folder not in ALWAYS and path not in friends


def check_includes(tree, rules, friends, out):
    for rel in sources(tree):
        user = folder_of(rel)
        with open(os.path.join(tree, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name in INCLUDE_RE.findall(text):
            target, path = resolve(tree, rel, name)
            if target is None:
                continue
            if target != user and is_private(path, friends):
                out.append(f"private: {user}: {rel} includes {name}, private to {target}")
            elif not allowed(rules, user, target):
                out.append(f"include: {user}: {rel} includes {name} ({target} is not below it)")


def private_functions(tree, friends):
    """{function name: folder} for every function declared in a private header."""
    decl = re.compile(r"^[A-Za-z_][\w \t\*]*?\b([a-z_][a-z0-9_]*)\s*\(", re.M)
    names = {}
    for rel in sources(tree):
        if rel.endswith(".h") and is_private(rel, friends):
            with open(os.path.join(tree, rel), encoding="utf-8") as f:
                text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
            for n in decl.findall(text):
                names.setdefault(n, folder_of(rel))
    return names


def objects(tree, build):
    """[(folder, object path)] of the tree's lib/ and app/ sources."""
    try:
        with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
            cmds = json.load(f)
    except OSError as e:
        raise SystemExit(f"check_layers: {build}: {e.strerror}")
    tree = os.path.realpath(tree)
    out = []
    for c in cmds:
        src = os.path.realpath(os.path.join(c["directory"], c["file"]))
        if not src.startswith(tree + os.sep):
            continue
        folder = folder_of(os.path.relpath(src, tree))
        if folder:
            out.append((folder, os.path.join(c["directory"], c["output"])))
    if not out:
        raise SystemExit(f"check_layers: no object of {tree} in {build}/compile_commands.json")
    return out


def nm_symbols(nm, obj):
    r = subprocess.run([nm, obj], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"check_layers: {nm} {obj}: {r.stderr.strip()}")
    defined, undefined = set(), set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRVWG":
            defined.add(parts[2])
    return defined, undefined


def check_symbols(tree, build, rules, friends, nm, out):
    objs = [(folder, obj, *nm_symbols(nm, obj)) for folder, obj in objects(tree, build)]
    owner = {}
    for folder, _, defined, _ in objs:
        for s in defined:
            owner.setdefault(s, folder)
    private = private_functions(tree, friends)
    seen = set()
    for folder, obj, _, undefined in objs:
        for s in sorted(undefined):
            target = owner.get(s)
            if target is None or target == folder:
                continue
            if s in private and private[s] != folder:
                kind = f"friend: {folder}: {os.path.basename(obj)} calls {s}, declared in a private header of {private[s]}"
            elif not allowed(rules, folder, target):
                kind = f"symbol: {folder}: {os.path.basename(obj)} uses {s} of {target} (not below it)"
            else:
                continue
            if kind not in seen:
                seen.add(kind)
                out.append(kind)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--rules", required=True)
    ap.add_argument("--nm", default="nm")
    a = ap.parse_args()
    rules, friends = read_rules(a.rules)
    for folder in sorted({folder_of(r) for r in sources(a.tree)}):
        if folder not in rules:
            print(f"rules: {folder} has no rule in {a.rules}")
            return 1
    out = []
    check_includes(a.tree, rules, friends, out)
    check_symbols(a.tree, a.build, rules, friends, a.nm, out)
    for line in out:
        print(line)
    if not out:
        print(f"layers: ok ({len(rules)} folders)")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
