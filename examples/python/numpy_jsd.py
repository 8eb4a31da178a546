"""An example Python implementation for kibench (docs/extending.md): the
distillation loss of docs/loss-math.md and its student gradients with numpy
on the CPU, in float32 throughout. Run it beside kibench's own CPU path:

    python -m kibench run workloads/small/small-v1000-h64-t32.json \\
        --impl cpu-reference,py:examples/python/numpy_jsd.py:numpy_jsd

For a GPU implementation the same shape holds with torch tensors on
kibench's device buffers (device="cuda", the default): see
kibench/lanes.py in the package."""

import numpy as np

import kibench


def _log_softmax(z):
    shifted = z - z.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


@kibench.implementation(device="cpu", tensors="numpy", version="1.0.0", revision_name="example-numpy-jsd")
def numpy_jsd(inputs):
    """numpy float32: logits, cross-entropy, generalized JSD and gradients."""
    # Prepare (untimed): only what does not depend on the tensors' values.
    # kibench may put another of the workload's input sets into the same
    # buffers between calls (docs/protocol.md), so every call reads them.
    beta, tau = np.float32(inputs.beta), np.float32(inputs.temperature)
    rows = np.arange(inputs.tokens)

    def run(pass_):
        x_s = kibench.bf16_to_float32(inputs.student_input)
        w_s = kibench.bf16_to_float32(inputs.student_weight)
        x_t = kibench.bf16_to_float32(inputs.teacher_input)
        w_t = kibench.bf16_to_float32(inputs.teacher_weight)
        b_s = kibench.bf16_to_float32(inputs.student_bias) if inputs.student_bias is not None else None
        b_t = kibench.bf16_to_float32(inputs.teacher_bias) if inputs.teacher_bias is not None else None
        y = inputs.target
        valid = y != inputs.ignore_index
        n = np.float32(max(1, int(valid.sum())))
        label = np.where(valid, y, 0)
        z_s = x_s @ w_s.T + (b_s if b_s is not None else 0)
        z_t = x_t @ w_t.T + (b_t if b_t is not None else 0)
        log_raw = _log_softmax(z_s)
        cross_entropy = -log_raw[rows, label]
        log_q, log_p = _log_softmax(z_s / tau), _log_softmax(z_t / tau)
        q, p = np.exp(log_q), np.exp(log_p)
        if 0 < beta < 1:
            log_m = np.logaddexp(log_q + np.log1p(-beta), log_p + np.log(beta))
            kl_qm = (q * (log_q - log_m)).sum(axis=1)
            jsd = beta * (p * (log_p - log_m)).sum(axis=1) + (1 - beta) * kl_qm
            d_jsd = (1 - beta) / tau * q * (log_q - log_m - kl_qm[:, None])
        elif beta == 0:
            jsd = (p * (log_p - log_q)).sum(axis=1)
            d_jsd = (q - p) / tau
        else:
            jsd = (q * (log_q - log_p)).sum(axis=1)
            d_jsd = q * (log_q - log_p - jsd[:, None]) / tau
        loss = (inputs.weight_hard * cross_entropy[valid].sum() + inputs.weight_soft * jsd[valid].sum()) / n
        if pass_ == "forward":
            return loss
        one_hot = np.zeros_like(z_s)
        one_hot[rows, label] = 1
        g = (inputs.weight_hard * (np.exp(log_raw) - one_hot) + inputs.weight_soft * d_jsd) / n
        g[~valid] = 0
        grad_bias = g.sum(axis=0) if b_s is not None else None
        return kibench.Outputs(loss, g @ w_s, g.T @ x_s, grad_bias)

    return run
