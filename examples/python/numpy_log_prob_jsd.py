"""An example Python implementation of kibench's `jsd` operation
(docs/loss-math.md): the generalized JSD between the student's and the
teacher's log-probabilities and its gradient in the student's, with numpy
on the CPU in float32. Run it beside kibench's own CPU path:

    python -m kibench run workloads/jsd/small/jsd-small-t32-v1000.json \\
        --impl cpu-reference,py:examples/python/numpy_log_prob_jsd.py:numpy_log_prob_jsd

It declares operations=("jsd",): kibench hands it student_log_probs (X =
log q, Liger's `input`) and teacher_log_probs (Y = log p, Liger's
`target`), float32 [T, V], and target (the labels, None where the workload
has none), and takes back the loss and grad X [T, V]."""

import numpy as np

import kibench


@kibench.implementation(device="cpu", tensors="numpy", version="1.0.0", operations=("jsd",),
                        revision_name="example-numpy-log-prob-jsd")
def numpy_log_prob_jsd(inputs):
    """numpy float32: generalized JSD of two log-probability tensors and its gradient."""
    # Views of kibench's buffers, which may hold another of the workload's
    # input sets at the next call (docs/protocol.md): read at every call.
    x, y = inputs.student_log_probs, inputs.teacher_log_probs
    beta = np.float32(inputs.beta)

    def run(pass_):
        if inputs.target is None:
            valid = np.ones(inputs.tokens, dtype=bool)
        else:
            valid = inputs.target != inputs.ignore_index
        n = np.float32(max(1, int(valid.sum())))
        q, p = np.exp(x), np.exp(y)
        if 0 < beta < 1:
            log_m = np.logaddexp(y + np.log(beta), x + np.log1p(-beta))
            rows = (beta * p * (y - log_m) + (1 - beta) * q * (x - log_m)).sum(axis=1)
            grad = (1 - beta) * q * (x - log_m)
        elif beta == 0:  # KL(p || q)
            rows = (p * (y - x)).sum(axis=1)
            grad = -p
        else:  # KL(q || p)
            rows = (q * (x - y)).sum(axis=1)
            grad = q * (x - y + 1)
        loss = rows[valid].sum() / n
        if pass_ == "forward":
            return loss
        grad = grad / n
        grad[~valid] = 0
        return kibench.Outputs(loss, grad_student_log_probs=grad.astype(np.float32))

    return run
