"""A PEP 517 build backend for the kibench Python package that needs only
the standard library, so `pip install .` works offline (no setuptools to
fetch into an isolated build environment). It packs python/kibench into a
wheel, with the absolute path of this source tree written into
kibench/_source.py (where libkibench_capi.so is looked for last) and the
licence files (LICENSE, NOTICE) in its .dist-info, and reads the metadata
from pyproject.toml's [project] table."""

import base64
import hashlib
import io
import os
import re
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "python", "kibench")


def _project():
    """The string keys of pyproject.toml's [project] table (name, version,
    description, requires-python, license: all this package declares)."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    try:
        import tomllib
    except ImportError:  # Python before 3.11: [project] holds only "key = \"string\"" lines
        match = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
        return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"', match.group(1), re.M))
    return {k: v for k, v in tomllib.loads(text)["project"].items() if isinstance(v, str)}


def _metadata(p):
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p.get('description', '')}"]
    if p.get("requires-python"):
        lines.append(f"Requires-Python: {p['requires-python']}")
    if p.get("license"):
        lines.append(f"License: {p['license']}")
    return "\n".join(lines) + "\n"


LICENCE_FILES = ("LICENSE", "NOTICE")


def _licence_files():
    """(name, bytes) of the licence files at the tree's root."""
    for name in LICENCE_FILES:
        with open(os.path.join(ROOT, name), "rb") as f:
            yield name, f.read()


def _files(editable):
    """(archive name, bytes) of the package."""
    if editable:
        yield "kibench_editable.pth", (os.path.join(ROOT, "python") + "\n").encode()
        return
    for folder, _, names in os.walk(PACKAGE):
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, os.path.dirname(PACKAGE)).replace(os.sep, "/")
            if relative == "kibench/_source.py":
                data = (f'"""The kibench source tree this package was built from."""\n\n'
                        f"SOURCE_TREE = {ROOT!r}\n").encode()
            else:
                with open(path, "rb") as f:
                    data = f.read()
            yield relative, data


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _wheel(wheel_directory, editable):
    p = _project()
    tag = "py3-none-any"
    dist_info = f"{p['name']}-{p['version']}.dist-info"
    wheel_name = f"{p['name']}-{p['version']}-{tag}.whl"
    entries = list(_files(editable))
    entries.append((f"{dist_info}/METADATA", _metadata(p).encode()))
    entries.extend((f"{dist_info}/{name}", data) for name, data in _licence_files())
    entries.append((f"{dist_info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: kibench_build\nRoot-Is-Purelib: true\n"
                                           f"Tag: {tag}\n").encode()))
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in entries)
    record += f"{dist_info}/RECORD,,\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries + [(f"{dist_info}/RECORD", record.encode())]:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    os.makedirs(wheel_directory, exist_ok=True)
    with open(os.path.join(wheel_directory, wheel_name), "wb") as f:
        f.write(buffer.getvalue())
    return wheel_name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, editable=False)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, editable=True)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    """The package's sources with pyproject.toml and this backend."""
    import tarfile

    p = _project()
    base = f"{p['name']}-{p['version']}"
    os.makedirs(sdist_directory, exist_ok=True)
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for relative in ("pyproject.toml", *LICENCE_FILES, "python/kibench", "python/backend", "docs/extending.md"):
            tar.add(os.path.join(ROOT, relative), arcname=f"{base}/{relative}",
                    filter=lambda t: None if "__pycache__" in t.name else t)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata(p).encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name
