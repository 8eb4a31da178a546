"""Python implementations that misbehave on purpose, one way each, for
test_package.py (CPU, numpy)."""

import time

import numpy as np

import kibench


def _shapes(inputs):
    return (inputs.tokens, inputs.student_hidden), (inputs.vocab, inputs.student_hidden)


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def raises(inputs):
    def run(pass_):
        raise ValueError("deliberate failure")

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def raises_in_prepare(inputs):
    raise RuntimeError("no state")


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def wrong_shape(inputs):
    x, w = _shapes(inputs)

    def run(pass_):
        return 1.0, np.zeros(x, np.float32), np.zeros((w[0], w[1] - 1), np.float32)

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def wrong_dtype(inputs):
    x, w = _shapes(inputs)

    def run(pass_):
        return 1.0, np.zeros(x, np.float16), np.zeros(w, np.float16)

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def nan(inputs):
    x, w = _shapes(inputs)

    def run(pass_):
        return float("nan"), np.full(x, np.nan, np.float32), np.full(w, np.nan, np.float32)

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def never_finishes(inputs):
    def run(pass_):
        time.sleep(3600)

    return run


not_callable = 3


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1", operations=("jsd",))
def jsd_wrong_gradient(inputs):
    """A jsd lane of the right shapes whose gradient is off by a factor of 2."""
    shape = (inputs.tokens, inputs.vocab)

    def run(pass_):
        q, p = np.exp(inputs.student_log_probs), np.exp(inputs.teacher_log_probs)
        log_m = np.log(0.5 * (p + q))
        loss = (0.5 * p * (inputs.teacher_log_probs - log_m) + 0.5 * q * (inputs.student_log_probs - log_m)).sum()
        grad = (q * (inputs.student_log_probs - log_m)).astype(np.float32) / inputs.tokens
        assert grad.shape == shape
        return loss / inputs.tokens, grad

    return run


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1")
def loss_as_text(inputs):
    x, w = _shapes(inputs)

    def run(pass_):
        return "3.0", np.zeros(x, np.float32), np.zeros(w, np.float32)

    return run


def undeclared(inputs):
    """No @kibench.implementation: a CUDA implementation by default."""

    def run(pass_):
        return 0.0

    return run
