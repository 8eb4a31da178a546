"""python -m kibench: kibench's command line with Python implementations.

    python -m kibench run WORKLOAD... --impl fused,cublas-floor,torch-eager,py:MODULE:CALLABLE [kibench run flags]
    python -m kibench list                # also lists the shipped Python implementations
    python -m kibench reproduce RECORD... # a record whose implementation is a shipped Python lane
                                          # (torch-eager, liger, ...: docs/reproduce.md)
    python -m kibench SUBCOMMAND ...      # any other subcommand, as `kibench SUBCOMMAND`

Every flag of `kibench run` is kibench's own: the arguments go to the same
command line (libkibench_capi.so's kibench_cli_run), with the Python
implementations handed in as plugin lanes, so the run directory is the one
`kibench run` writes and all implementations share its rounds. --capi PATH
names libkibench_capi.so (else $KIBENCH_CAPI, the folder of `kibench` on
PATH, or build/ of the source tree this package came from)."""

import ctypes
import signal
import sys

from . import capi, lanes, worker
from .lane import LaneSet, PythonLane, gpu_default_problem, resolve


def _split_capi(argv):
    """Removes --capi PATH / --capi=PATH from argv; returns (path, rest)."""
    path, rest, k = None, [], 0
    while k < len(argv):
        if argv[k] == "--capi" and k + 1 < len(argv):
            path, k = argv[k + 1], k + 2
            continue
        if argv[k].startswith("--capi="):
            path, k = argv[k].split("=", 1)[1], k + 1
            continue
        rest.append(argv[k])
        k += 1
    return path, rest


def _impl_values(argv):
    """Indexes and values of every --impl in argv (after the subcommand)."""
    found = []
    for k, arg in enumerate(argv):
        if arg == "--impl" and k + 1 < len(argv):
            found.append((k + 1, argv[k + 1], ""))
        elif arg.startswith("--impl="):
            found.append((k, arg.split("=", 1)[1], "--impl="))
    return found


def _lane_for(name):
    """The Python lane an --impl entry names, or None for a kibench name."""
    if name.startswith("py:"):
        factory, symbol = resolve(name[3:])
        return PythonLane(factory, symbol)
    if name in lanes.SHIPPED:
        attribute = lanes.SHIPPED[name]
        return PythonLane(getattr(lanes, attribute), f"kibench.lanes:{attribute}", missing=lanes.missing(name))
    return None


def _run_lanes(argv):
    """Rewrites `py:` entries of --impl to their lane names; returns the lanes."""
    python_lanes = {}
    for index, value, prefix in _impl_values(argv):
        names = []
        for entry in value.split(","):
            lane = _lane_for(entry)
            if lane is None:
                names.append(entry)
                continue
            # Named, it must run: an undecorated callable is a CUDA lane by
            # default, which a machine without a GPU would skip in silence.
            problem = gpu_default_problem(lane)
            if problem:
                raise LookupError(f"--impl {entry}: {problem}")
            # A shipped lane whose library is missing is skipped in a default
            # list; named, it is refused with what to install.
            if lane.missing:
                raise LookupError(f"--impl {entry}: cannot run here: it {lane.missing}")
            if lane.name in python_lanes and python_lanes[lane.name].symbol != lane.symbol:
                raise LookupError(f"--impl {entry}: the name {lane.name!r} is taken by "
                                  f"{python_lanes[lane.name].symbol}")
            lane.entry = entry
            python_lanes[lane.name] = lane
            names.append(lane.name)
        argv[index] = prefix + ",".join(names)
    return list(python_lanes.values())


def _asks_for_run_help(subcommand, argv):
    return subcommand == "run" and any(a in ("-h", "--help") for a in argv[argv.index("run") + 1:])


def _python_run_help():
    """What `python -m kibench run` adds to `kibench run`."""
    shipped = []
    for name, attribute in lanes.SHIPPED.items():
        declared = getattr(lanes, attribute).__kibench__
        why_not = lanes.missing(name)
        shipped.append(f"  {name:<30} {', '.join(declared['operations'])}: {declared['title']}")
        if why_not:
            shipped.append(f"  {'':<30} (skipped here: it {why_not})")
    return "\n".join([
        "",
        "Python implementations (python -m kibench run):",
        "  --impl py:MODULE:CALLABLE          a callable in a module imported by its dotted name, from the",
        "                                     current folder or the environment (e.g. py:mykernels.jsd:fused_jsd)",
        "  --impl py:path/to/file.py:CALLABLE a callable in a .py file; the file's folder goes first on",
        "                                     sys.path, so it imports the modules beside it",
        "  --capi PATH                        libkibench_capi.so to run with (else $KIBENCH_CAPI, the folder of",
        "                                     `kibench` on PATH or its ../lib, or build/ of the source tree this",
        "                                     package came from)",
        "  CALLABLE prepares and returns the function kibench times; @kibench.implementation declares its",
        "  device, tensors, passes and operations (docs/extending.md). A numpy lane",
        "  (device=\"cpu\", tensors=\"numpy\") needs numpy in this Python (pip install numpy); a torch lane",
        "  needs torch. Its revision records the module's sha256, a digest over the local modules it",
        "  imports, and the git commit of their repository.",
        "",
        "Shipped Python implementations (--impl NAME; `python -m kibench list` says which run here):",
        *shipped,
        "",
        "Example:",
        "  python -m kibench run workloads/small/small-v1000-h64-t32.json \\",
        "      --impl cpu-reference,py:examples/python/numpy_jsd.py:numpy_jsd",
        ""])


def _run_help(explicit, argv):
    """`kibench run`'s own help from the C library, then the Python lanes'."""
    try:
        lib, _ = capi.load(explicit)
    except capi.CapiNotFound as error:
        print(_python_run_help())
        print(f"kibench: kibench run's own flags need the C library: {error}", file=sys.stderr)
        return 2
    arguments = [b"kibench"] + [a.encode() for a in argv]
    sys.stdout.flush()
    code = lib.kibench_cli_run(len(arguments), (ctypes.c_char_p * len(arguments))(*arguments), None, 0, b"python")
    # The library writes through C's stdout buffer, this text through Python's.
    ctypes.CDLL(None).fflush(None)
    print(_python_run_help())
    return code


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    explicit, argv = _split_capi(argv)
    subcommand = next((a for a in argv if not a.startswith("-")), None)
    if _asks_for_run_help(subcommand, argv):
        return _run_help(explicit, argv)
    try:
        if subcommand == "run":
            python_lanes = _run_lanes(argv)
        elif subcommand in ("list", "reproduce"):
            python_lanes = [PythonLane(getattr(lanes, attribute), f"kibench.lanes:{attribute}",
                                       missing=lanes.missing(name)) for name, attribute in lanes.SHIPPED.items()]
            for lane, name in zip(python_lanes, lanes.SHIPPED):
                lane.entry = name
        elif subcommand == "worker":
            entries, argv = worker.split_entries(argv)
            python_lanes = [lane for lane in map(_lane_for, entries) if lane is not None]
        else:
            python_lanes = []
    except LookupError as error:
        print(f"kibench: --impl {error}" if not str(error).startswith("--impl") else f"kibench: {error}",
              file=sys.stderr)
        return 2
    try:
        lib, capi_path = capi.load(explicit)
    except capi.CapiNotFound as error:
        print(f"kibench: {error}", file=sys.stderr)
        return 2
    if subcommand != "worker":
        # Each Python lane runs in a worker process of its own (kibench run
        # --isolation): this package again, with the same entries.
        worker.export_worker_command(capi_path, [lane.entry for lane in python_lanes])
    lane_set = LaneSet(python_lanes) if python_lanes else None
    arguments = [b"kibench"] + [a.encode() for a in argv]
    c_argv = (ctypes.c_char_p * len(arguments))(*arguments)
    plugins = (ctypes.POINTER(capi.Plugin) * 1)(ctypes.pointer(lane_set.plugin)) if lane_set else None
    sys.stdout.flush()
    sys.stderr.flush()
    # Ctrl-C stops the run as it stops the kibench executable.
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        return lib.kibench_cli_run(len(arguments), c_argv, plugins, 1 if lane_set else 0, b"python")
    finally:
        signal.signal(signal.SIGINT, previous)
