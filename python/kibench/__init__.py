"""kibench from Python: benchmark your own implementation of the
distillation loss beside kibench's, under kibench's protocol.

    python -m kibench run WORKLOAD --impl fused,cublas-floor,py:MODULE:CALLABLE

A Python implementation is a callable that prepares (untimed) and returns
the function kibench times; docs/extending.md gives the calling convention:

    import kibench

    @kibench.implementation(version="1.0.0", licence="MIT")
    def my_loss(inputs):                 # prepare: build state, warm up
        def run(pass_):                  # one timed invocation
            loss = ...                   # from inputs.student_input, ...
            if pass_ == "forward":
                return loss
            return kibench.backward(loss, inputs)   # or (loss, grad_x, grad_w[, grad_b])
        return run
"""

from .api import Inputs, Outputs, backward, bf16_to_float32, implementation

__version__ = "0.1.0"
__all__ = ["Inputs", "Outputs", "backward", "bf16_to_float32", "implementation", "__version__"]
