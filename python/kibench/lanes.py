"""The Python implementations shipped with the package, each an ordinary
kibench implementation (docs/extending.md) on kibench's device buffers and
stream:

    torch-eager    the eager op sequence of Liger-Kernel's distill_jsd_loss
                   torch baseline (HFJSDLoss.get_batch_loss_metrics of
                   Liger's test/chunked_loss/test_jsd_loss.py and
                   test/utils.py, as benchmark_distill_jsd_loss.py runs it),
                   with the workload's beta; autograd backward
    torch-compile  torch.compile of that same function (compiled and warmed
                   up in prepare, untimed)
    liger          LigerFusedLinearJSDFunction.apply, the class Liger's
                   distill_jsd_loss benchmark times (LigerFusedLinearJSDLoss
                   is a module over it), with the benchmark's defaults
                   (compiled=True, chunk_size=1024) and the workload's
                   scalars

and, for the rest of the JSD family (docs/loss-math.md):

    liger-jsd                     LigerJSD (liger_kernel.transformers.jsd),
                                  what Liger's benchmark_jsd.py times, with
                                  the workload's beta and ignore_index; jsd
    torch-eager-jsd               the JSD of Liger's tests, op by op (at
                                  beta 0.5 also its benchmark's `torch`
                                  provider); jsd
    liger-jsd-script,             the two above timed as benchmark_jsd.py
    torch-eager-jsd-script        times them: the input is log_softmax of a
                                  leaf, its graph kept, and the leaf's
                                  gradient accumulates (no grad_to_none), so
                                  a sample adds log_softmax's backward and
                                  grad += dX (docs/side-by-side.md); jsd
    liger-fused-linear-jsd        LigerFusedLinearJSD
                                  (liger_kernel.transformers.fused_linear_jsd)
                                  as benchmark_fused_linear_jsd.py calls it,
                                  with the workload's beta, ignore_index and
                                  temperature; fused_linear_jsd
    torch-eager-fused-linear-jsd  TorchLMHeadJSD of Liger's tests, op by op;
                                  fused_linear_jsd

Each is skipped, saying why, where its library is missing, and on a
workload of an operation it does not compute."""

import importlib.util
import math

from .api import Outputs, backward, implementation

SHIPPED = {"torch-eager": "torch_eager", "torch-compile": "torch_compile", "liger": "liger",
           "torch-eager-jsd": "torch_eager_jsd", "liger-jsd": "liger_jsd",
           "torch-eager-jsd-script": "torch_eager_jsd_script", "liger-jsd-script": "liger_jsd_script",
           "torch-eager-fused-linear-jsd": "torch_eager_fused_linear_jsd",
           "liger-fused-linear-jsd": "liger_fused_linear_jsd"}
REQUIRES = {"torch-eager": ("torch",), "torch-compile": ("torch", "triton"),
            "liger": ("torch", "triton", "liger_kernel"), "torch-eager-jsd": ("torch",),
            "liger-jsd": ("torch", "triton", "liger_kernel"), "torch-eager-jsd-script": ("torch",),
            "liger-jsd-script": ("torch", "triton", "liger_kernel"), "torch-eager-fused-linear-jsd": ("torch",),
            "liger-fused-linear-jsd": ("torch", "triton", "liger_kernel")}
PIP_NAME = {"torch": "torch", "triton": "triton", "liger_kernel": "liger-kernel"}
# What each lane declares as its licence (spec.licensing.declared, SPDX):
# that of the project whose code it times. The torch lanes run PyTorch's
# ops (PyTorch's LICENSE: BSD-3-Clause); the Liger lanes run Liger-Kernel
# (its LICENSE: BSD-2-Clause).
TORCH_LICENCE = "BSD-3-Clause"
LIGER_LICENCE = "BSD-2-Clause"


def missing(lane):
    """Why a shipped lane cannot run here, or None."""
    absent = [m for m in REQUIRES[lane] if importlib.util.find_spec(m) is None]
    if not absent:
        return None
    return "needs " + ", ".join(PIP_NAME[m] for m in absent) + " (pip install " + \
        " ".join(PIP_NAME[m] for m in absent) + ")"


def hf_jsd_loss(torch, student_input, student_weight, teacher_input, teacher_weight, target, student_bias,
                teacher_bias, weight_hard, weight_soft, beta, ignore_index, temperature, in_place=True):
    """HFDistillationLoss.get_batch_loss_metrics with HFJSDLoss.distillation_loss
    (Liger-Kernel test/utils.py, test/chunked_loss/test_jsd_loss.py), op by op,
    except where every token is ignored (a zero with a graph, not a bare 0).
    in_place=False divides the logits by tau out of place: the same values,
    and what torch.compile's autograd accepts (the in-place division bumps
    the version of a tensor its backward graph saved)."""
    F = torch.nn.functional
    student_outputs = student_input @ student_weight.t()
    if student_bias is not None:
        student_outputs = student_outputs + student_bias
    with torch.no_grad():
        teacher_outputs = teacher_input @ teacher_weight.t()
        if teacher_bias is not None:
            teacher_outputs = teacher_outputs + teacher_bias
    student_logits = student_outputs.view(student_input.shape[0], -1).float()
    teacher_logits = teacher_outputs.view(teacher_input.shape[0], -1).float()
    if torch.all(target == ignore_index):
        # Every token ignored: the loss and every gradient are 0 (docs/loss-math.md, N = max(1, 0)).
        # The baseline returns a bare torch.tensor(0.0) here, which has no graph, so backward() on it
        # raises; a zero built from the student logits has one, and its gradients are zeros.
        return student_logits.sum() * 0.0
    hard_loss = torch.nn.CrossEntropyLoss(ignore_index=ignore_index)(
        student_logits.view(-1, student_logits.shape[-1]), target.view(-1))
    if in_place:
        student_logits /= temperature
        teacher_logits /= temperature
    else:
        student_logits = student_logits / temperature
        teacher_logits = teacher_logits / temperature
    student_log_probs = F.log_softmax(student_logits, dim=-1)
    teacher_log_probs = F.log_softmax(teacher_logits, dim=-1)
    if beta == 0:
        jsd_loss = F.kl_div(student_log_probs, teacher_log_probs, reduction="none", log_target=True)
    elif beta == 1:
        jsd_loss = F.kl_div(teacher_log_probs, student_log_probs, reduction="none", log_target=True)
    else:
        log_mean_probs = torch.logsumexp(
            torch.stack([student_log_probs + math.log(1 - beta), teacher_log_probs + math.log(beta)], dim=0), dim=0)
        student_kl = F.kl_div(log_mean_probs, student_log_probs, reduction="none", log_target=True)
        teacher_kl = F.kl_div(log_mean_probs, teacher_log_probs, reduction="none", log_target=True)
        jsd_loss = beta * teacher_kl + (1 - beta) * student_kl
    jsd_loss = jsd_loss.sum(dim=-1)
    mask = target != ignore_index
    jsd_loss = jsd_loss * mask.float()
    soft_loss = jsd_loss.sum() / mask.sum().clamp_min(1)
    return weight_hard * hard_loss + weight_soft * soft_loss


class AutogradRun:
    """Times `loss_fn()` and, on a full pass, its backward. For the backward
    pass the forward runs untimed in before_sample and run() times
    loss.backward() alone. `extra_leaves` (beyond kibench's student leaves)
    get their .grad set to None before every sample too."""

    def __init__(self, loss_fn, inputs, extra_leaves=()):
        self.loss_fn, self.inputs, self.pending = loss_fn, inputs, None
        self.extra_leaves = list(extra_leaves)

    def before_sample(self, pass_):
        for leaf in self.extra_leaves:
            leaf.grad = None
        self.pending = self.loss_fn() if pass_ == "backward" else None

    def __call__(self, pass_):
        if pass_ == "forward":
            return self.loss_fn()
        loss = self.pending if pass_ == "backward" else self.loss_fn()
        self.pending = None
        return backward(loss, self.inputs)


def _arguments(inputs):
    return (inputs.student_input, inputs.student_weight, inputs.teacher_input, inputs.teacher_weight, inputs.target,
            inputs.student_bias, inputs.teacher_bias)


def _scalars(inputs):
    return dict(weight_hard=inputs.weight_hard, weight_soft=inputs.weight_soft, beta=inputs.beta,
                ignore_index=inputs.ignore_index, temperature=inputs.temperature)


@implementation(name="torch-eager", revision_name="kibench-py-torch-eager", passes=("full", "forward", "backward"),
                title="PyTorch eager: Liger's distill_jsd_loss torch baseline",
                description="HFJSDLoss.get_batch_loss_metrics of Liger-Kernel's tests, op by op: bf16 logit GEMMs "
                            "(teacher under no_grad), fp32 upcast of both [T, V] logit matrices, CrossEntropyLoss, "
                            "division by tau, log_softmax, the beta mixture by logsumexp of the stacked "
                            "log-probabilities, kl_div twice, masked mean; autograd backward",
                package="kibench", licence=TORCH_LICENCE)
def torch_eager(inputs):
    import torch

    arguments, scalars = _arguments(inputs), _scalars(inputs)
    return AutogradRun(lambda: hf_jsd_loss(torch, *arguments, **scalars), inputs)


@implementation(name="torch-compile", revision_name="kibench-py-torch-compile",
                passes=("full", "forward", "backward"),
                title="torch.compile of the PyTorch eager baseline",
                description="torch.compile (default mode, dynamic=False) of the torch-eager function (the division "
                            "by tau out of place, which compile's autograd needs); compiled and warmed up for the "
                            "measured pass in prepare, untimed",
                package="kibench", licence=TORCH_LICENCE)
def torch_compile(inputs):
    import torch

    arguments, scalars = _arguments(inputs), _scalars(inputs)
    compiled = torch.compile(lambda: hf_jsd_loss(torch, *arguments, **scalars, in_place=False), dynamic=False)
    run = AutogradRun(compiled, inputs)
    _warm_up(torch, run, inputs)
    return run


@implementation(name="liger", revision_name="kibench-py-liger-fused-linear-jsd", passes=("full", "forward", "backward"),
                title="Liger-Kernel LigerFusedLinearJSDFunction (compiled, chunk 1024)",
                description="LigerFusedLinearJSDFunction.apply as Liger-Kernel's distill_jsd_loss benchmark calls "
                            "it (what LigerFusedLinearJSDLoss wraps): per chunk of 1024 tokens the logits, the "
                            "loss and its gradients via torch.compile, grad W accumulated across chunks; the "
                            "workload's beta, ignore_index and temperature; warmed up in prepare",
                package="kibench", licence=LIGER_LICENCE)
def liger(inputs):
    import torch
    from liger_kernel.chunked_loss.jsd_loss import LigerFusedLinearJSDFunction

    arguments = _arguments(inputs)

    def loss_fn():
        return LigerFusedLinearJSDFunction.apply(*arguments, inputs.weight_hard, inputs.weight_soft, inputs.beta,
                                                 inputs.ignore_index, inputs.temperature, True, 1024)

    run = AutogradRun(loss_fn, inputs)
    _warm_up(torch, run, inputs)
    return run


def _warm_up(torch, run, inputs, times=2):
    """Compilation happens at the first calls: make them here, untimed."""
    grad = torch.no_grad() if inputs.pass_ == "forward" else torch.enable_grad()
    with grad:
        for _ in range(times):
            for leaf in inputs.student_leaves():
                leaf.grad = None
            run.before_sample(inputs.pass_)
            run(inputs.pass_)
    for leaf in inputs.student_leaves():
        leaf.grad = None
    if inputs.stream is not None:
        inputs.stream.synchronize()


# ----------------------------------------------------------- jsd, fused_linear_jsd


def liger_test_jsd(torch, log_q, log_p, label, beta, ignore_index, dtype):
    """The JSD module of Liger-Kernel's test/transformers/test_jsd.py, op by
    op: fp32, m = lerp(q, p, beta), kl_div(log m, log p) and kl_div(log m,
    log q) summed over the vocabulary (beta 0 and 1: kl_div(log q, log p)
    and kl_div(log p, log q)),
    masked where labels are given and divided by their count (read on the
    host, as Liger's does), else by T; cast to `dtype`. Where every token is
    ignored the loss is a zero that keeps its graph (Liger's is a bare 0.0,
    which has no backward). benchmark_jsd.py's `torch` provider (TorchJSD)
    is the same op sequence at the beta it runs, 0.5, but has no beta = 0, 1
    cases: there its lerp gives m = q or m = p and the loss 0, not
    kibench's forward and reverse KL."""
    F = torch.nn.functional

    def kl(input, target):  # KLDivLoss(reduction="none", log_target=True)
        return F.kl_div(input, target, reduction="none", log_target=True)

    log_p, log_q = log_p.to(torch.float), log_q.to(torch.float)
    log_p, log_q = log_p.view(-1, log_p.size(-1)), log_q.view(-1, log_q.size(-1))
    if beta == 0:
        loss = kl(log_q, log_p).sum(dim=-1)
    elif beta == 1:
        loss = kl(log_p, log_q).sum(dim=-1)
    else:
        m = torch.lerp(torch.exp(log_q), torch.exp(log_p), beta)
        loss = beta * kl(torch.log(m), log_p).sum(dim=-1) + (1 - beta) * kl(torch.log(m), log_q).sum(dim=-1)
    if label is not None:
        loss = torch.where(label != ignore_index, loss, 0.0)
        n_non_ignore = (label != ignore_index).sum().item()
        loss = (loss / n_non_ignore).sum() if n_non_ignore else loss.sum() * 0.0
    else:
        loss = (loss / log_q.shape[0]).sum()
    return loss.to(dtype)


def liger_test_lm_head_jsd(torch, student_input, student_weight, teacher_input, teacher_weight, label, beta,
                           ignore_index, temperature):
    """TorchLMHeadJSD of Liger-Kernel's test/transformers/test_fused_linear_jsd.py,
    op by op: the two bias-free Linear layers (bf16 GEMMs), the logits cast
    to fp32, divided by tau, log_softmax, then liger_test_jsd with the loss
    cast to the inputs' dtype. The TorchLMHeadJSD of
    benchmark_fused_linear_jsd.py leaves out the fp32 cast: its log_softmax
    runs on bf16 logits, 1-2 % off the fp64 oracle on the small
    fused_linear_jsd workloads (beyond their 1 % policy), and its TorchJSD
    has no beta = 0, 1 cases (see liger_test_jsd)."""
    F = torch.nn.functional
    student_logits = F.linear(student_input, student_weight).to(torch.float32)
    teacher_logits = F.linear(teacher_input, teacher_weight).to(torch.float32)
    student_prob = torch.log_softmax(student_logits / temperature, dim=-1)
    teacher_prob = torch.log_softmax(teacher_logits / temperature, dim=-1)
    return liger_test_jsd(torch, student_prob, teacher_prob, label, beta, ignore_index, student_input.dtype)


@implementation(name="torch-eager-jsd", revision_name="kibench-py-torch-eager-jsd",
                passes=("full", "forward", "backward"), operations=("jsd",),
                title="PyTorch eager: Liger's jsd torch baseline",
                description="The JSD module of Liger-Kernel's tests (at beta 0.5 also benchmark_jsd.py's torch "
                            "provider), op by op on the fp32 [T, V] log-probabilities: lerp of the probabilities, "
                            "log, kl_div twice, sums over the vocabulary, the label mask with its count read on the "
                            "host; autograd backward",
                package="kibench", licence=TORCH_LICENCE)
def torch_eager_jsd(inputs):
    loss_of = _torch_jsd_loss(inputs)
    return AutogradRun(lambda: loss_of(inputs.student_log_probs), inputs)


def _torch_jsd_loss(inputs):
    """liger_test_jsd with the workload's teacher, labels and scalars, as a
    function of the student log-probabilities."""
    import torch

    def loss_of(student_log_probs):
        return liger_test_jsd(torch, student_log_probs, inputs.teacher_log_probs, inputs.target, inputs.beta,
                              inputs.ignore_index, student_log_probs.dtype)

    return loss_of


@implementation(name="liger-jsd", revision_name="kibench-py-liger-jsd", passes=("full", "forward", "backward"),
                operations=("jsd",),
                title="Liger-Kernel LigerJSD",
                description="LigerJSD(beta, ignore_index) (liger_kernel.transformers.jsd, over LigerJSDFunction) as "
                            "Liger-Kernel's benchmark_jsd.py calls it: input = the student log-probabilities, target "
                            "= the teacher's, shift_labels = the workload's labels where it has them; the gradient "
                            "is computed in the forward's Triton kernel; warmed up in prepare",
                package="kibench", licence=LIGER_LICENCE)
def liger_jsd(inputs):
    import torch

    loss_of = _liger_jsd_loss(inputs)
    run = AutogradRun(lambda: loss_of(inputs.student_log_probs), inputs)
    _warm_up(torch, run, inputs)
    return run


def _liger_jsd_loss(inputs):
    """LigerJSD with the workload's beta and ignore_index, as a function of
    the student log-probabilities (Liger's `input`)."""
    from liger_kernel.transformers.jsd import LigerJSD

    jsd = LigerJSD(beta=inputs.beta, ignore_index=inputs.ignore_index)
    return lambda student_log_probs: jsd(student_log_probs, inputs.teacher_log_probs, inputs.target)


class ScriptRun:
    """A jsd loss timed the way Liger-Kernel's benchmark_jsd.py times it:
    its input is `log_softmax` of a leaf of its own (made once, in prepare,
    with the graph kept), and each full pass is `loss.backward(
    retain_graph=True)` with no `grad_to_none`, so every sample also runs
    log_softmax's backward and accumulates the leaf's gradient. The leaf
    holds a copy of the student log-probabilities, whose log_softmax equals
    them to fp32 rounding (they are normalised: their logsumexp is 0).

    What is checked is the gradient of the loss's input, dX: a hook on the
    input keeps a reference to the gradient autograd hands it (no copy),
    the tensor log_softmax's backward then reads.

    Before each sample (untimed, as the script makes its input before
    timing) the leaf takes the current student log-probabilities and
    log_softmax's graph is built again on it: the harness may have
    generated another input set in place since the last sample, and a copy
    made once would be timed on stale inputs. The leaf, and so its
    accumulating gradient, stays the same tensor."""

    def __init__(self, loss_of, inputs):
        import torch

        self.torch, self.loss_of, self.inputs, self.pending, self.grad = torch, loss_of, inputs, None, None
        with torch.no_grad():
            leaf = inputs.student_log_probs.detach().clone()
        self.leaf = leaf.requires_grad_(True)
        self._build_input()

    def _build_input(self):
        self.input = self.leaf.log_softmax(dim=-1)
        self.input.register_hook(self._keep)

    def _keep(self, grad):
        self.grad = grad

    def before_sample(self, pass_):
        with self.torch.no_grad():
            self.leaf.copy_(self.inputs.student_log_probs)
        self._build_input()
        self.pending = self.loss_of(self.input) if pass_ == "backward" else None

    def __call__(self, pass_):
        if pass_ == "forward":
            return self.loss_of(self.input)
        loss = self.pending if pass_ == "backward" else self.loss_of(self.input)
        self.pending, self.grad = None, None
        loss.backward(retain_graph=True)
        return Outputs(loss, grad_student_log_probs=self.grad)


@implementation(name="torch-eager-jsd-script", revision_name="kibench-py-torch-eager-jsd-script",
                passes=("full", "forward", "backward"), operations=("jsd",),
                title="PyTorch eager jsd, timed as Liger's benchmark_jsd.py times it",
                description="torch-eager-jsd's op sequence on log_softmax of a leaf holding the student "
                            "log-probabilities (graph kept), backward(retain_graph=True) with the leaf's gradient "
                            "accumulated: a sample includes log_softmax's backward and grad += dX, as in Liger's "
                            "benchmark script; checked on the loss and dX",
                package="kibench", licence=TORCH_LICENCE)
def torch_eager_jsd_script(inputs):
    return ScriptRun(_torch_jsd_loss(inputs), inputs)


@implementation(name="liger-jsd-script", revision_name="kibench-py-liger-jsd-script",
                passes=("full", "forward", "backward"), operations=("jsd",),
                title="Liger-Kernel LigerJSD, timed as Liger's benchmark_jsd.py times it",
                description="LigerJSD(beta, ignore_index) as in liger-jsd, on log_softmax of a leaf holding the "
                            "student log-probabilities (graph kept), backward(retain_graph=True) with the leaf's "
                            "gradient accumulated: a sample includes log_softmax's backward and grad += dX, as in "
                            "Liger's benchmark script; checked on the loss and dX; warmed up in prepare",
                package="kibench", licence=LIGER_LICENCE)
def liger_jsd_script(inputs):
    import torch

    run = ScriptRun(_liger_jsd_loss(inputs), inputs)
    _warm_up(torch, run, inputs)
    return run


@implementation(name="torch-eager-fused-linear-jsd", revision_name="kibench-py-torch-eager-fused-linear-jsd",
                passes=("full", "forward", "backward"), operations=("fused_linear_jsd",),
                title="PyTorch eager: Liger's fused_linear_jsd torch baseline",
                description="TorchLMHeadJSD of Liger-Kernel's tests (benchmark_fused_linear_jsd.py's torch "
                            "provider without its bf16 log_softmax), op by op: bias-free linear layers in bf16, "
                            "fp32 logits divided by tau, log_softmax, the JSD module, the loss cast to bf16; autograd "
                            "backward, which (as the benchmark's teacher Linear is a parameter) also computes grad W_t",
                package="kibench", licence=TORCH_LICENCE)
def torch_eager_fused_linear_jsd(inputs):
    import torch

    # The benchmark's teacher weight is an nn.Linear parameter: its gradient is part of the work timed.
    teacher_weight = inputs.teacher_weight.detach().requires_grad_(True)

    def loss_fn():
        return liger_test_lm_head_jsd(torch, inputs.student_input, inputs.student_weight, inputs.teacher_input,
                                      teacher_weight, inputs.target, inputs.beta, inputs.ignore_index,
                                      inputs.temperature)

    return AutogradRun(loss_fn, inputs, extra_leaves=[teacher_weight])


@implementation(name="liger-fused-linear-jsd", revision_name="kibench-py-liger-transformers-fused-linear-jsd",
                passes=("full", "forward", "backward"), operations=("fused_linear_jsd",),
                title="Liger-Kernel LigerFusedLinearJSD",
                description="LigerFusedLinearJSD(jsd_beta, ignore_index, temperature) "
                            "(liger_kernel.transformers.fused_linear_jsd, over LigerFusedLinearJSDFunction) as "
                            "Liger-Kernel's benchmark_fused_linear_jsd.py calls it, with the workload's labels "
                            "where it has them: per chunk of tokens the logits, the Triton JSD kernel and the "
                            "gradients, computed in the forward; warmed up in prepare",
                package="kibench", licence=LIGER_LICENCE)
def liger_fused_linear_jsd(inputs):
    import torch
    from liger_kernel.transformers.fused_linear_jsd import LigerFusedLinearJSD

    fused = LigerFusedLinearJSD(jsd_beta=inputs.beta, ignore_index=inputs.ignore_index,
                                temperature=inputs.temperature)

    def loss_fn():
        return fused(inputs.student_input, inputs.student_weight, inputs.teacher_input, inputs.teacher_weight,
                     inputs.target)

    run = AutogradRun(loss_fn, inputs)
    _warm_up(torch, run, inputs)
    return run
