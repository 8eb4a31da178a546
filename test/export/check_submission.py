#!/usr/bin/python3
"""Check a KernelIndex PR-path submission bundle the way KernelIndex's
validator reads it (registry/submissions/README.md of KernelIndex): one YAML
document with the lists projects, operations, workloads, implementations
({projectSlug, manifest}) and runs ({run, protocol, environment}); every
manifest valid against its kind's JSON Schema; every digest reference
resolving inside the bundle (or named in its header as already published);
every project slug resolving; at most 262144 bytes. Scalars must read the
same under YAML 1.2 (KernelIndex) and 1.1: a plain scalar may only be a
number, a boolean, null or a plain key. Digests are computed here, with an
RFC 8785 serializer of this script's own.

usage: check_submission.py SCHEMAS_DIR BUNDLE.yaml [RUN_DIR...]
With RUN_DIRs, every manifest in them must appear in the bundle unchanged
(metadata included). Exit 0 when valid, 1 naming each problem."""
import hashlib
import json
import pathlib
import re
import sys

import yaml
from jsonschema import Draft202012Validator, FormatChecker

LIMIT = 262144
LISTS = ("projects", "operations", "workloads", "implementations", "runs")
YAML12_INT = re.compile(r"^[-+]?[0-9]+$")
YAML12_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
PLAIN_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
RESOLVED = {"y", "yes", "n", "no", "on", "off", "true", "false", "null", "~", "nan"}


def es_number(x):
    """ECMAScript Number.prototype.toString of a finite double."""
    if isinstance(x, bool):
        raise TypeError("bool")
    if x == 0:
        return "0"
    if isinstance(x, int) and abs(x) < 2**53:
        return str(x)
    sign = "-" if x < 0 else ""
    text = repr(abs(float(x)))
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    all_digits = whole + fraction
    leading = len(all_digits) - len(all_digits.lstrip("0"))
    digits = all_digits.lstrip("0").rstrip("0")
    n = len(whole) + int(exponent or 0) - leading
    k = len(digits)
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + out


def jcs(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return es_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(jcs(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(value[k]) for k in keys) + "}"
    raise TypeError(type(value))


def digest(manifest):
    body = {"apiVersion": manifest["apiVersion"], "kind": manifest["kind"], "spec": manifest["spec"]}
    return "sha256:" + hashlib.sha256(jcs(body).encode("utf-8")).hexdigest()


def kebab(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def self_test():
    # KernelIndex's test vectors (kernelindex/README.md).
    for value, text in [(1.0048658277929109e-05, "0.000010048658277929109"), (1e-7, "1e-7"), (1e21, "1e+21"),
                        (123e20, "1.23e+22"), (-0.0, "0"), (213.1598663330078, "213.1598663330078"),
                        (5e-324, "5e-324"), (1.0, "1"), (0.5, "0.5"), (100.0, "100")]:
        assert es_number(value) == text, (value, es_number(value), text)
    project = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "SoftwareProject",
               "metadata": {"name": "x"},
               "spec": {"name": "Vector Project", "repository": "https://example.invalid/vector/project"}}
    assert digest(project) == "sha256:bea60af06f12216679b113d6624c5293d59bef2104ccc27cd33c992d124e039d"


def check_scalars(node, problems, where="$"):
    """Plain scalars must mean the same to every YAML reader."""
    if isinstance(node, yaml.MappingNode):
        keys = set()
        for key, value in node.value:
            if key.style is None and not (PLAIN_KEY.match(key.value) and key.value.lower() not in RESOLVED):
                problems.append(f"{where}: plain key {key.value!r} is not a plain identifier")
            if key.value in keys:
                problems.append(f"{where}: duplicate key {key.value!r}")
            keys.add(key.value)
            check_scalars(value, problems, f"{where}.{key.value}")
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            check_scalars(item, problems, f"{where}[{i}]")
    elif isinstance(node, yaml.ScalarNode) and node.style is None:
        text = node.value
        if not (YAML12_INT.match(text) or YAML12_FLOAT.match(text) or text in ("true", "false", "null")):
            problems.append(f"{where}: plain scalar {text!r} is a string to YAML 1.2 but unquoted")
        elif YAML12_INT.match(text) and len(text.lstrip("+-")) > 1 and text.lstrip("+-").startswith("0"):
            problems.append(f"{where}: {text!r} reads as octal in YAML 1.1")


def main():
    self_test()
    schemas_dir, bundle_path = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    text = bundle_path.read_text(encoding="utf-8")
    problems = []
    if len(text.encode("utf-8")) > LIMIT:
        problems.append(f"{len(text.encode('utf-8'))} bytes: over KernelIndex's limit of {LIMIT}")
    nodes = list(yaml.compose_all(text))
    if len(nodes) != 1:
        print(f"{bundle_path}: {len(nodes)} YAML documents; KernelIndex parses exactly one")
        return 1
    check_scalars(nodes[0], problems)
    document = yaml.safe_load(text)
    if not isinstance(document, dict) or set(document) - set(LISTS):
        print(f"{bundle_path}: top level must be a mapping of {', '.join(LISTS)}")
        return 1
    published = set(re.findall(r"^#.*OperationSpec (sha256:[0-9a-f]{64})", text, re.M))

    validators = {}

    def valid(manifest, where):
        kind = manifest.get("kind") if isinstance(manifest, dict) else None
        schema_file = schemas_dir / (re.sub(r"(?<!^)(?=[A-Z])", "-", str(kind)).lower() + ".v1alpha1.schema.json")
        if not schema_file.exists():
            problems.append(f"{where}: no schema for kind {kind}")
            return False
        if kind not in validators:
            validators[kind] = Draft202012Validator(json.loads(schema_file.read_text()),
                                                    format_checker=FormatChecker())
        errors = list(validators[kind].iter_errors(manifest))
        for error in errors:
            path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
            problems.append(f"{where}{path}: {error.message}")
        return not errors

    def of_kind(items, kind, where):
        out = {}
        for i, manifest in enumerate(items):
            here = f"{where}[{i}]"
            if not isinstance(manifest, dict) or manifest.get("kind") != kind:
                problems.append(f"{here}: not a {kind}")
            elif valid(manifest, here):
                out[digest(manifest)] = manifest
        return out

    projects = of_kind(document.get("projects", []), "SoftwareProject", "projects")
    slugs = {kebab(p["metadata"]["name"]) for p in projects.values()}
    operations = of_kind(document.get("operations", []), "OperationSpec", "operations")
    workloads = of_kind(document.get("workloads", []), "WorkloadCase", "workloads")
    implementations, everything = {}, []
    for i, entry in enumerate(document.get("implementations", [])):
        here = f"implementations[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"projectSlug", "manifest"}:
            problems.append(f"{here}: must hold exactly projectSlug and manifest")
            continue
        if entry["projectSlug"] not in slugs:
            problems.append(f"{here}.projectSlug: {entry['projectSlug']!r} names no project of the bundle")
        implementations.update(of_kind([entry["manifest"]], "ImplementationRevision", here + ".manifest"))
        everything.append(entry["manifest"])
    everything += list(projects.values()) + list(operations.values()) + list(workloads.values())

    def resolves(reference, table, kind, where, also=()):
        if reference not in table and reference not in also:
            problems.append(f"{where}: {reference} is no {kind} of the bundle")

    for d, workload in workloads.items():
        resolves(workload["spec"]["operationSpecDigest"], operations, "OperationSpec",
                 f"workload {workload['metadata']['name']}", published)
    for d, implementation in implementations.items():
        resolves(implementation["spec"]["operation"]["specDigest"], operations, "OperationSpec",
                 f"implementation {implementation['metadata']['name']}", published)
        if "licensing" not in implementation["spec"]:
            problems.append(f"implementation {implementation['metadata']['name']}: no spec.licensing")
    runs = 0
    for i, entry in enumerate(document.get("runs", [])):
        here = f"runs[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"run", "protocol", "environment"}:
            problems.append(f"{here}: must hold exactly run, protocol and environment")
            continue
        run = of_kind([entry["run"]], "BenchmarkRun", here + ".run")
        protocol = of_kind([entry["protocol"]], "BenchmarkProtocol", here + ".protocol")
        environment = of_kind([entry["environment"]], "ExecutionEnvironment", here + ".environment")
        everything += [entry["run"], entry["protocol"], entry["environment"]]
        if not run:
            continue
        spec = entry["run"]["spec"]
        resolves(spec["workloadDigest"], workloads, "WorkloadCase", here + ".run.spec.workloadDigest")
        resolves(spec["implementationDigest"], implementations, "ImplementationRevision",
                 here + ".run.spec.implementationDigest")
        resolves(spec["protocolDigest"], protocol, "BenchmarkProtocol of its entry", here + ".run.spec.protocolDigest")
        resolves(spec["environmentDigest"], environment, "ExecutionEnvironment of its entry",
                 here + ".run.spec.environmentDigest")
        runs += 1

    # The run directories' manifests, unchanged in the bundle.
    in_bundle = {(m.get("kind"), digest(m)): m for m in everything if isinstance(m, dict) and "spec" in m}
    for run_dir in map(pathlib.Path, sys.argv[3:]):
        for path in sorted(run_dir.glob("*.json")):
            manifest = json.loads(path.read_text())
            if not isinstance(manifest, dict) or "apiVersion" not in manifest:
                continue
            found = in_bundle.get((manifest["kind"], digest(manifest)))
            if found is None:
                problems.append(f"{path}: not in the bundle")
            elif found != manifest:
                problems.append(f"{path}: differs in the bundle")

    for problem in problems:
        print(problem)
    print(f"{bundle_path}: {runs} runs, {len(implementations)} implementations, {len(workloads)} workloads, "
          f"{len(operations)} operations, {len(projects)} projects; {len(problems)} problems")
    return 1 if problems or runs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
