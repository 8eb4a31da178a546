"""ctypes bindings of libkibench_capi.so: the structures of include/kibench/kibench.h
and kibench_plugin.h, and where the library is found."""

import ctypes
import os
import shutil

from . import _source

PLUGIN_ABI_VERSION = 2
MESSAGE_BYTES = 512

PASS_FORWARD, PASS_BACKWARD, PASS_FULL = 0, 1, 2
PASS_NAMES = {PASS_FORWARD: "forward", PASS_BACKWARD: "backward", PASS_FULL: "full"}
DTYPE_BF16, DTYPE_FP32, DTYPE_FP64, DTYPE_INT64 = 0, 1, 2, 3

OK, RUNTIME_ERROR, INCORRECT_SHAPE, INCORRECT_DTYPE, TIMEOUT, RESOURCE_EXCEEDED, UNSUPPORTED = range(7)


# kibench_plugin.h's KIBENCH_MEMORY_UNKNOWN: a workspace or peak not measured.
MEMORY_UNKNOWN = 2**64 - 1


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("on_device", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("shape", ctypes.c_int64 * 2)]


class Outputs(ctypes.Structure):
    _fields_ = [("loss", ctypes.c_double), ("grad_student_input", Tensor),
                ("grad_student_weight", Tensor), ("grad_student_bias", Tensor)]


class WorkloadInfo(ctypes.Structure):
    _fields_ = [("tokens", ctypes.c_int64), ("vocab", ctypes.c_int64), ("hidden", ctypes.c_int64),
                ("student_hidden", ctypes.c_int64), ("has_student_bias", ctypes.c_int32),
                ("has_teacher_bias", ctypes.c_int32), ("beta", ctypes.c_double),
                ("temperature", ctypes.c_double), ("weight_hard", ctypes.c_double),
                ("weight_soft", ctypes.c_double), ("ignore_index", ctypes.c_int64),
                ("max_relative_error", ctypes.c_double), ("max_absolute_error", ctypes.c_double),
                ("gemm_flops_forward", ctypes.c_double), ("gemm_flops_full", ctypes.c_double)]


class Memory(ctypes.Structure):
    _fields_ = [("input_bytes", ctypes.c_uint64), ("output_bytes", ctypes.c_uint64),
                ("workspace_bytes", ctypes.c_uint64), ("peak_bytes", ctypes.c_uint64)]


class PluginInputs(ctypes.Structure):
    _fields_ = [("info", WorkloadInfo), ("student_input", Tensor), ("student_weight", Tensor),
                ("teacher_input", Tensor), ("teacher_weight", Tensor), ("target", Tensor),
                ("student_bias", Tensor), ("teacher_bias", Tensor), ("pass_", ctypes.c_int32),
                ("device", ctypes.c_int32), ("stream", ctypes.c_void_p), ("timeout_s", ctypes.c_double),
                # version 2
                ("operation", ctypes.c_int32), ("operation_name", ctypes.c_char_p),
                ("student_log_probs", Tensor), ("teacher_log_probs", Tensor)]


class Pair(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class Revision(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("title", ctypes.c_char_p), ("description", ctypes.c_char_p),
                ("language", ctypes.c_char_p), ("path", ctypes.c_char_p), ("symbol", ctypes.c_char_p),
                ("version", ctypes.c_char_p), ("repository", ctypes.c_char_p), ("commit", ctypes.c_char_p),
                ("tree_digest", ctypes.c_char_p), ("licence", ctypes.c_char_p),
                ("architectures", ctypes.POINTER(ctypes.c_char_p)), ("dtypes", ctypes.POINTER(ctypes.c_char_p)),
                ("package", ctypes.c_char_p), ("package_version", ctypes.c_char_p),
                ("requirements", ctypes.POINTER(Pair)), ("requirement_count", ctypes.c_int32),
                ("labels", ctypes.POINTER(Pair)), ("label_count", ctypes.c_int32),
                ("source_digest", ctypes.c_char_p), ("source_file_name", ctypes.c_char_p),
                ("source_size_bytes", ctypes.c_int64)]


p, i32 = ctypes.c_void_p, ctypes.c_int32
CREATE = ctypes.CFUNCTYPE(p, p, p)
DESTROY = ctypes.CFUNCTYPE(None, p)
UNSUPPORTED_FN = ctypes.CFUNCTYPE(i32, p, ctypes.POINTER(WorkloadInfo), i32, p)
PREPARE = ctypes.CFUNCTYPE(i32, p, ctypes.POINTER(PluginInputs), p)
STEP = ctypes.CFUNCTYPE(i32, p, i32, p, p)  # before_sample and run
OUTPUTS = ctypes.CFUNCTYPE(i32, p, ctypes.POINTER(Outputs), p)
POISON = ctypes.CFUNCTYPE(i32, p, p, p)
MEMORY = ctypes.CFUNCTYPE(i32, p, ctypes.POINTER(Memory), p)
RELEASE = ctypes.CFUNCTYPE(i32, p, p)


class Implementation(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("summary", ctypes.c_char_p), ("needs_gpu", i32),
                ("computes_loss", i32), ("revision", Revision), ("context", p), ("create", CREATE),
                ("destroy", DESTROY), ("unsupported", UNSUPPORTED_FN), ("prepare", PREPARE),
                ("before_sample", STEP), ("run", STEP), ("outputs", OUTPUTS), ("poison", POISON),
                ("memory", MEMORY), ("release", RELEASE),
                # version 2
                ("operations", ctypes.POINTER(ctypes.c_char_p))]


class Plugin(ctypes.Structure):
    _fields_ = [("abi_version", i32), ("name", ctypes.c_char_p), ("implementation_count", i32),
                ("implementations", ctypes.POINTER(Implementation))]


def candidates(explicit=None):
    """Where libkibench_capi.so is looked for, in order: --capi PATH,
    $KIBENCH_CAPI (either, when given, is the only place), the folder of the
    `kibench` executable on PATH and, for an installed kibench
    (PREFIX/bin/kibench), PREFIX/lib, and build/ of the source tree this
    package was installed from."""
    if explicit:
        yield explicit, "--capi"
        return
    if os.environ.get("KIBENCH_CAPI"):
        yield os.environ["KIBENCH_CAPI"], "$KIBENCH_CAPI"
        return
    executable = shutil.which("kibench")
    if executable:
        folder = os.path.dirname(os.path.realpath(executable))
        yield os.path.join(folder, "libkibench_capi.so"), "kibench on PATH"
        yield os.path.join(os.path.dirname(folder), "lib", "libkibench_capi.so"), "kibench on PATH, installed"
    if _source.SOURCE_TREE:
        yield os.path.join(_source.SOURCE_TREE, "build", "libkibench_capi.so"), "the source tree's build/"


class CapiNotFound(Exception):
    pass


def load(explicit=None):
    """The C library, with the signatures this package calls."""
    tried = []
    for path, origin in candidates(explicit):
        if not os.path.isfile(path):
            tried.append(f"{path} ({origin})")
            continue
        try:
            lib = ctypes.CDLL(os.path.abspath(path))
        except OSError as error:
            raise CapiNotFound(f"{path} ({origin}): cannot load it: {error}") from None
        lib.kibench_cli_run.restype = ctypes.c_int
        lib.kibench_cli_run.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                        ctypes.POINTER(ctypes.POINTER(Plugin)), ctypes.c_int, ctypes.c_char_p]
        lib.kibench_capi_version.restype = ctypes.c_int
        return lib, path
    raise CapiNotFound("libkibench_capi.so not found; tried " + (", ".join(tried) or "nothing") +
                       ". Build kibench (bash scripts/build.sh) or name it with --capi PATH or $KIBENCH_CAPI")
