"""The calling convention of a Python implementation (docs/extending.md)."""

import collections
import re

PASSES = ("forward", "backward", "full")


class Outputs(collections.namedtuple("Outputs", "loss grad_student_input grad_student_weight grad_student_bias")):
    """What a run returns: the loss (a 0-d tensor or a float) and, after a full
    pass, the student gradients ([T, Hs], [V, Hs], and [V] where the workload
    has a student bias)."""

    __slots__ = ()

    def __new__(cls, loss, grad_student_input=None, grad_student_weight=None, grad_student_bias=None):
        return super().__new__(cls, loss, grad_student_input, grad_student_weight, grad_student_bias)


class Inputs:
    """kibench's inputs for one workload, viewed without a copy (read-only):

    student_input [T, Hs], student_weight [V, Hs], teacher_input [T, H],
    teacher_weight [V, H] (bf16), target [T] (int64), student_bias and
    teacher_bias [V] (bf16, None without a bias); the scalars beta,
    temperature, weight_hard, weight_soft, ignore_index; the sizes tokens,
    vocab, hidden, student_hidden; pass_ (the measured pass), device ("cuda"
    or "cpu") and stream (torch.cuda.ExternalStream of kibench's stream, on
    which every call runs; None on the CPU).

    With tensors="torch" the tensors are torch tensors (bf16 as
    torch.bfloat16); the student's (input, weight, bias) require grad, and
    kibench sets their .grad to None before every sample. With
    tensors="numpy" (CPU only) they are numpy arrays, bf16 as uint16 bit
    patterns (kibench.bf16_to_float32 widens them)."""

    TENSORS = ("student_input", "student_weight", "teacher_input", "teacher_weight", "target", "student_bias",
               "teacher_bias")
    SCALARS = ("tokens", "vocab", "hidden", "student_hidden", "beta", "temperature", "weight_hard", "weight_soft",
               "ignore_index")

    def __init__(self, **values):
        for key, value in values.items():
            setattr(self, key, value)

    def student_leaves(self):
        return [t for t in (self.student_input, self.student_weight, self.student_bias) if t is not None]


def backward(loss, inputs):
    """Runs loss.backward() and returns Outputs with the student leaves'
    gradients: the autograd way to answer a full pass."""
    loss.backward()
    bias = inputs.student_bias.grad if inputs.student_bias is not None else None
    return Outputs(loss, inputs.student_input.grad, inputs.student_weight.grad, bias)


def bf16_to_float32(bits):
    """numpy bf16 bit patterns (uint16) widened to float32."""
    import numpy

    return (numpy.asarray(bits, dtype=numpy.uint16).astype(numpy.uint32) << 16).view(numpy.float32)


_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def lane_name(text):
    """A callable's name as an --impl name: lower case, '_' as '-'."""
    return re.sub(r"[^a-z0-9.-]", "-", text.lower()).strip("-") or "python"


def implementation(fn=None, *, name=None, title=None, description=None, device="cuda", tensors="torch",
                   passes=("full", "forward"), computes_loss=True, version=None, commit=None, repository=None,
                   licence=None, package=None, requirements=None, language="python", architectures=None,
                   revision_name=None):
    """Declares a Python implementation and its ImplementationRevision facts.

    name: the --impl name (default: the callable's name, '_' as '-').
    device: "cuda" (kibench's device buffers and stream) or "cpu".
    tensors: "torch", or "numpy" (CPU only).
    passes: the passes it can time; kibench skips it, saying why, for others
        ("backward" needs a before_sample on the returned object: see
        docs/extending.md).
    version, commit (40 hex digits), repository, licence (SPDX): the
        project's revision; without a version or commit the module file's
        sha256 still tells revisions apart (spec.source).
    package, requirements: the installed package the code is and what it
        runs on ({"triton": "3.6.0"}); torch's version (and triton's) are
        added for torch implementations.
    revision_name: metadata.name of the revision (default: name)."""

    def declare(f):
        if device not in ("cuda", "cpu"):
            raise ValueError(f"{f.__qualname__}: device {device!r} is neither 'cuda' nor 'cpu'")
        if tensors not in ("torch", "numpy") or (tensors == "numpy" and device != "cpu"):
            raise ValueError(f"{f.__qualname__}: tensors {tensors!r}: 'torch', or 'numpy' on the cpu")
        unknown = set(passes) - set(PASSES)
        if unknown:
            raise ValueError(f"{f.__qualname__}: passes {sorted(unknown)}: not forward, backward or full")
        f.__kibench__ = {
            "name": name or lane_name(f.__name__), "title": title, "description": description, "device": device,
            "tensors": tensors, "passes": tuple(passes), "computes_loss": computes_loss, "version": version,
            "commit": commit, "repository": repository, "licence": licence, "package": package,
            "requirements": dict(requirements or {}), "language": language,
            "architectures": list(architectures or []), "revision_name": revision_name,
        }
        return f

    return declare(fn) if fn is not None else declare
