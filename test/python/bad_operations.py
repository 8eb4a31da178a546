"""A Python implementation that declares an operation kibench does not run:
importing this module fails, and kibench refuses it before any work."""

import kibench


@kibench.implementation(device="cpu", tensors="numpy", version="0.0.1", operations=("jsd", "softmax"))
def unknown_operation(inputs):
    return lambda pass_: 0.0
