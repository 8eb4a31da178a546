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
