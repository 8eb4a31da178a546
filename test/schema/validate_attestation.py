#!/usr/bin/python3
"""Validate `kibench reproduce`'s output against KernelIndex's attestation API.

    validate_attestation.py SCHEMA REPRODUCTION_DIR...

For each reproduction directory: attestation.json must validate against
SCHEMA (kernelindex-attestation-request.schema.json, the request body of
POST /runs/{idOrDigest}/attestations) and hold no member the schema does not
name (the body is exactly what the API reads); it must also pass the checks
KernelIndex's server applies after the schema (apps/web/src/server/
attestations.ts): a body that is not blank once trimmed and at most 2000
UTF-16 code units (JavaScript's string length), evidenceUrl empty or
https:// without white space, environmentSummary at most 200 UTF-16 code
units. verdict.json's attestation.idOrDigest must validate against the path
parameter's schema ($defs.idOrDigest), be a sha256 digest, and the verdict's
type must be the attestation's. Exit 1 naming each problem; 0 when every
directory passes."""
import json
import pathlib
import re
import sys

from jsonschema import Draft202012Validator


def utf16_length(text):
    return len(text.encode("utf-16-le")) // 2


def problems_of(schema, directory):
    body = json.loads((directory / "attestation.json").read_text(encoding="utf-8"))
    verdict = json.loads((directory / "verdict.json").read_text(encoding="utf-8"))
    validator = Draft202012Validator(schema)
    for error in sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path)):
        where = "$" + "".join(f".{p}" for p in error.absolute_path)
        yield f"attestation.json: {where}: {error.message}"
    for key in body:
        if key not in schema["properties"]:
            yield f"attestation.json: ${key}: not a member of the request body"
    text = body.get("body", "")
    if isinstance(text, str):
        if not text.strip():
            yield "attestation.json: $.body: blank once trimmed"
        if utf16_length(text) > 2000:
            yield f"attestation.json: $.body: {utf16_length(text)} UTF-16 code units (at most 2000)"
    url = body.get("evidenceUrl", "")
    if url and not re.fullmatch(r"https://\S+", url.strip()):
        yield f"attestation.json: $.evidenceUrl: {url!r} is not an https:// URL"
    summary = body.get("environmentSummary", "")
    if utf16_length(summary) > 200:
        yield f"attestation.json: $.environmentSummary: {utf16_length(summary)} UTF-16 code units (at most 200)"
    target = verdict.get("attestation", {}).get("idOrDigest")
    for error in Draft202012Validator(schema["$defs"]["idOrDigest"]).iter_errors(target):
        yield f"verdict.json: $.attestation.idOrDigest: {error.message}"
    if not isinstance(target, str) or not re.fullmatch(r"sha256:[0-9a-f]{64}", target):
        yield f"verdict.json: $.attestation.idOrDigest: {target!r} is not a sha256 digest"
    if verdict.get("type") != body.get("type"):
        yield f"verdict.json: $.type {verdict.get('type')!r} is not attestation.json's {body.get('type')!r}"


def main():
    schema = json.loads(pathlib.Path(sys.argv[1]).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    failures = []
    directories = [pathlib.Path(p) for p in sys.argv[2:]]
    for directory in directories:
        failures += [f"{directory}: {p}" for p in problems_of(schema, directory)]
    for failure in failures:
        print(failure)
    print(f"{len(directories)} attestations checked, {len(failures)} problems")
    return 1 if failures or not directories else 0


if __name__ == "__main__":
    sys.exit(main())
