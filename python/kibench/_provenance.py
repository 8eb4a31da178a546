"""Where a Python implementation's code comes from: the local modules its
module imports, transitively, their digest, and the git commit of the
repository that holds them. Never raises: a fact that cannot be read is
left out."""

import ast
import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import sysconfig

# git answers a local question; a hung one (a network filesystem, a lock)
# must not hold up the run.
GIT_TIMEOUT_S = 5

_KIBENCH_PACKAGE = os.path.dirname(os.path.realpath(__file__))


def _installed_roots():
    """Folders whose modules are the environment's, not the user's: the
    standard library of this Python and of the one a venv was made from."""
    roots = set()
    for scheme_path in ("stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(scheme_path)
        if path:
            roots.add(os.path.realpath(path))
    for prefix in {sys.base_prefix, sys.base_exec_prefix}:
        roots.add(os.path.realpath(os.path.join(prefix, "lib", f"python{sys.version_info[0]}."
                                                          f"{sys.version_info[1]}")))
    return tuple(sorted(roots))


_INSTALLED_ROOTS = _installed_roots()


def _under(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def is_local(path):
    """Whether a module file is the user's code: neither installed
    (site-packages, dist-packages, the standard library) nor kibench's own."""
    if not path or not os.path.isfile(path):
        return False
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    if _under(real, _KIBENCH_PACKAGE):
        return False
    return not any(_under(real, root) for root in _INSTALLED_ROOTS)


def _module_file(name):
    """The file of module `name` (a package's __init__.py), found without
    importing it; None where it has none (built-in, namespace package) or
    cannot be found."""
    module = sys.modules.get(name)
    if module is not None:
        return getattr(module, "__file__", None)
    search = None  # sys.path for a top-level name
    spec = None
    parts = name.split(".")
    for k in range(len(parts)):
        prefix = ".".join(parts[: k + 1])
        loaded = sys.modules.get(prefix)
        if loaded is not None and k + 1 < len(parts):
            search = list(getattr(loaded, "__path__", None) or [])
            continue
        try:
            spec = importlib.machinery.PathFinder.find_spec(prefix, search)
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
        if k + 1 < len(parts):
            search = list(spec.submodule_search_locations or [])
    return spec.origin if spec is not None and spec.has_location else None


def _imported_names(path, package):
    """The absolute names of the modules a .py file imports, anywhere in
    it (a function's own import included): for `import a.b` a and a.b, for
    `from a import b` a and a.b (b may be a submodule)."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                names.extend(".".join(parts[: k + 1]) for k in range(len(parts)))
        elif isinstance(node, ast.ImportFrom):
            relative = "." * node.level + (node.module or "")
            try:
                base = importlib.util.resolve_name(relative, package) if node.level else node.module
            except (ImportError, ValueError):
                continue  # a relative import outside a package: it cannot run either
            parts = base.split(".")
            names.extend(".".join(parts[: k + 1]) for k in range(len(parts)))
            names.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def local_files(module_file, package):
    """The module file, the packages it is in (their __init__.py ran
    first) and every local module file they import, transitively, as
    absolute paths (symbolic links resolved)."""
    first = os.path.realpath(module_file)
    found = {first}
    pending = [(first, package or "")]
    parts = (package or "").split(".") if package else []
    for k in range(len(parts)):
        name = ".".join(parts[: k + 1])
        init = _module_file(name)
        if init and is_local(init) and os.path.realpath(init) not in found:
            found.add(os.path.realpath(init))
            pending.append((os.path.realpath(init), name))
    while pending:
        path, path_package = pending.pop()
        if not path.endswith(".py"):
            continue  # a compiled extension: its bytes are hashed, its imports unknown
        for name in _imported_names(path, path_package):
            imported = _module_file(name)
            if not imported or not is_local(imported):
                continue
            imported = os.path.realpath(imported)
            if imported in found:
                continue
            found.add(imported)
            is_package = os.path.basename(imported) == "__init__.py"
            pending.append((imported, name if is_package else name.rpartition(".")[0]))
    return sorted(found)


def tree_digest(files, root):
    """sha256 of the lines "<sha256 hex>  <path>\\n", one per file, paths
    relative to `root` in byte order: the form of the build's treeDigest
    (cmake/source_revision.cmake), so an edit to any of the files changes it."""
    lines = []
    for path in files:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        lines.append((relative(path, root), hashlib.sha256(data).hexdigest()))
    listing = "".join(f"{digest}  {name}\n" for name, digest in sorted(lines, key=lambda n: n[0].encode()))
    return "sha256:" + hashlib.sha256(listing.encode("utf-8")).hexdigest()


def relative(path, root):
    return os.path.relpath(path, root).replace(os.sep, "/")


def _git(folder, *arguments):
    # Read-only: no index refresh written, no pager, no prompt.
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        result = subprocess.run(["git", "-C", folder, *arguments], capture_output=True, text=True,
                                timeout=GIT_TIMEOUT_S, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout if result.returncode == 0 else None


def git_revision(folder, files):
    """(repository root, HEAD commit, whether any of `files` differs from
    that commit: modified, untracked or ignored) for the git repository
    holding `folder`; None outside one, without git, or with no commit."""
    answer = _git(folder, "rev-parse", "--show-toplevel", "HEAD")
    lines = answer.split("\n") if answer else []
    if len(lines) < 2 or not lines[0] or not lines[1]:
        return None
    root, commit = os.path.realpath(lines[0].strip()), lines[1].strip().lower()
    inside = [relative(f, root) for f in map(os.path.realpath, files) if _under(f, root)]
    status = _git(root, "status", "--porcelain", "--ignored", "--untracked-files=all", "--", *inside) \
        if inside else ""
    # Unknown (git failed) reads as differing: a clean tree is a claim.
    dirty = status is None or bool(status.strip()) or len(inside) < len(files)
    return root, commit, dirty
