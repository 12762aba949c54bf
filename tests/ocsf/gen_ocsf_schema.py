#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write a JSON Schema (draft 2020-12) of the OCSF classes docket emits.

Reads the OCSF schema repository (https://github.com/ocsf/ocsf-schema), a
checkout or a bare git directory at a commit, and resolves what the OCSF
server does for each class: the `extends` chain (class -> category base ->
base_event), `$include`d profile attributes, the dictionary's types and
enums, and every object reached (with its own `extends` chain and
includes). Each class becomes $defs/class_<uid>, a schema with:
  - class_uid / category_uid fixed, activity_id limited to the class's enum;
  - every *_id attribute with an enum limited to its values;
  - the class's "required" attributes required (objects too);
  - no attribute outside the class (additionalProperties: false), except
    inside `unmapped` and other free-form (json_t, object) attributes.
Usage:
  gen_ocsf_schema.py --git DIR [--commit REV] [--out FILE]   (bare repo)
  gen_ocsf_schema.py --dir CHECKOUT [--out FILE]
Regenerate fixtures/ocsf/docket-ocsf-classes.schema.json with:
  tests/ocsf/gen_ocsf_schema.py --git /path/to/ocsf-schema.git --commit REV \
      --out fixtures/ocsf/docket-ocsf-classes.schema.json
"""
import argparse
import json
import subprocess
import sys

# The classes docket writes (exporters/ocsf.c) and their files.
CLASSES = {
    1001: "events/system/file_activity.json",
    1007: "events/system/process_activity.json",
    3003: "events/iam/authorize_session.json",
    6003: "events/application/api_activity.json",
}
BASES = {
    "base_event": "events/base_event.json",
    "system": "events/system/system.json",
    "iam": "events/iam/iam.json",
    "application": "events/application/application.json",
}
PRIMITIVE = {
    "boolean_t": {"type": "boolean"},
    "float_t": {"type": "number"},
    "integer_t": {"type": "integer"},
    "long_t": {"type": "integer"},
    "string_t": {"type": "string"},
    "json_t": {},
}


class Repo:
    def __init__(self, git=None, commit="HEAD", directory=None):
        self.git, self.commit, self.dir = git, commit, directory
        self.cache = {}

    def read(self, path):
        if path not in self.cache:
            if self.git:
                text = subprocess.run(["git", "--git-dir", self.git, "show", f"{self.commit}:{path}"],
                                      check=True, capture_output=True, text=True).stdout
            else:
                with open(f"{self.dir}/{path}", encoding="utf-8") as f:
                    text = f.read()
            self.cache[path] = json.loads(text)
        return self.cache[path]

    def files(self, folder):
        if self.git:
            out = subprocess.run(["git", "--git-dir", self.git, "ls-tree", "-r", "--name-only",
                                  self.commit, folder], check=True, capture_output=True, text=True).stdout
            return [p for p in out.split() if p.endswith(".json")]
        import glob
        return [p[len(self.dir) + 1:] for p in glob.glob(f"{self.dir}/{folder}/**/*.json", recursive=True)]

    def revision(self):
        if not self.git:
            return "checkout"
        return subprocess.run(["git", "--git-dir", self.git, "rev-parse", self.commit], check=True,
                              capture_output=True, text=True).stdout.strip()


def merge_attrs(into, attrs, repo, profile=None):
    """Attributes of `attrs` over `into`, $include'd files first. Attributes
    a profile brings are marked with its name ("_profile"): they are
    required only in records that apply the profile."""
    includes = attrs.get("$include", [])
    for inc in includes if isinstance(includes, list) else [includes]:
        inc_doc = repo.read(inc)
        inc_profile = inc_doc.get("name") if inc.startswith("profiles/") else profile
        merge_attrs(into, inc_doc.get("attributes", {}), repo, inc_profile)
    for name, spec in attrs.items():
        if name == "$include":
            continue
        if spec is None:
            into.pop(name, None)
            continue
        merged = dict(into.get(name, {}))
        merged.update(spec)
        if profile and "_profile" not in into.get(name, {}):
            merged["_profile"] = profile
        into[name] = merged
    return into


class Gen:
    def __init__(self, repo):
        self.repo = repo
        self.dictionary = repo.read("dictionary.json")
        self.types = self.dictionary["types"]["attributes"]
        self.objects = {}
        for path in repo.files("objects"):
            obj = repo.read(path)
            self.objects[obj["name"]] = obj
        self.defs = {}

    def object_attrs(self, name):
        obj = self.objects[name]
        attrs = {}
        if obj.get("extends") and obj["extends"] in self.objects:
            attrs = self.object_attrs(obj["extends"])
        return merge_attrs(attrs, obj.get("attributes", {}), self.repo)

    def primitive(self, type_name):
        t = self.types.get(type_name, {})
        if type_name in PRIMITIVE:
            return dict(PRIMITIVE[type_name])
        base = self.primitive(t["type"]) if t.get("type") else {}
        if t.get("regex") and base.get("type") == "string":
            base["pattern"] = t["regex"]
        return base

    def attr_schema(self, name, spec):
        d = self.dictionary["attributes"].get(name, {})
        full = dict(d)
        full.update(spec)
        type_name = full.get("type", "string_t")
        if type_name == "object_t":
            type_name = full.get("object_type", "object")
        if type_name in self.objects and type_name != "object":
            s = {"$ref": f"#/$defs/{self.object_def(type_name)}"}
        elif type_name == "object":
            s = {"type": "object"}
        else:
            s = self.primitive(type_name)
        enum = dict(d.get("enum", {}))
        enum.update(spec.get("enum", {}) or {})
        if enum and name.endswith("_id"):
            s["enum"] = sorted(int(k) for k in enum)
        if full.get("is_array"):
            s = {"type": "array", "items": s}
        return s

    def object_def(self, name):
        if name in self.defs:
            return name
        self.defs[name] = None  # reserve: objects refer to each other
        attrs = self.object_attrs(name)
        self.defs[name] = self.shape(attrs)
        return name

    def shape(self, attrs, fixed=None, event=False):
        props, required, by_profile = {}, [], {}
        for attr, spec in sorted(attrs.items()):
            props[attr] = self.attr_schema(attr, spec)
            if spec.get("requirement") != "required":
                continue
            if spec.get("_profile"):
                by_profile.setdefault(spec["_profile"], []).append(attr)
            else:
                required.append(attr)
        for attr, value in (fixed or {}).items():
            props[attr] = value
        out = {"type": "object", "properties": props, "additionalProperties": False}
        if required:
            out["required"] = required
        if event and by_profile:
            # a profile's required attributes, in the records that apply it
            out["allOf"] = [{
                "if": {"required": ["metadata"], "properties": {"metadata": {
                    "required": ["profiles"], "properties": {"profiles": {"contains": {"const": name}}}}}},
                "then": {"required": attrs_}} for name, attrs_ in sorted(by_profile.items())]
        return out

    def class_attrs(self, path):
        cls = self.repo.read(path)
        chain = []
        while True:
            chain.append(cls)
            parent = cls.get("extends")
            if not parent:
                break
            cls = self.repo.read(BASES[parent])
        attrs = {}
        for c in reversed(chain):
            merge_attrs(attrs, c.get("attributes", {}), self.repo)
        return chain[0], attrs

    def event(self, class_uid, path):
        cls, attrs = self.class_attrs(path)
        category = class_uid // 1000
        fixed = {
            "class_uid": {"const": class_uid},
            "category_uid": {"const": category},
        }
        schema = self.shape(attrs, fixed, event=True)
        schema["title"] = cls["caption"]
        return schema


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--git")
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--dir")
    ap.add_argument("--out")
    a = ap.parse_args()
    if not a.git and not a.dir:
        ap.error("--git or --dir is required")
    repo = Repo(a.git, a.commit, a.dir)
    gen = Gen(repo)
    classes = {f"class_{uid}": gen.event(uid, path) for uid, path in sorted(CLASSES.items())}
    version = repo.read("version.json")["version"]
    doc = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": f"Generated by tests/ocsf/gen_ocsf_schema.py from ocsf/ocsf-schema {version} "
                    f"at {repo.revision()}: the OCSF classes docket emits. Do not edit.",
        "ocsf_version": version,
        "$defs": dict(classes, **{k: v for k, v in sorted(gen.defs.items())}),
    }
    text = json.dumps(doc, indent=1, sort_keys=False) + "\n"
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
