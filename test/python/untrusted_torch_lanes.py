"""untrusted_lanes.py's lanes with torch on kibench's device buffers, for
test_untrusted_lanes.py on a GPU (KIBENCH_UNTRUSTED_DEVICE=cuda): each
computes PyTorch eager's answer (kibench's torch-eager lane) where it must."""

import torch

import kibench
from kibench.lanes import torch_eager


@kibench.implementation(version="0.0.1")
def right_three_times(inputs):
    """Right for its first three calls after each prepare, then its
    gradients are 10 % off."""
    honest = torch_eager(inputs)
    calls = [0]

    def run(pass_):
        calls[0] += 1
        out = honest(pass_)
        if calls[0] <= 3:
            return out
        return kibench.Outputs(out.loss, out.grad_student_input * 1.1, out.grad_student_weight * 1.1,
                               out.grad_student_bias)

    run.before_sample = honest.before_sample
    return run


@kibench.implementation(version="0.0.1")
def writes_teacher_weight(inputs):
    """Computes its own answer, then scribbles on the shared teacher weights
    in device memory."""
    honest = torch_eager(inputs)

    def run(pass_):
        out = honest(pass_)
        with torch.no_grad():
            inputs.teacher_weight[0].add_(1.0)
        return out

    run.before_sample = honest.before_sample
    return run


@kibench.implementation(version="0.0.1")
def exits_in_timed_calls(inputs):
    """Right in its check and warm-up, then raises SystemExit."""
    honest = torch_eager(inputs)
    calls = [0]

    def run(pass_):
        calls[0] += 1
        if calls[0] > 2:
            raise SystemExit(0)
        return honest(pass_)

    run.before_sample = honest.before_sample
    return run


@kibench.implementation(version="0.0.1")
def ends_its_process(inputs):
    """Right in its check and warm-up, then ends the process it runs in
    with os._exit(0): no exception, no message, exit code 0."""
    import os

    honest = torch_eager(inputs)
    calls = [0]

    def run(pass_):
        calls[0] += 1
        if calls[0] > 3:
            torch.cuda.synchronize()
            os._exit(0)
        return honest(pass_)

    run.before_sample = honest.before_sample
    return run


@kibench.implementation(version="0.0.1")
def segfaults(inputs):
    """Right in its check and warm-up, then reads address 0."""
    import ctypes

    honest = torch_eager(inputs)
    calls = [0]

    def run(pass_):
        calls[0] += 1
        if calls[0] > 3:
            ctypes.string_at(0)
        return honest(pass_)

    run.before_sample = honest.before_sample
    return run


@kibench.implementation(version="0.0.1")
def cached_in_prepare(inputs):
    """Computes the answer once, when prepared, and returns copies of it on
    every call: right for the inputs it was prepared on, and for no others."""
    honest = torch_eager(inputs)
    honest.before_sample("full")
    kept = honest("full")
    kept = kibench.Outputs(kept.loss.clone(), kept.grad_student_input.clone(), kept.grad_student_weight.clone(),
                           None if kept.grad_student_bias is None else kept.grad_student_bias.clone())

    def run(pass_):
        return kept

    run.before_sample = honest.before_sample
    return run


@kibench.implementation(version="0.0.1")
def cached_after_first_call(inputs):
    """Computes on its first call after each prepare, then returns that."""
    honest = torch_eager(inputs)
    kept = []

    def run(pass_):
        if not kept:
            kept.append(honest(pass_))
        return kept[0]

    run.before_sample = honest.before_sample
    return run
