"""Worker processes for the Python lanes (`kibench run --isolation`).

kibench runs each foreign implementation in a worker process of its own: a
crash, a signal, `exit()` or `os._exit()` there fails that lane alone. For
Python lanes the worker is this package again: the same interpreter, the
same library (libkibench_capi.so) and the same --impl entries, which kibench
starts with the command `worker_command` gives (passed to the library in
$KIBENCH_WORKER_COMMAND) and to which it adds `--lane NAME`, the pass, the
timeout and its socket."""

import json
import os
import sys

_ENV = "KIBENCH_WORKER_COMMAND"


def worker_command(capi_path, entries):
    """The program and arguments that start a worker for these --impl
    entries (py:MODULE:CALLABLE or a shipped lane's name)."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # -c keeps sys.path as `python -m` has it (the working directory first),
    # so `py:` entries resolve in the worker as they did here.
    bootstrap = (f"import sys; sys.path.insert(1, {package_parent!r}); "
                 "from kibench.cli import main; sys.exit(main())")
    return [sys.executable, "-c", bootstrap, "--capi", os.path.abspath(capi_path), "worker",
            "--entries", ",".join(entries)]


def export_worker_command(capi_path, entries):
    os.environ[_ENV] = json.dumps(worker_command(capi_path, entries))


def split_entries(argv):
    """Removes --entries E from a worker's argv; returns (entries, rest)."""
    entries, rest, k = [], [], 0
    while k < len(argv):
        if argv[k] == "--entries" and k + 1 < len(argv):
            entries = [e for e in argv[k + 1].split(",") if e]
            k += 2
            continue
        rest.append(argv[k])
        k += 1
    return entries, rest
