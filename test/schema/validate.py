#!/usr/bin/python3
"""Validate every KernelIndex manifest under the given paths against its
kind's JSON Schema (draft 2020-12). Files that are not manifests (no
apiVersion/kind, e.g. raw samples, summary.json) are skipped. Exit 1 naming
each invalid file and the failing path; exit 0 if all are valid (and at
least one manifest was checked)."""
import json
import pathlib
import re
import sys

from jsonschema import Draft202012Validator, FormatChecker


def kebab(kind):
    return re.sub(r"(?<!^)(?=[A-Z])", "-", kind).lower()


def manifests(path):
    doc = json.loads(path.read_text())
    items = doc if isinstance(doc, list) else [doc]
    if isinstance(doc, dict) and "apiVersion" not in doc and all(isinstance(v, dict) for v in doc.values()):
        items = list(doc.values())
    for item in items:
        if isinstance(item, dict) and "apiVersion" in item and "kind" in item:
            yield item


def main():
    schemas_dir = pathlib.Path(sys.argv[1])
    validators = {}
    checked, failures = 0, []
    for root in map(pathlib.Path, sys.argv[2:]):
        files = sorted(root.rglob("*.json")) if root.is_dir() else [root]
        for path in files:
            for manifest in manifests(path):
                kind = manifest["kind"]
                schema_file = schemas_dir / f"{kebab(kind)}.v1alpha1.schema.json"
                if not schema_file.exists():
                    failures.append(f"{path}: no schema for kind {kind}")
                    continue
                if kind not in validators:
                    schema = json.loads(schema_file.read_text())
                    validators[kind] = Draft202012Validator(schema, format_checker=FormatChecker())
                errors = sorted(validators[kind].iter_errors(manifest), key=lambda e: list(e.absolute_path))
                for error in errors:
                    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
                    failures.append(f"{path}: {kind}: {where}: {error.message}")
                checked += 1
    for failure in failures:
        print(failure)
    print(f"{checked} manifests checked, {len(failures)} problems")
    if checked == 0:
        print("no manifests found")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
