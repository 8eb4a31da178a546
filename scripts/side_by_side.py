#!/usr/bin/env python3
"""Times kibench's `fused`, PyTorch eager and Liger-Kernel side by side.

One process, one set of inputs: the workload's inputs are generated on the
GPU by kibench (libkibench_capi.so, apps/capi/kibench.h) and handed to
PyTorch without a copy. Every implementation is first checked against
kibench's fp64 oracle with kibench's own comparator and the workload's
correctness policy, then timed with kibench's measurement method: kibench's
L2 flush before every sample, kibench's CUDA-event timer (with the NVML SM
clock), 3 untimed warm-ups, samples interleaved round by round, and the
stopping rule of lib/harness/stopping_rule.cpp, ported below. The result is
a kibench.dev/external-samples/v1 file for `kibench import external`
(docs/import.md); `kibench compare` then ranks the three with intervals.

    python3 scripts/side_by_side.py WORKLOAD.json --like RUN_DIR \\
        --capi build/libkibench_capi.so --out side-by-side.json

RUN_DIR is a `kibench run` of the same workload on the same machine (its
workload and environment digests go into the result). Needs PyTorch, and
liger-kernel for the `liger` lane.
"""

import argparse
import ctypes
import datetime
import hashlib
import json
import math
import os
import sys
import time

HARNESS = {"name": "kibench-side-by-side", "version": "0.1.0"}
FORMAT = "kibench.dev/external-samples/v1"

# kibench's ProtocolSettings defaults (lib/harness/protocol_settings.hpp).
DEFAULT_SETTINGS = {
    "pass": "full",
    "cold": True,
    "warmupRuns": 3,
    "minSamples": 10,
    "maxSamples": 1000,
    "minTimeS": 0.5,
    "maxNoise": 0.005,
    "timeoutS": 60.0,
    "interleave": True,
    "throttleFraction": 0.95,
    "minimumEffect": 0.01,
    "timer": "cuda_events",
}

PASS_CODE = {"forward": 0, "backward": 1, "full": 2}
DTYPE_BF16, DTYPE_FP32, DTYPE_FP64, DTYPE_INT64 = 0, 1, 2, 3


# ---------------------------------------------------------------- statistics
# The same order statistics as lib/stats/summary.cpp.
def quantile(sorted_values, q):
    position = q * (len(sorted_values) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    fraction = position - lower
    return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * fraction


def median(values):
    return quantile(sorted(values), 0.5)


def relative_noise(values):
    """1.4826 * MAD / median, as stats::summarize computes it."""
    m = median(values)
    mad = median([abs(v - m) for v in values])
    return 1.4826 * mad / m if m > 0 else 0.0


class StoppingRule:
    """lib/harness/stopping_rule.cpp: the clock starts before the warm-ups."""

    def __init__(self, settings):
        self.settings = settings
        self.started = time.monotonic()
        self.samples = []

    def add(self, ns):
        self.samples.append(ns)

    def relative_error(self):
        if len(self.samples) < 2:
            return math.inf
        # The median's standard error ~ 1.2533 sigma / sqrt(n), sigma = 1.4826 MAD.
        return 1.2533 * relative_noise(self.samples) / math.sqrt(len(self.samples))

    def reason(self):
        s = self.settings
        if len(self.samples) >= s["maxSamples"]:
            return "max_samples"
        if time.monotonic() - self.started >= s["timeoutS"] and self.samples:
            return "timeout"
        if len(self.samples) < s["minSamples"] or sum(self.samples) < s["minTimeS"] * 1e9:
            return ""
        return "noise_target" if self.relative_error() <= s["maxNoise"] else ""


# ------------------------------------------------------------------ C API
class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("on_device", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("shape", ctypes.c_int64 * 2)]


class Outputs(ctypes.Structure):
    _fields_ = [("loss", ctypes.c_double), ("grad_student_input", Tensor),
                ("grad_student_weight", Tensor), ("grad_student_bias", Tensor)]


class WorkloadInfo(ctypes.Structure):
    _fields_ = [("tokens", ctypes.c_int64), ("vocab", ctypes.c_int64), ("hidden", ctypes.c_int64),
                ("student_hidden", ctypes.c_int64), ("has_student_bias", ctypes.c_int32),
                ("has_teacher_bias", ctypes.c_int32), ("beta", ctypes.c_double),
                ("temperature", ctypes.c_double), ("weight_hard", ctypes.c_double),
                ("weight_soft", ctypes.c_double), ("ignore_index", ctypes.c_int64),
                ("max_relative_error", ctypes.c_double), ("max_absolute_error", ctypes.c_double),
                ("gemm_flops_forward", ctypes.c_double), ("gemm_flops_full", ctypes.c_double)]


class ErrorStats(ctypes.Structure):
    _fields_ = [("output", ctypes.c_char * 32), ("count", ctypes.c_int64),
                ("max_abs_error", ctypes.c_double), ("rel_l2_error", ctypes.c_double),
                ("ref_l2_norm", ctypes.c_double), ("nonfinite", ctypes.c_int64), ("passed", ctypes.c_int32)]


class Memory(ctypes.Structure):
    _fields_ = [("input_bytes", ctypes.c_uint64), ("output_bytes", ctypes.c_uint64),
                ("workspace_bytes", ctypes.c_uint64), ("peak_bytes", ctypes.c_uint64)]


class Kibench:
    """Thin, checked bindings of apps/capi/kibench.h."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        p, i, d = ctypes.c_void_p, ctypes.c_int, ctypes.c_double
        signatures = {
            "kibench_capi_version": (i, []),
            "kibench_last_error": (ctypes.c_char_p, []),
            "kibench_workload_open": (p, [ctypes.c_char_p]),
            "kibench_workload_close": (None, [p]),
            "kibench_workload_get_info": (i, [p, ctypes.POINTER(WorkloadInfo)]),
            "kibench_workload_input": (i, [p, ctypes.c_char_p, ctypes.POINTER(Tensor)]),
            "kibench_workload_flush_l2": (i, [p, p]),
            "kibench_impl_open": (p, [p, ctypes.c_char_p]),
            "kibench_impl_close": (None, [p]),
            "kibench_impl_poison_outputs": (i, [p]),
            "kibench_impl_flush_caches": (i, [p]),
            "kibench_impl_before_sample": (i, [p, i]),
            "kibench_impl_run": (i, [p, i]),
            "kibench_impl_outputs": (i, [p, ctypes.POINTER(Outputs)]),
            "kibench_impl_memory": (i, [p, ctypes.POINTER(Memory)]),
            "kibench_timer_for_impl": (p, [p]),
            "kibench_timer_for_stream": (p, [p]),
            "kibench_timer_close": (None, [p]),
            "kibench_timer_start": (i, [p]),
            "kibench_timer_stop": (i, [p]),
            "kibench_timer_elapsed": (i, [p, ctypes.POINTER(d), ctypes.POINTER(d)]),
            "kibench_compare_outputs": (i, [p, ctypes.POINTER(Outputs), i, ctypes.POINTER(ErrorStats), i,
                                            ctypes.POINTER(i)]),
        }
        for name, (restype, argtypes) in signatures.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        if lib.kibench_capi_version() != 1:
            raise RuntimeError(f"{path}: C API version {lib.kibench_capi_version()}, this script speaks 1")
        self.lib = lib

    def check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what}: {self.lib.kibench_last_error().decode()}")

    def handle(self, value, what):
        if not value:
            raise RuntimeError(f"{what}: {self.lib.kibench_last_error().decode()}")
        return value

    def __getattr__(self, name):
        return getattr(self.lib, "kibench_" + name)


# ----------------------------------------------------------------- torch glue
def torch_view(torch, tensor):
    """A kibench device tensor as a torch tensor over the same memory (bf16 travels
    as int16, which every PyTorch reads from __cuda_array_interface__)."""
    typestr = {DTYPE_BF16: "<i2", DTYPE_FP32: "<f4", DTYPE_FP64: "<f8", DTYPE_INT64: "<i8"}[tensor.dtype]
    shape = tuple(tensor.shape[k] for k in range(tensor.rank))

    class Interface:
        __cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (tensor.data, False),
                                    "version": 3, "strides": None, "stream": None}

    t = torch.as_tensor(Interface(), device="cuda")
    return t.view(torch.bfloat16) if tensor.dtype == DTYPE_BF16 else t


def kibench_tensor(torch, t):
    """A contiguous torch CUDA tensor as a kibench_tensor (the caller keeps t alive)."""
    if t is None:
        return Tensor()
    code = {torch.bfloat16: DTYPE_BF16, torch.float32: DTYPE_FP32, torch.float64: DTYPE_FP64}[t.dtype]
    shape = (ctypes.c_int64 * 2)(*(list(t.shape) + [0, 0])[:2])
    return Tensor(t.data_ptr(), code, 1, t.dim(), shape)


# --------------------------------------------------------------- the lanes
class KibenchLane:
    """A kibench implementation through the C API, timed by its own timer."""

    kibench_implementation = True

    def __init__(self, kb, workload, name, pass_code):
        self.kb, self.name, self.pass_code = kb, name, pass_code
        self.impl = kb.handle(kb.impl_open(workload, name.encode()), f"open {name}")
        self.timer = kb.handle(kb.timer_for_impl(self.impl), f"timer for {name}")

    def flush(self):
        self.kb.check(self.kb.impl_flush_caches(self.impl), f"{self.name}: flush")

    def before_sample(self):
        self.kb.check(self.kb.impl_before_sample(self.impl, self.pass_code), f"{self.name}: before_sample")

    def run(self):
        self.kb.check(self.kb.impl_run(self.impl, self.pass_code), f"{self.name}: run")

    def checked_outputs(self):
        """Poisoned, run once, returned as kibench_outputs."""
        self.kb.check(self.kb.impl_poison_outputs(self.impl), f"{self.name}: poison")
        self.before_sample()
        self.run()
        out = Outputs()
        self.kb.check(self.kb.impl_outputs(self.impl, ctypes.byref(out)), f"{self.name}: outputs")
        return out

    def memory(self):
        m = Memory()
        self.kb.check(self.kb.impl_memory(self.impl, ctypes.byref(m)), f"{self.name}: memory")
        return {"peakBytes": m.peak_bytes, "inputBytes": m.input_bytes, "outputBytes": m.output_bytes,
                "workspaceBytes": m.workspace_bytes}

    def close(self):
        self.kb.timer_close(self.timer)
        self.kb.impl_close(self.impl)


class TorchLane:
    """A PyTorch callable on the workload's inputs, timed by kibench's timer on
    torch's current stream; gradients are reset (untimed) before each sample."""

    kibench_implementation = False

    def __init__(self, kb, workload, torch, name, meta, loss_fn, inputs, full):
        self.kb, self.workload, self.torch, self.name, self.meta = kb, workload, torch, name, meta
        self.loss_fn, self.inputs, self.full = loss_fn, inputs, full
        self.stream = torch.cuda.current_stream().cuda_stream
        self.timer = kb.handle(kb.timer_for_stream(ctypes.c_void_p(self.stream)), f"timer for {name}")
        self.loss = None
        self._memory = None
        self._keep = None  # the gradients the last check's kibench_tensor views point into

    def flush(self):
        self.kb.check(self.kb.workload_flush_l2(self.workload, ctypes.c_void_p(self.stream)), f"{self.name}: flush")

    def before_sample(self):
        for t in (self.inputs["x_s"], self.inputs["w_s"], self.inputs.get("b_s")):
            if t is not None:
                t.grad = None

    def run(self):
        if self.full:
            self.loss = self.loss_fn()
            self.loss.backward()
        else:
            with self.torch.no_grad():
                self.loss = self.loss_fn()

    def checked_outputs(self):
        torch = self.torch
        self.before_sample()
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        self.run()
        torch.cuda.synchronize()
        over_inputs = torch.cuda.max_memory_allocated() - base
        grads = {}
        if self.full:
            grads = {k: self.inputs[k].grad.contiguous() for k in ("x_s", "w_s")}
            if self.inputs.get("b_s") is not None:
                grads["b_s"] = self.inputs["b_s"].grad.contiguous()
        out_bytes = sum(g.numel() * g.element_size() for g in grads.values()) + 4
        input_bytes = sum(t.numel() * t.element_size() for k, t in self.inputs.items() if t is not None)
        self._memory = {"peakBytes": input_bytes + over_inputs, "inputBytes": input_bytes,
                        "outputBytes": out_bytes, "workspaceBytes": max(0, over_inputs - out_bytes)}
        self._keep = grads
        out = Outputs()
        out.loss = float(self.loss.double().item())
        out.grad_student_input = kibench_tensor(torch, grads.get("x_s"))
        out.grad_student_weight = kibench_tensor(torch, grads.get("w_s"))
        out.grad_student_bias = kibench_tensor(torch, grads.get("b_s"))
        return out

    def memory(self):
        return self._memory

    def close(self):
        self.kb.timer_close(self.timer)
        self._keep = None


def torch_eager_loss(torch, inputs, info):
    """PyTorch eager in the op sequence of the seed harness's module
    (docs/loss-math.md, "Reference semantics"): bf16 logit GEMMs, fp32 upcast, CrossEntropyLoss,
    / tau, log_softmax, the beta-mixture by logsumexp of the stacked
    log-probabilities, kl_div(log_target=True) twice, masked mean."""
    F = torch.nn.functional
    beta, tau = info.beta, info.temperature
    x_s, w_s, x_t, w_t, y = (inputs[k] for k in ("x_s", "w_s", "x_t", "w_t", "y"))
    b_s, b_t = inputs.get("b_s"), inputs.get("b_t")
    ce = torch.nn.CrossEntropyLoss(ignore_index=info.ignore_index)

    def loss():
        student = x_s @ w_s.t()
        if b_s is not None:
            student = student + b_s
        with torch.no_grad():
            teacher = x_t @ w_t.t()
            if b_t is not None:
                teacher = teacher + b_t
        student, teacher = student.float(), teacher.float()
        hard = ce(student, y)
        log_q = F.log_softmax(student / tau, dim=-1)
        log_p = F.log_softmax(teacher / tau, dim=-1)
        if beta == 0:
            jsd = F.kl_div(log_q, log_p, reduction="none", log_target=True)
        elif beta == 1:
            jsd = F.kl_div(log_p, log_q, reduction="none", log_target=True)
        else:
            log_m = torch.logsumexp(torch.stack([log_q + math.log(1 - beta), log_p + math.log(beta)], dim=0), dim=0)
            jsd = beta * F.kl_div(log_m, log_p, reduction="none", log_target=True) + (1 - beta) * F.kl_div(
                log_m, log_q, reduction="none", log_target=True)
        mask = y != info.ignore_index
        per_token = jsd.sum(dim=-1).masked_fill(~mask, 0.0)
        soft = per_token.sum() / mask.sum().clamp(min=1)
        return info.weight_hard * hard + info.weight_soft * soft

    return loss


def liger_loss(torch, inputs, info, chunk_size):
    from liger_kernel.chunked_loss import LigerFusedLinearJSDLoss

    module = LigerFusedLinearJSDLoss(weight_hard_loss=info.weight_hard, weight_soft_loss=info.weight_soft,
                                     beta=info.beta, ignore_index=info.ignore_index,
                                     temperature=info.temperature, compiled=True, chunk_size=chunk_size)
    args = [inputs[k] for k in ("x_s", "w_s", "x_t", "w_t", "y")] + [inputs.get("b_s"), inputs.get("b_t")]
    return lambda: module(*args)


# ---------------------------------------------------------------- protocol
def measure(lanes, settings, log):
    """lib/harness/harness.cpp's measure(): warm-ups lane by lane, then one
    sample per unfinished lane per round (or each lane to the end)."""
    rules = {lane.name: StoppingRule(settings) for lane in lanes}
    samples = {lane.name: [] for lane in lanes}
    kb = lanes[0].kb

    def take(lane):
        if settings["cold"]:
            lane.flush()
        lane.before_sample()
        kb.check(kb.timer_start(lane.timer), f"{lane.name}: timer")
        lane.run()
        kb.check(kb.timer_stop(lane.timer), f"{lane.name}: timer")
        ns, mhz = ctypes.c_double(), ctypes.c_double()
        kb.check(kb.timer_elapsed(lane.timer, ctypes.byref(ns), ctypes.byref(mhz)), f"{lane.name}: timer")
        return ns.value, (None if math.isnan(mhz.value) else mhz.value)

    for lane in lanes:
        for _ in range(settings["warmupRuns"]):
            take(lane)
        log(f"{lane.name}: warmed up")

    def sample(lane, round_index):
        ns, mhz = take(lane)
        rules[lane.name].add(ns)
        samples[lane.name].append({"round": round_index, "ns": ns, "smClockMHz": mhz})

    if settings["interleave"]:
        round_index = 0
        while True:
            active = [lane for lane in lanes if not rules[lane.name].reason()]
            if not active:
                break
            for lane in active:
                sample(lane, round_index)
            round_index += 1
    else:
        for lane in lanes:
            round_index = 0
            while not rules[lane.name].reason():
                sample(lane, round_index)
                round_index += 1
    return {lane.name: (samples[lane.name], rules[lane.name].reason()) for lane in lanes}


# ------------------------------------------------------------------- main
def run_digests(run_dir):
    for name in sorted(os.listdir(run_dir)):
        if name.startswith("run.") and name.endswith(".json"):
            with open(os.path.join(run_dir, name)) as f:
                spec = json.load(f)["spec"]
            return spec["workloadDigest"], spec["environmentDigest"]
    raise SystemExit(f"{run_dir}: no run.<impl>.json: not a `kibench run` directory")


def finite_or_none(value):
    """Strict JSON has no NaN or Infinity: a non-finite number is written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_or_none(v) for v in value]
    return value


def write_atomically(path, text):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", help="the workload spec (workloads/*.json)")
    parser.add_argument("--like", required=True, help="a `kibench run` directory of this workload and machine")
    parser.add_argument("--capi", default="build/libkibench_capi.so", help="path of libkibench_capi.so")
    parser.add_argument("--out", default="side-by-side.json")
    parser.add_argument("--impl", default="fused,torch-eager,liger",
                        help="comma-separated: kibench implementations by name, torch-eager, liger")
    parser.add_argument("--pass", dest="pass_name", choices=["full", "forward"], default="full")
    parser.add_argument("--oracle", default="oracle-fp64")
    parser.add_argument("--liger-chunk-size", type=int, default=1024)
    parser.add_argument("--max-samples", type=int, default=DEFAULT_SETTINGS["maxSamples"])
    parser.add_argument("--timeout", type=float, default=DEFAULT_SETTINGS["timeoutS"])
    args = parser.parse_args()

    def log(message):
        print(f"side_by_side: {message}", file=sys.stderr, flush=True)

    with open(args.workload) as f:
        spec = json.load(f)
    with open(os.path.join(args.like, "workload.json")) as f:
        if json.load(f) != spec:
            raise SystemExit(f"{args.like}/workload.json: not the workload of {args.workload}")
    workload_digest, environment_digest = run_digests(args.like)

    import torch

    settings = dict(DEFAULT_SETTINGS, **{"pass": args.pass_name, "maxSamples": args.max_samples,
                                         "timeoutS": args.timeout})
    full = args.pass_name == "full"
    pass_code = PASS_CODE[args.pass_name]
    kb = Kibench(args.capi)
    workload = kb.handle(kb.workload_open(args.workload.encode()), args.workload)
    info = WorkloadInfo()
    kb.check(kb.workload_get_info(workload, ctypes.byref(info)), "workload info")

    # The inputs: kibench's device buffers, viewed by torch without a copy.
    names = {"x_s": "student_input", "w_s": "student_weight", "x_t": "teacher_input", "w_t": "teacher_weight",
             "y": "target", "b_s": "student_bias", "b_t": "teacher_bias"}
    raw, inputs, digests = {}, {}, []
    for key, name in names.items():
        t = Tensor()
        kb.check(kb.workload_input(workload, name.encode(), ctypes.byref(t)), f"input {name}")
        if not t.data:
            continue
        raw[key] = torch_view(torch, t)
        digests.append({"tensor": name, "file": "(device)",
                        "sha256": hashlib.sha256(raw[key].contiguous().view(torch.uint8).cpu().numpy()
                                                 .tobytes()).hexdigest()})
    for key, t in raw.items():
        # Leaves of their own: the student's get gradients; kibench's memory is read only.
        inputs[key] = t.detach().requires_grad_(key in ("x_s", "w_s", "b_s") and full)
    log(f"inputs: T={info.tokens} V={info.vocab} H={info.hidden} Hs={info.student_hidden}")

    truth = kb.handle(kb.impl_open(workload, args.oracle.encode()), f"open {args.oracle}")
    kb.check(kb.impl_run(truth, pass_code), f"{args.oracle}: run")
    kb.check(kb.impl_outputs(truth, ctypes.byref(Outputs())), f"{args.oracle}: outputs")
    log(f"{args.oracle}: done")

    versions = {"torch": torch.__version__}
    try:
        import triton
        versions["triton"] = triton.__version__
    except ImportError:
        pass
    lanes = []
    for name in args.impl.split(","):
        if name == "torch-eager":
            meta = {"title": "PyTorch eager (the seed harness's module)",
                    "description": "bf16 logit GEMMs, fp32 upcast of both [T, V] logit matrices, "
                                   "CrossEntropyLoss, log_softmax, logsumexp beta-mixture, kl_div twice; "
                                   "autograd backward (scripts/side_by_side.py torch_eager_loss)",
                    "project": {"name": "pytorch", "version": torch.__version__},
                    "callable": {"language": "python", "path": "scripts/side_by_side.py",
                                 "symbol": "torch_eager_loss", "interface": "python_callable"}}
            lanes.append(TorchLane(kb, workload, torch, name, meta, torch_eager_loss(torch, inputs, info), inputs, full))
        elif name == "liger":
            from importlib.metadata import version
            versions["liger_kernel"] = version("liger-kernel")
            meta = {"title": f"Liger-Kernel LigerFusedLinearJSDLoss (torch.compile, chunk {args.liger_chunk_size})",
                    "description": "Liger-Kernel's chunked fused linear JSD loss: per chunk of tokens the logits, "
                                   "the loss and its gradients via torch.compile; grad W accumulated across chunks",
                    "project": {"name": "liger-kernel", "version": versions["liger_kernel"]},
                    "callable": {"language": "python", "path": "liger_kernel/chunked_loss/jsd_loss.py",
                                 "symbol": "LigerFusedLinearJSDLoss", "interface": "torch_nn_module"}}
            lanes.append(TorchLane(kb, workload, torch, name, meta,
                                   liger_loss(torch, inputs, info, args.liger_chunk_size), inputs, full))
        else:
            lanes.append(KibenchLane(kb, workload, name, pass_code))

    # Correctness first, against the oracle, with kibench's comparator.
    checks = {}
    for lane in lanes:
        out = lane.checked_outputs()
        stats, count = (ErrorStats * 8)(), ctypes.c_int()
        # Gradients are checked whenever the pass computes them (kibench's rule).
        kb.check(kb.compare_outputs(truth, ctypes.byref(out), 1 if full else 0, stats, 8, ctypes.byref(count)),
                 f"{lane.name}: compare")
        errors = [{"output": s.output.decode(), "count": s.count, "maxAbsError": s.max_abs_error,
                   "relL2Error": s.rel_l2_error, "refL2Norm": s.ref_l2_norm, "nonfinite": s.nonfinite}
                  for s in stats[:count.value]]
        passed = all(s.passed for s in stats[:count.value])
        checks[lane.name] = (out.loss, errors, lane.memory())
        log(f"{lane.name}: loss {out.loss:.9g}, " + ", ".join(f"{e['output']} {e['relL2Error']:.2e}" for e in errors)
            + ("" if passed else "  FAILED"))
    kb.impl_close(truth)
    torch.cuda.empty_cache()

    invocation = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    results = measure(lanes, settings, log)

    implementations = []
    for lane in lanes:
        samples, stop_reason = results[lane.name]
        loss, errors, memory = checks[lane.name]
        entry = {"name": lane.name, "kibenchImplementation": lane.kibench_implementation}
        if not lane.kibench_implementation:
            entry.update(lane.meta)
            entry["software"] = versions
        entry.update({"stopReason": stop_reason, "samples": samples, "memory": memory, "loss": loss,
                      "errors": errors})
        implementations.append(entry)
        log(f"{lane.name}: median {median([s['ns'] for s in samples]) / 1e6:.3f} ms over {len(samples)} "
            f"samples ({stop_reason})")
        lane.close()
    kb.workload_close(workload)

    result = {"format": FORMAT, "invocation": invocation, "harness": HARNESS,
              "workloadDigest": workload_digest, "environmentDigest": environment_digest,
              "oracle": args.oracle, "settings": settings, "inputs": digests, "implementations": implementations}
    write_atomically(args.out, json.dumps(finite_or_none(result), indent=2, allow_nan=False) + "\n")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
