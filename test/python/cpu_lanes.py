"""The Python implementations shipped in kibench.lanes, each declared again
as a CPU implementation (device="cpu", torch tensors over kibench's host
buffers), so that test_lanes_cpu.py can hold their exact code to the
oracle without a GPU. Each delegates to the shipped factory unchanged; its
--impl name is the shipped one with "-cpu" appended."""

import kibench
from kibench import lanes


def _on_the_cpu(name):
    shipped = getattr(lanes, lanes.SHIPPED[name])
    facts = shipped.__kibench__

    def factory(inputs):
        return shipped(inputs)

    factory.__name__ = factory.__qualname__ = lanes.SHIPPED[name] + "_cpu"
    return kibench.implementation(factory, name=name + "-cpu", device="cpu", passes=facts["passes"],
                                  operations=facts["operations"], package="kibench")


torch_eager = _on_the_cpu("torch-eager")
torch_compile = _on_the_cpu("torch-compile")
liger = _on_the_cpu("liger")
torch_eager_jsd = _on_the_cpu("torch-eager-jsd")
liger_jsd = _on_the_cpu("liger-jsd")
torch_eager_jsd_script = _on_the_cpu("torch-eager-jsd-script")
liger_jsd_script = _on_the_cpu("liger-jsd-script")
torch_eager_fused_linear_jsd = _on_the_cpu("torch-eager-fused-linear-jsd")
liger_fused_linear_jsd = _on_the_cpu("liger-fused-linear-jsd")


# Two lanes wired wrongly on purpose: the test data workloads must fail them
# (a check that the workloads can tell such mistakes apart).


@kibench.implementation(device="cpu", passes=("full",), package="kibench")
def weights_swapped(inputs):
    """torch-eager's function with weight_hard and weight_soft exchanged."""
    import torch

    scalars = dict(weight_hard=inputs.weight_soft, weight_soft=inputs.weight_hard, beta=inputs.beta,
                   ignore_index=inputs.ignore_index, temperature=inputs.temperature)
    return lanes.AutogradRun(lambda: lanes.hf_jsd_loss(torch, *lanes._arguments(inputs), **scalars), inputs)


@kibench.implementation(device="cpu", passes=("full",), operations=("jsd",), package="kibench")
def student_teacher_swapped(inputs):
    """torch-eager-jsd's function with the student's and the teacher's log-probabilities exchanged."""
    import torch

    def loss_fn():
        return lanes.liger_test_jsd(torch, inputs.teacher_log_probs, inputs.student_log_probs, inputs.target,
                                    inputs.beta, inputs.ignore_index, torch.float32)

    return lanes.AutogradRun(loss_fn, inputs)
