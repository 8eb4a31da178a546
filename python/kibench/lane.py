"""A Python implementation as a kibench plugin lane (kibench_plugin.h): the
ctypes callbacks kibench calls, each turning an exception into the status
and one-line reason the run records."""

import contextlib
import ctypes
import gc
import hashlib
import importlib.metadata
import importlib.util
import inspect
import math
import os
import platform
import signal
import sys
import threading
import tracemalloc

from . import _provenance, capi
from .api import Inputs, Outputs


class LaneError(Exception):
    """A failure of a known kind (status is a kibench_plugin_status)."""

    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status


class _TimedOut(BaseException):
    pass


def _one_line(text):
    return " ".join(str(text).split())[: capi.MESSAGE_BYTES - 1]


def _write(message, text):
    data = _one_line(text).encode("utf-8", "replace")[: capi.MESSAGE_BYTES - 1] + b"\0"
    ctypes.memmove(message, data, len(data))


@contextlib.contextmanager
def _deadline(seconds):
    """Interrupts Python code still running after `seconds` (SIGALRM; the
    main thread only). Code blocked inside a C call is interrupted when it
    returns to Python."""
    if not seconds or seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise _TimedOut()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _version_of(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _is_commit(text):
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


def _listing(names, limit):
    """The names joined by commas in at most `limit` characters: whole
    names, the first ones and a count where all do not fit."""
    text = ", ".join(names)
    if len(text) <= limit:
        return text
    kept = []
    for name in names:
        if len(", ".join(kept + [name]) + f", … ({len(names)} files)") > limit:
            break
        kept.append(name)
    return ", ".join(kept + [f"… ({len(names)} files)"])


def _file_digest(path):
    with open(path, "rb") as f:
        data = f.read()
    return "sha256:" + hashlib.sha256(data).hexdigest(), os.path.basename(path), len(data)


def _inputs_key(raw):
    """What tells one workload's inputs from another's: the operation, the
    pass and every tensor's address and shape."""
    tensors = tuple((t.data, t.dtype, t.rank, tuple(t.shape)) for t in
                    (getattr(raw, name) for name in Inputs.TENSORS))
    return raw.operation, raw.pass_, tensors


def _traced(body):
    """body()'s result and (bytes it allocated that are still held, its
    peak), as tracemalloc counts them. Tracing runs only inside body, so
    what other lanes do between two calls is never counted; where tracing
    was already on (python -X tracemalloc) it is left on."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    else:
        tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    try:
        result = body()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        if started:
            tracemalloc.stop()
    return result, (max(0, current - base), max(0, peak - base))


class PythonLane:
    """One Python implementation: `factory(inputs)` prepares and returns the
    function kibench times. `missing` (a reason) makes kibench skip it."""

    def __init__(self, factory, symbol, missing=None, facts=None):
        self.factory = factory
        self.symbol = symbol
        self.missing = missing
        self.facts = dict(getattr(factory, "__kibench__", None) or facts or {})
        from .api import implementation

        # False when nothing declared the device: it is "cuda" by default.
        self.declared_device = bool(self.facts)
        if not self.facts:
            implementation(factory)
            self.facts = dict(factory.__kibench__)
        self.name = self.facts["name"]
        self.device = self.facts["device"]
        self.tensors = self.facts["tensors"]
        self.operations = tuple(self.facts.get("operations") or ("distill_jsd_loss",))
        self.entry = None  # the --impl entry that named it (a worker resolves it again)
        self.runner = None
        self.inputs = None
        self.torch = None
        self.stream = None
        self.result = None
        self.kept = []
        self.timeout_s = 0.0
        self.memory_base = 0
        # numpy lanes: host bytes seen by tracemalloc (see _traced).
        self.inputs_key = None       # which inputs the lane is prepared on
        self.host_memory = None      # (inputs_key, peak) of a prepare and the run right after it
        self.host_pending = None     # the prepare's (retained, peak), until that run

    # ------------------------------------------------------------ facts
    def revision(self):
        """The facts of the lane's ImplementationRevision, as strings."""
        f = self.facts
        module = inspect.getmodule(self.factory)
        path = getattr(module, "__file__", None) or inspect.getsourcefile(self.factory)
        # A module loaded from a path has no importable name: its file's is the package's.
        top = (module.__name__ if module else self.symbol.partition(":")[0]).split(".")[0]
        distribution = f["package"] or top
        version = f["version"] or _version_of(distribution) or "unversioned"
        requirements = dict(f["requirements"])
        if self.tensors == "torch":
            for package in ("torch", "triton"):
                found = _version_of(package)
                if found:
                    requirements.setdefault(package, found)
        if self.tensors == "numpy":
            found = _version_of("numpy")
            if found:
                requirements.setdefault("numpy", found)
        requirements = {k.replace("-", "_").lower(): v for k, v in requirements.items()}
        doc = inspect.getdoc(self.factory) or ""
        facts = {
            "name": f["revision_name"] or self.name,
            "title": f["title"] or (doc.splitlines()[0] if doc else self.name),
            "description": f["description"] or " ".join(doc.split("\n\n")[0].split()) if doc else f["description"],
            "language": f["language"],
            "path": os.path.relpath(path) if path and not os.path.relpath(path).startswith("..") else
            (os.path.basename(path) if path else None),
            "symbol": self.symbol,
            "version": version,
            "repository": f["repository"],
            "commit": f["commit"],
            "licence": f["licence"],
            "architectures": f["architectures"] or ([platform.machine().lower()] if self.device == "cpu" else []),
            "package": distribution,
            "package_version": _version_of(distribution) or version,
            "requirements": requirements,
            "labels": {"python": platform.python_version()},
        }
        if path and os.path.isfile(path):
            facts["source"] = _file_digest(path)
            if _provenance.is_local(path):
                self._add_local_provenance(facts, path, getattr(module, "__package__", None))
        return facts

    # A label's value is at most this many characters (KernelIndex).
    LABEL_CHARS = 200

    def _add_local_provenance(self, facts, path, package):
        """The user's code as it is on disk: projectRevision.treeDigest over
        the module and every local module it imports (identity, so an edit to
        any of them makes a new revision), the commit of the git repository
        holding them, and labels a reader needs beside those: which files the
        digest covers and whether they differ from the commit."""
        module_file = os.path.realpath(path)
        folder = os.path.dirname(module_file)
        files = _provenance.local_files(module_file, package)
        # Paths from the module's folder: the same digest with or without
        # git, wherever the folder is.
        facts["tree_digest"] = _provenance.tree_digest(files, folder)
        imported = [_provenance.relative(f, folder) for f in files if f != module_file]
        if imported:
            facts["labels"]["local_imports"] = _listing(imported, self.LABEL_CHARS)
        git = _provenance.git_revision(folder, files)
        if git is None:
            return
        root, commit, dirty = git
        facts["path"] = _provenance.relative(module_file, root)
        if _is_commit(commit):
            if not facts["commit"]:
                facts["commit"] = commit
            elif facts["commit"] != commit:
                facts["labels"]["git_commit"] = commit
        # Not identity (the tree digest is): a reader's hint that the commit
        # alone does not reproduce this code, as for a built-in's dirty build.
        if dirty:
            facts["labels"]["source_tree"] = "differs from its commit"

    # ------------------------------------------------------ the callbacks
    # Preparing may compile and warm up (torch.compile, Triton autotuning):
    # it gets this many times --timeout.
    PREPARE_ALLOWANCE = 10

    def call(self, message, body, allowance=1):
        """Runs body(); an exception becomes a status and a message."""
        seconds = self.timeout_s * allowance
        try:
            with _deadline(seconds):
                body()
            return capi.OK
        except _TimedOut:
            _write(message, f"did not finish within {seconds:g} s" +
                   (" (--timeout)" if allowance == 1 else f" ({allowance} x --timeout, for prepare)"))
            return capi.TIMEOUT
        except LaneError as error:
            _write(message, str(error))
            return error.status
        except MemoryError:
            _write(message, "out of host memory")
            return capi.RESOURCE_EXCEEDED
        except Exception as error:  # the implementation's own failure, whatever it is
            oom = self.torch is not None and isinstance(error, getattr(self.torch.cuda, "OutOfMemoryError", ()))
            _write(message, f"{type(error).__name__}: {error}")
            return capi.RESOURCE_EXCEEDED if oom else capi.RUNTIME_ERROR
        except BaseException as error:  # SystemExit, KeyboardInterrupt, GeneratorExit, a user's own
            # Left to ctypes, it would be printed and the call would count as a success.
            _write(message, f"raised {type(error).__name__}{f': {error}' if str(error) else ''} "
                            "(a BaseException; the lane stops here)")
            return capi.RUNTIME_ERROR

    def unsupported(self, info, pass_code, message):
        pass_name = capi.PASS_NAMES.get(pass_code, str(pass_code))
        if self.missing:
            _write(message, self.missing)
            return capi.UNSUPPORTED
        if pass_name not in self.facts["passes"]:
            supported = ", ".join(self.facts["passes"])
            _write(message, f"cannot time the {pass_name} pass (it declares passes: {supported})")
            return capi.UNSUPPORTED
        if info.contents.student_hidden <= 0 and "jsd" not in self.operations:
            _write(message, "a workload without a student")
            return capi.UNSUPPORTED
        return capi.OK

    def _context(self):
        if self.stream is None:
            return contextlib.nullcontext()
        return self.torch.cuda.stream(self.stream)

    def prepare(self, raw):
        self.timeout_s = raw.timeout_s
        self.inputs = self._inputs(raw)
        self.inputs_key = _inputs_key(raw)
        self.host_pending = None
        with self._context():
            if self.torch is not None and self.device == "cuda":
                self.torch.cuda.synchronize()
                self.memory_base = self.torch.cuda.memory_allocated()
            if self.traces_host_memory():
                self.runner, self.host_pending = _traced(lambda: self.factory(self.inputs))
            else:
                self.runner = self.factory(self.inputs)
            if not callable(self.runner):
                raise LaneError(capi.RUNTIME_ERROR, f"{self.symbol} returned {type(self.runner).__name__}, not the "
                                                    "function to time")
            if self.torch is not None and self.device == "cuda":
                self.stream.synchronize()
                self.torch.cuda.reset_peak_memory_stats()

    def _grad_mode(self, pass_code):
        if self.torch is None:
            return contextlib.nullcontext()
        return self.torch.enable_grad() if pass_code != capi.PASS_FORWARD else self.torch.no_grad()

    def traces_host_memory(self):
        """Whether tracemalloc sees what this lane allocates: numpy's arrays
        are traced, torch's allocator is not."""
        return self.tensors == "numpy"

    def before_sample(self, pass_code):
        # The harness calls before_sample before every warm-up and timed
        # run; only the check runs straight after prepare. Tracing stops
        # here, so no timed run pays tracemalloc's cost.
        self.host_pending = None
        if self.tensors == "torch":
            for leaf in self.inputs.student_leaves():
                leaf.grad = None
        hook = getattr(self.runner, "before_sample", None)
        if hook is not None:
            with self._context(), self._grad_mode(pass_code):
                hook(capi.PASS_NAMES[pass_code])

    def run(self, pass_code):
        self.result = None
        with self._context(), self._grad_mode(pass_code):
            if self.host_pending is None:
                self.result = self.runner(capi.PASS_NAMES[pass_code])
                return
            prepared, self.host_pending = self.host_pending, None
            self.result, ran = _traced(lambda: self.runner(capi.PASS_NAMES[pass_code]))
            # What prepare kept, then the run's own high-water mark on top.
            self.host_memory = (self.inputs_key, max(prepared[1], prepared[0] + ran[1]))

    def outputs(self, out):
        if self.stream is not None:
            self.stream.synchronize()
        result = self.result
        self.kept = []
        out.loss = 0.0
        out.grad_student_input = capi.Tensor()
        out.grad_student_weight = capi.Tensor()
        out.grad_student_bias = capi.Tensor()
        if result is None:
            return  # no run yet: nothing exposed
        if isinstance(result, dict):
            result = Outputs(**result)
        elif isinstance(result, (tuple, list)) and not isinstance(result, Outputs):
            if not 1 <= len(result) <= 4:
                raise LaneError(capi.INCORRECT_SHAPE, f"returned {len(result)} values; a run returns the loss, "
                                                      "then grad x_s, grad W_s and grad b_s")
            result = Outputs(*result)
        elif not isinstance(result, Outputs):
            result = Outputs(result)
        out.loss = self._loss(result.loss)
        for field in ("grad_student_input", "grad_student_weight", "grad_student_bias"):
            value = getattr(result, field)
            if value is not None:
                setattr(out, field, self._tensor(field, value))

    def memory(self, m):
        torch = self.torch
        m.input_bytes = 0
        out_bytes = sum(int(t.nbytes) for t in self.kept)
        if self.traces_host_memory() and self.host_memory and self.host_memory[0] == self.inputs_key:
            # Measured on the check run (prepare, then one run with nothing
            # between) of the inputs the timed runs used.
            m.output_bytes = out_bytes
            m.peak_bytes = max(self.host_memory[1], out_bytes)
            m.workspace_bytes = m.peak_bytes - out_bytes
            return
        if torch is None or self.device != "cuda":
            # Not traced here (a torch lane on the CPU, or calls since the
            # traced ones): unknown, which the record says, never 0.
            m.output_bytes = out_bytes
            m.workspace_bytes = capi.MEMORY_UNKNOWN
            m.peak_bytes = capi.MEMORY_UNKNOWN
            return
        peak = max(0, torch.cuda.max_memory_allocated() - self.memory_base)
        m.output_bytes = out_bytes
        m.peak_bytes = max(peak, out_bytes)
        m.workspace_bytes = m.peak_bytes - out_bytes

    def release(self):
        self.runner = self.result = self.inputs = None
        self.kept = []
        gc.collect()
        if self.torch is not None and self.device == "cuda":
            self.torch.cuda.empty_cache()

    # ---------------------------------------------------------- tensors
    def _inputs(self, raw):
        info = raw.info
        values = {name: getattr(info, name) for name in Inputs.SCALARS}
        operation = raw.operation_name.decode() if raw.operation_name else "distill_jsd_loss"
        values.update(pass_=capi.PASS_NAMES.get(raw.pass_, "full"), device=self.device, stream=None,
                      operation=operation)
        if self.tensors == "torch":
            import torch

            self.torch = torch
            if self.device == "cuda":
                self.stream = torch.cuda.ExternalStream(raw.stream, device=torch.device("cuda", raw.device))
                values["stream"] = self.stream
        for name in Inputs.TENSORS:
            values[name] = self._view(getattr(raw, name), name in Inputs.STUDENT)
        return Inputs(**values)

    def _view(self, t, student):
        if not t.data:
            return None
        shape = tuple(t.shape[k] for k in range(t.rank))
        count = math.prod(shape)
        code = {capi.DTYPE_BF16: ("<i2", ctypes.c_int16), capi.DTYPE_FP32: ("<f4", ctypes.c_float),
                capi.DTYPE_INT64: ("<i8", ctypes.c_int64)}[t.dtype]
        if self.tensors == "numpy":
            import numpy

            array = numpy.ctypeslib.as_array((code[1] * count).from_address(t.data)).reshape(shape)
            array = array.view(numpy.uint16) if t.dtype == capi.DTYPE_BF16 else array
            array.flags.writeable = False
            return array
        torch = self.torch
        if t.on_device:
            class Interface:
                __cuda_array_interface__ = {"shape": shape, "typestr": code[0], "data": (t.data, False),
                                            "version": 3, "strides": None, "stream": None}

            view = torch.as_tensor(Interface(), device=self.stream.device)
        else:
            dtype = {capi.DTYPE_BF16: torch.int16, capi.DTYPE_FP32: torch.float32,
                     capi.DTYPE_INT64: torch.int64}[t.dtype]
            view = torch.frombuffer((code[1] * count).from_address(t.data), dtype=dtype).reshape(shape)
        view = view.view(torch.bfloat16) if t.dtype == capi.DTYPE_BF16 else view
        # Leaves of their own: autograd's gradients land on these, never on kibench's memory.
        return view.detach().requires_grad_(True) if student else view

    def _loss(self, loss):
        if isinstance(loss, (int, float)):
            return float(loss)
        # A number, a NumPy scalar or a one-element tensor: float("3.0") of a
        # string would take text for a loss.
        if isinstance(loss, (str, bytes)) or not (hasattr(loss, "item") or hasattr(loss, "__float__")):
            raise LaneError(capi.INCORRECT_DTYPE, f"loss is a {type(loss).__name__}; a run returns a number "
                                                  "(a float, a NumPy scalar or a one-element tensor)")
        size = getattr(loss, "size", None)
        numel = loss.numel() if hasattr(loss, "numel") else getattr(loss, "size", 1)
        if numel != 1:
            shape = list(loss.shape) if hasattr(loss, "shape") else size
            raise LaneError(capi.INCORRECT_SHAPE, f"loss has shape {shape}; a run returns one scalar")
        return float(loss.item() if hasattr(loss, "item") else loss)

    def _tensor(self, field, value):
        torch = self.torch
        if self.tensors == "torch":
            if not isinstance(value, torch.Tensor):
                raise LaneError(capi.INCORRECT_DTYPE, f"{field} is a {type(value).__name__}, not a torch.Tensor")
            codes = {torch.bfloat16: capi.DTYPE_BF16, torch.float32: capi.DTYPE_FP32,
                     torch.float64: capi.DTYPE_FP64}
            if value.dtype not in codes:
                raise LaneError(capi.INCORRECT_DTYPE, f"{field} is {value.dtype}; kibench compares torch.bfloat16, "
                                                      "torch.float32 or torch.float64")
            on_device = value.is_cuda
            if on_device != (self.device == "cuda"):
                raise LaneError(capi.RUNTIME_ERROR, f"{field} is on {value.device}; a {self.device} implementation "
                                                    f"returns {self.device} tensors")
            value = value.detach().contiguous()
            pointer, code = value.data_ptr(), codes[value.dtype]
        else:
            import numpy

            if not isinstance(value, numpy.ndarray):
                raise LaneError(capi.INCORRECT_DTYPE, f"{field} is a {type(value).__name__}, not a numpy array")
            codes = {numpy.dtype("float32"): capi.DTYPE_FP32, numpy.dtype("float64"): capi.DTYPE_FP64}
            if value.dtype not in codes:
                raise LaneError(capi.INCORRECT_DTYPE, f"{field} is {value.dtype}; kibench compares float32 or "
                                                      "float64 arrays")
            value = numpy.ascontiguousarray(value)
            pointer, code, on_device = value.ctypes.data, codes[value.dtype], False
        self.kept.append(value)
        shape = list(value.shape)
        t = capi.Tensor()
        t.data, t.dtype, t.on_device = pointer, code, 1 if on_device else 0
        t.rank = len(shape)
        for k, extent in enumerate(shape[:2]):
            t.shape[k] = extent
        return t


class LaneSet:
    """The ctypes plugin description of a set of lanes, kept alive as long as
    this object is."""

    def __init__(self, lanes):
        self.lanes = lanes
        self.keep = []
        self.implementations = (capi.Implementation * len(lanes))()
        for slot, lane in zip(self.implementations, lanes):
            self._describe(slot, lane)
        self.plugin = capi.Plugin(capi.PLUGIN_ABI_VERSION, b"kibench python package", len(lanes),
                                  self.implementations)

    def _text(self, value):
        if value is None:
            return None
        data = str(value).encode("utf-8")
        self.keep.append(data)
        return data

    def _list(self, values):
        array = (ctypes.c_char_p * (len(values) + 1))(*[self._text(v) for v in values], None)
        self.keep.append(array)
        return array

    def _pairs(self, mapping):
        array = (capi.Pair * max(1, len(mapping)))(*[capi.Pair(self._text(k), self._text(v))
                                                     for k, v in sorted(mapping.items())])
        self.keep.append(array)
        return array, len(mapping)

    def _describe(self, slot, lane):
        facts = lane.revision()
        slot.name = self._text(lane.name)
        summary = facts["title"] + (f" [skipped here: {lane.missing}]" if lane.missing else "")
        slot.summary = self._text(summary)
        slot.needs_gpu = 1 if lane.device == "cuda" else 0
        slot.computes_loss = 1 if lane.facts["computes_loss"] else 0
        r = slot.revision
        for key in ("name", "title", "description", "language", "path", "symbol", "version", "repository",
                    "commit", "tree_digest", "licence", "package", "package_version"):
            setattr(r, key, self._text(facts.get(key)))
        r.architectures = self._list(facts["architectures"])
        slot.operations = self._list(lane.operations)
        r.requirements, r.requirement_count = self._pairs(facts["requirements"])
        r.labels, r.label_count = self._pairs(facts["labels"])
        if "source" in facts:
            digest, file_name, size = facts["source"]
            r.source_digest, r.source_file_name, r.source_size_bytes = self._text(digest), self._text(file_name), size

        def create(context, message):
            return 1  # the lane object is the state

        def destroy(state):
            lane.release()

        def unsupported(context, info, pass_code, message):
            return lane.unsupported(info, pass_code, message)

        def prepare(state, inputs, message):
            lane.timeout_s = inputs.contents.timeout_s
            return lane.call(message, lambda: lane.prepare(inputs.contents), lane.PREPARE_ALLOWANCE)

        def before_sample(state, pass_code, stream, message):
            return lane.call(message, lambda: lane.before_sample(pass_code))

        def run(state, pass_code, stream, message):
            return lane.call(message, lambda: lane.run(pass_code))

        def outputs(state, out, message):
            return lane.call(message, lambda: lane.outputs(out.contents))

        def memory(state, m, message):
            return lane.call(message, lambda: lane.memory(m.contents))

        def release(state, message):
            return lane.call(message, lane.release)

        functions = {"create": capi.CREATE(create), "destroy": capi.DESTROY(destroy),
                     "unsupported": capi.UNSUPPORTED_FN(unsupported), "prepare": capi.PREPARE(prepare),
                     "before_sample": capi.STEP(before_sample), "run": capi.STEP(run),
                     "outputs": capi.OUTPUTS(outputs), "memory": capi.MEMORY(memory),
                     "release": capi.RELEASE(release)}
        for key, function in functions.items():
            setattr(slot, key, function)
            self.keep.append(function)


def resolve(spec):
    """`MODULE:CALLABLE` (MODULE a dotted name, or a path to a .py file) to
    the callable and its symbol; raises LookupError with the reason."""
    module_name, _, attribute = spec.rpartition(":")
    if not module_name or not attribute:
        raise LookupError(f"py:{spec}: expected py:MODULE:CALLABLE")
    if module_name.endswith(".py") or os.sep in module_name:
        if not os.path.isfile(module_name):
            raise LookupError(f"py:{spec}: no file {module_name}")
        if not module_name.endswith(".py"):
            raise LookupError(f"py:{spec}: {module_name} is not a .py file (name a Python source file, or a "
                              "module by its dotted name)")
        # As `python file.py` does: the file's folder first on sys.path, so
        # that it imports the modules beside it.
        folder = os.path.dirname(os.path.abspath(module_name))
        if folder not in sys.path:
            sys.path.insert(0, folder)
        loader_name = "kibench_user_" + hashlib.sha256(os.path.abspath(module_name).encode()).hexdigest()[:12]
        module_spec = importlib.util.spec_from_file_location(loader_name, module_name)
        module = importlib.util.module_from_spec(module_spec)
        try:
            module_spec.loader.exec_module(module)
        except Exception as error:
            raise LookupError(f"py:{spec}: importing {module_name} failed: {type(error).__name__}: {error}") from None
        symbol = f"{os.path.splitext(os.path.basename(module_name))[0]}:{attribute}"
    else:
        try:
            module = importlib.import_module(module_name)
        except Exception as error:
            raise LookupError(f"py:{spec}: cannot import {module_name}: {type(error).__name__}: {error}") from None
        symbol = spec
    target = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise LookupError(f"py:{spec}: {module_name} has no attribute {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise LookupError(f"py:{spec}: {attribute} is a {type(target).__name__}, not callable")
    # kibench records the callable's source and declarations on it: a
    # built-in (print, math.sqrt) or compiled callable has neither.
    if getattr(target, "__kibench__", None) is None and _python_source(target) is None:
        raise LookupError(f"py:{spec}: {attribute} is a built-in or compiled {type(target).__name__}, not a "
                          "Python function or class; name one defined in Python (def or class in a .py file)")
    return target, symbol


def _python_source(target):
    """The .py file a Python function or class was defined in; None for a
    built-in or compiled callable."""
    if not (inspect.isfunction(target) or inspect.ismethod(target) or inspect.isclass(target)):
        return None
    try:
        return inspect.getsourcefile(target)
    except TypeError:
        return None


def gpu_default_problem(lane):
    """Why a lane that runs on CUDA only because no device was declared (the
    default) cannot run here, with the fix; None when it can, or when the
    lane declared its device."""
    if lane.device != "cuda" or lane.declared_device:
        return None
    try:
        import torch
    except ImportError:
        why = "torch is not installed"
    else:
        why = None if torch.cuda.is_available() else "torch sees no CUDA device"
    if why is None:
        return None
    return (f"{lane.symbol}: declared device=cuda (the default), and that cannot run here ({why}); add "
            '@kibench.implementation(device="cpu", tensors="numpy") to run it on the CPU')
