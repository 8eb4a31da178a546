"""Python implementations that try to be timed for work they do not do, or
that harm their neighbours, for test_untrusted_lanes.py (CPU, numpy). Each
computes the right answer where it must, so that only the harness's own
checks can catch it."""

import os
import sys

import numpy as np

import kibench

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
from numpy_jsd import numpy_jsd  # noqa: E402  (the honest computation they lean on)


def _honest(inputs):
    return numpy_jsd.__wrapped__(inputs) if hasattr(numpy_jsd, "__wrapped__") else numpy_jsd(inputs)


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def right_three_times(inputs):
    """Right for its first three calls after each prepare (the check, or
    two warm-ups and the first timed sample), then its gradients are 10 %
    off: a buffer zeroed only once looks like this."""
    honest = _honest(inputs)
    calls = [0]

    def run(pass_):
        calls[0] += 1
        out = honest(pass_)
        if calls[0] <= 3:
            return out
        return kibench.Outputs(out.loss, out.grad_student_input * 1.1, out.grad_student_weight * 1.1,
                               out.grad_student_bias)

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def writes_teacher_weight(inputs):
    """Computes its own answer, then scribbles on the shared teacher weights."""
    honest = _honest(inputs)
    weights = inputs.teacher_weight

    def run(pass_):
        out = honest(pass_)
        weights.flags.writeable = True
        weights[0, :] ^= 0x0040
        return out

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def exits_in_timed_calls(inputs):
    """Right in its check and warm-up, then raises SystemExit."""
    honest = _honest(inputs)
    calls = [0]

    def run(pass_):
        calls[0] += 1
        if calls[0] > 2:
            raise SystemExit(0)
        return honest(pass_)

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def ends_its_process(inputs):
    """Right in its check and warm-up, then ends the process it runs in
    with os._exit(0): no exception, no message, exit code 0."""
    honest = _honest(inputs)
    calls = [0]

    def run(pass_):
        calls[0] += 1
        if calls[0] > 3:
            os._exit(0)
        return honest(pass_)

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def segfaults(inputs):
    """Right in its check and warm-up, then reads address 0."""
    import ctypes

    honest = _honest(inputs)
    calls = [0]

    def run(pass_):
        calls[0] += 1
        if calls[0] > 3:
            ctypes.string_at(0)
        return honest(pass_)

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def cached_in_prepare(inputs):
    """Computes the answer once, when prepared, and returns it on every
    call: right for the inputs it was prepared on, and for no others."""
    out = _honest(inputs)("full")

    def run(pass_):
        return out

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def cached_after_first_call(inputs):
    """Computes on its first call after each prepare, then returns that."""
    honest = _honest(inputs)
    kept = []

    def run(pass_):
        if not kept:
            kept.append(honest(pass_))
        return kept[0]

    return run
