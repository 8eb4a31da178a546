"""The torch-eager and liger lanes' functions timed outside kibench, the way
Liger-Kernel's benchmark scripts time them: triton.testing.do_bench (CUDA
events, the L2 cleared before each call, the median), a full pass (the loss
and its backward, the student leaves' .grad cleared before each call), on
inputs made as the seed's harness makes them (torch.rand inputs, nn.Linear's
default init for both heads, uniform targets). kibench's own figure for the
same lane comes from `python -m kibench run`; docs/perf.md sets the two side
by side.

    python3 scripts/time_outside_kibench.py [--impl torch-eager|liger] [--tokens 8192]
        [--vocab 128256] [--hidden 4096] [--student-hidden 2048] [--beta 0.5] [--rep-ms 4000]

Prints one line: the lane, the shape, the median ms and the peak bytes
PyTorch allocated. Needs a GPU, PyTorch and Triton (and liger-kernel for
--impl liger)."""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=("torch-eager", "liger"), default="torch-eager")
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--vocab", type=int, default=128256)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--student-hidden", type=int, default=2048)
    parser.add_argument("--beta", type=float, default=0.5)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--rep-ms", type=float, default=4000.0)
    args = parser.parse_args()

    import torch
    import triton

    from kibench.lanes import hf_jsd_loss

    device = torch.device("cuda")
    torch.manual_seed(0)
    T, V, H, Hs = args.tokens, args.vocab, args.hidden, args.student_hidden
    bf16 = torch.bfloat16

    def head(fan_in):
        bound = 1.0 / math.sqrt(fan_in)
        return torch.empty(V, fan_in, device=device, dtype=bf16).uniform_(-bound, bound)

    student_input = torch.rand(T, Hs, device=device, dtype=bf16).requires_grad_(True)
    student_weight = head(Hs).requires_grad_(True)
    teacher_input = torch.rand(T, H, device=device, dtype=bf16)
    teacher_weight = head(H)
    target = torch.randint(0, V, (T,), device=device, dtype=torch.long)
    scalars = dict(weight_hard=0.5, weight_soft=0.5, beta=args.beta, ignore_index=-100,
                   temperature=args.temperature)

    if args.impl == "torch-eager":
        def loss_fn():
            return hf_jsd_loss(torch, student_input, student_weight, teacher_input, teacher_weight, target, None,
                               None, **scalars)
    else:
        from liger_kernel.chunked_loss.jsd_loss import LigerFusedLinearJSDFunction

        def loss_fn():
            return LigerFusedLinearJSDFunction.apply(student_input, student_weight, teacher_input, teacher_weight,
                                                     target, None, None, scalars["weight_hard"],
                                                     scalars["weight_soft"], scalars["beta"],
                                                     scalars["ignore_index"], scalars["temperature"], True, 1024)

    def full_pass():
        loss_fn().backward()

    for _ in range(2):  # compilation and autotuning, untimed
        full_pass()
        student_input.grad = student_weight.grad = None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    median_ms = triton.testing.do_bench(full_pass, warmup=500, rep=args.rep_ms,
                                        grad_to_none=[student_input, student_weight], return_mode="median")
    print(f"{args.impl} outside kibench: T {T} V {V} H {H} Hs {Hs} beta {args.beta:g}: median {median_ms:.2f} ms "
          f"(triton.testing.do_bench), peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB allocated, "
          f"{torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
