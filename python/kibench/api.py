"""The calling convention of a Python implementation (docs/extending.md)."""

import collections
import re

PASSES = ("forward", "backward", "full")
# The operations a Python implementation may declare: kibench's registered
# operations (lib/operations/registry.cpp), whose names kibench hands a lane
# with each workload (kibench_plugin_inputs.operation_name); a name kibench
# does not register is refused here, before any library loads.
OPERATIONS = ("distill_jsd_loss", "jsd", "fused_linear_jsd")


class Outputs(collections.namedtuple("Outputs", "loss grad_student_input grad_student_weight grad_student_bias")):
    """What a run returns: the loss (a 0-d tensor or a float) and, after a full
    pass, the student gradients: for distill_jsd_loss and fused_linear_jsd
    those of x_s [T, Hs], W_s [V, Hs] and, where the workload has a student
    bias, b_s [V]; for jsd the one of the student log-probabilities [T, V]
    (grad_student_log_probs=, which is grad_student_input)."""

    __slots__ = ()

    def __new__(cls, loss, grad_student_input=None, grad_student_weight=None, grad_student_bias=None,
                grad_student_log_probs=None):
        if grad_student_log_probs is not None:
            if grad_student_input is not None:
                raise TypeError("Outputs: grad_student_log_probs is grad_student_input; give one of them")
            grad_student_input = grad_student_log_probs
        return super().__new__(cls, loss, grad_student_input, grad_student_weight, grad_student_bias)


class Inputs:
    """kibench's inputs for one workload, viewed without a copy (read-only).
    operation names the workload's ("distill_jsd_loss", "jsd",
    "fused_linear_jsd"); a tensor it does not have is None.

    distill_jsd_loss: student_input [T, Hs], student_weight [V, Hs],
    teacher_input [T, H], teacher_weight [V, H] (bf16), target [T] (int64),
    student_bias and teacher_bias [V] (bf16, None without a bias).
    fused_linear_jsd: the same with Hs = H, no biases, and target None where
    the workload has no labels (every token counts).
    jsd: student_log_probs (log q, Liger's `input`) and teacher_log_probs
    (log p, Liger's `target`), fp32 [T, V], and target as for
    fused_linear_jsd.

    Also the scalars beta, temperature, weight_hard, weight_soft,
    ignore_index; the sizes tokens, vocab, hidden, student_hidden (hidden and
    student_hidden are 0 for jsd); pass_ (the measured pass), device ("cuda"
    or "cpu") and stream (torch.cuda.ExternalStream of kibench's stream, on
    which every call runs; None on the CPU).

    With tensors="torch" the tensors are torch tensors (bf16 as
    torch.bfloat16, fp32 as torch.float32); the student's (input, weight,
    bias; jsd's student_log_probs) require grad, and kibench sets their
    .grad to None before every sample. With tensors="numpy" (CPU only) they
    are numpy arrays, fp32 as float32 and bf16 as uint16 bit patterns
    (kibench.bf16_to_float32 widens them)."""

    TENSORS = ("student_input", "student_weight", "teacher_input", "teacher_weight", "target", "student_bias",
               "teacher_bias", "student_log_probs", "teacher_log_probs")
    STUDENT = ("student_input", "student_weight", "student_bias", "student_log_probs")
    SCALARS = ("tokens", "vocab", "hidden", "student_hidden", "beta", "temperature", "weight_hard", "weight_soft",
               "ignore_index")

    def __init__(self, **values):
        for key, value in values.items():
            setattr(self, key, value)

    def student_leaves(self):
        return [t for t in (getattr(self, name, None) for name in self.STUDENT) if t is not None]


def backward(loss, inputs):
    """Runs loss.backward() and returns Outputs with the student leaves'
    gradients: the autograd way to answer a full pass."""
    loss.backward()
    if getattr(inputs, "operation", None) == "jsd":
        return Outputs(loss, grad_student_log_probs=inputs.student_log_probs.grad)
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
                   revision_name=None, operations=("distill_jsd_loss",)):
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
    revision_name: metadata.name of the revision (default: name).
    operations: the operations it computes ("distill_jsd_loss", "jsd",
        "fused_linear_jsd"); kibench skips it, saying why, on a workload of
        another, and records the workload's in its revision."""

    def declare(f):
        if device not in ("cuda", "cpu"):
            raise ValueError(f"{f.__qualname__}: device {device!r} is neither 'cuda' nor 'cpu'")
        if tensors not in ("torch", "numpy") or (tensors == "numpy" and device != "cpu"):
            raise ValueError(f"{f.__qualname__}: tensors {tensors!r}: 'torch', or 'numpy' on the cpu")
        unknown = set(passes) - set(PASSES)
        if unknown:
            raise ValueError(f"{f.__qualname__}: passes {sorted(unknown)}: not forward, backward or full")
        declared = (operations,) if isinstance(operations, str) else tuple(operations)
        unknown = [o for o in declared if o not in OPERATIONS]
        if not declared or unknown:
            raise ValueError(f"{f.__qualname__}: operations {list(declared)}: each one of {', '.join(OPERATIONS)}, "
                             "at least one")
        if len(set(declared)) != len(declared):
            raise ValueError(f"{f.__qualname__}: operations {list(declared)}: an operation listed twice")
        f.__kibench__ = {
            "name": name or lane_name(f.__name__), "title": title, "description": description, "device": device,
            "tensors": tensors, "passes": tuple(passes), "computes_loss": computes_loss, "version": version,
            "commit": commit, "repository": repository, "licence": licence, "package": package,
            "requirements": dict(requirements or {}), "language": language,
            "architectures": list(architectures or []), "revision_name": revision_name,
            "operations": declared,
        }
        return f

    return declare(fn) if fn is not None else declare
