"""Where liger-jsd-script's time goes: Liger-Kernel's benchmark_jsd.py way
of timing LigerJSD (a full pass on log_softmax of a leaf, the graph kept,
backward(retain_graph=True), the leaf's gradient accumulating), taken
apart step by step outside kibench, in one process:

  script      the script's own code timed by triton.testing.do_bench
  events      the same callable, one CUDA-event pair per call, synchronized
              between calls (as kibench's harness times a sample)
  leaf        LigerJSD on a leaf of log-probabilities, do_bench around the
              forward and backward, the leaf's gradient accumulating (a
              user's way); then with grad_to_none (kibench's liger-jsd)
  scriptrun   kibench.lanes.ScriptRun, the lane's own object: before_sample
              (the leaf takes the inputs, log_softmax rebuilt) untimed, then
              the timed pass
  kept        scriptrun, holding each pass's outputs until the next pass
              ends (as the lane's worker keeps the outputs it hands over)
  ...@N GB    each of the above with all but N GB of the device taken by a
              filler allocation (kibench's own process and the lanes beside
              it hold the rest of the board)

Each way prints its median, p20-p80, and what PyTorch's caching allocator
did during its timed calls: cudaMalloc calls, frees and retries (a retry
frees the whole cache and synchronizes).

    python3 dev/liger_jsd/script_ways.py [--tokens 8192] [--vocab 128256]
        [--samples 40] [--free-gb 40,30]
"""

import argparse
import os
import statistics
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def allocator_counts(torch):
    s = torch.cuda.memory_stats()
    return {"mallocs": s.get("num_device_alloc", 0), "frees": s.get("num_device_free", 0),
            "retries": s.get("num_alloc_retries", 0)}


def timed(torch, call, before, samples):
    """Median and p20/p80 ms of `call`, one event pair per call, with
    `before` (untimed) and a synchronization before each; allocator
    activity over the timed calls."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        before()
        call()
    torch.cuda.synchronize()
    counts0, ms = allocator_counts(torch), []
    for _ in range(samples):
        before()
        torch.cuda.synchronize()
        start.record()
        call()
        stop.record()
        torch.cuda.synchronize()
        ms.append(start.elapsed_time(stop))
    counts1 = allocator_counts(torch)
    q = statistics.quantiles(ms, n=5)
    return statistics.median(ms), q[0], q[3], {k: counts1[k] - counts0[k] for k in counts0}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--vocab", type=int, default=128256)
    parser.add_argument("--beta", type=float, default=0.5)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--free-gb", default="40,30", help="comma-separated free-memory levels to repeat the ways at")
    args = parser.parse_args()

    import torch
    import triton
    from liger_kernel.transformers.jsd import LigerJSD

    from kibench.lanes import ScriptRun, _liger_jsd_loss

    torch.manual_seed(0)
    T, V = args.tokens, args.vocab
    dev = torch.device("cuda")
    gib = 2 ** 30
    print(f"{torch.cuda.get_device_name()}, T {T}, V {V}, beta {args.beta}, torch {torch.__version__}")

    def ways():
        # The script's own tensors: a randn leaf, log_softmax of it (graph
        # kept), a log_softmax teacher, no labels.
        leaf = torch.randn(T, V, device=dev, requires_grad=True)
        script_input = leaf.log_softmax(dim=-1)
        teacher = torch.randn(T, V, device=dev).log_softmax(dim=-1)
        jsd = LigerJSD(beta=args.beta)

        def full():
            y = jsd(script_input, teacher)
            y.backward(retain_graph=True)

        for _ in range(3):
            full()
        torch.cuda.synchronize()
        counts0 = allocator_counts(torch)
        ms = triton.testing.do_bench(full, rep=1000, quantiles=[0.5, 0.2, 0.8])
        counts1 = allocator_counts(torch)
        yield "script (do_bench)", (*ms, {k: counts1[k] - counts0[k] for k in counts0})
        yield "events", timed(torch, full, lambda: None, args.samples)
        del full, script_input, leaf
        torch.cuda.synchronize()

        # A user's way: LigerJSD on a leaf of log-probabilities, do_bench
        # around the forward and backward; the leaf's gradient accumulates
        # (no grad_to_none), as in do_bench's default.
        log_probs = torch.randn(T, V, device=dev).log_softmax(dim=-1).requires_grad_(True)

        def on_leaf():
            jsd(log_probs, teacher).backward()

        for _ in range(3):
            on_leaf()
        yield "leaf (do_bench)", (*triton.testing.do_bench(on_leaf, rep=1000, quantiles=[0.5, 0.2, 0.8]), {})
        # kibench's liger-jsd: the leaf's gradient set to None before each
        # call, so autograd hands dX over without accumulating it.
        yield "leaf, grad to none (do_bench)", (*triton.testing.do_bench(on_leaf, rep=1000, grad_to_none=[log_probs],
                                                                         quantiles=[0.5, 0.2, 0.8]), {})
        del log_probs, on_leaf
        torch.cuda.synchronize()

        inputs = types.SimpleNamespace(student_log_probs=torch.randn(T, V, device=dev).log_softmax(dim=-1),
                                       teacher_log_probs=teacher, target=None, beta=args.beta,
                                       ignore_index=-100)
        run = ScriptRun(_liger_jsd_loss(inputs), inputs)
        yield "scriptrun", timed(torch, lambda: run("full"), lambda: run.before_sample("full"), args.samples)
        kept = []

        def keep_run():
            outputs = run("full")
            kept[:] = [outputs.loss, outputs.grad_student_input]

        yield "kept", timed(torch, keep_run, lambda: run.before_sample("full"), args.samples)
        del run, kept, inputs, teacher
        torch.cuda.synchronize()

    def show(name, result):
        median, p20, p80, counts = result
        allocator = (f"  cudaMalloc {counts['mallocs']}, cudaFree {counts['frees']}, retries {counts['retries']}"
                     if counts else "")
        print(f"  {name:<30} {median:8.3f} ms  (p20 {p20:.3f}, p80 {p80:.3f}){allocator}", flush=True)

    print("the whole board free:")
    for name, result in ways():
        show(name, result)
    torch.cuda.empty_cache()
    for free_gb in [float(x) for x in args.free_gb.split(",") if x]:
        free, _ = torch.cuda.mem_get_info()
        filler_bytes = int(free - free_gb * gib)
        if filler_bytes <= 0:
            print(f"{free_gb:g} GB free: the board has only {free / gib:.1f} GiB free; skipped")
            continue
        filler = torch.empty(filler_bytes, dtype=torch.uint8, device=dev)
        print(f"{free_gb:g} GiB left free ({filler_bytes / gib:.1f} GiB taken):")
        try:
            for name, result in ways():
                show(name, result)
        except torch.OutOfMemoryError as e:
            print(f"  out of memory: {str(e).splitlines()[0]}")
        del filler
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
