#!/usr/bin/python3
"""Writes the workloads of jsd and fused_linear_jsd (docs/loss-math.md):
small CPU cases (workloads/<operation>/small/) and the cases of Liger-Kernel's
benchmark scripts (workloads/<operation>/liger/), so that `kibench compare`
stands kibench's runs beside the imported Liger records (docs/import.md).
Run from the repository root: python3 workloads/generate_jsd_family.py

jsd (benchmark_jsd.py): fp32 log-probabilities of T = B·T = 8192 tokens over
V = 4096 … 131072, and of T = 1024 … 8192 tokens at V = 128256; inputs as
torch.randn(...).log_softmax(-1), here uniform with randn's variance
(±sqrt(3)) through log_softmax. No labels, beta 0.5.
fused_linear_jsd (benchmark_fused_linear_jsd.py): bf16, H = 4096,
V = 128256, T = 1024 … 8192; hidden states torch.rand (uniform [0, 1)) as
that script draws them, but the LM heads as nn.Linear's default init
(uniform ±1/sqrt(H)), not the script's torch.rand: with heads in [0, 1) and
H = 4096 every logit is near H/4 = 1024, where bf16's spacing is 8, so the
bf16 logits carry no usable softmax and no bf16 implementation (PyTorch
eager included) comes within 100 % of the fp64 oracle's gradients
(docs/loss-math.md). No labels, beta 0.5, tau 1."""
import json
import math
import pathlib

root = pathlib.Path(__file__).resolve().parent
OPERATION_DIGEST = {
    "jsd": "sha256:eccbf4150e60ad41ce52a4bd06fa582b8b4d5ed394fcd096f069b08eadf420e6",
    "fused_linear_jsd": "sha256:71138de338d4a1a85e751a2db3bd1a1c08f93a234a9ab0cfd9c5ab35eb180b72",
}
SQRT3 = math.sqrt(3.0)


def fp32(value):
    return {"dtype": "fp32", "value": value}


def uniform(shape, dtype, seed, low, high, generator="philox4x32_10_uniform"):
    return {"shape": shape, "dtype": dtype,
            "data": {"generator": generator, "seed": seed, "parameters": {"low": low, "high": high}}}


def labels(tokens, vocab, seed, ignore_fraction):
    return {"shape": [tokens], "dtype": "int64",
            "data": {"generator": "philox4x32_10_uniform_int", "seed": seed,
                     "parameters": {"low": 0, "high": vocab, "ignore_fraction": ignore_fraction}}}


def correctness(max_relative_error):
    return {"comparator": "fp64_oracle_loss_rel_abs_grads_rel_l2", "maxRelativeError": max_relative_error,
            "maxAbsoluteError": 0.000001, "nanPolicy": "reject", "infinityPolicy": "reject"}


def jsd_case(name, title, description, tokens, vocab, beta=0.5, ignore_fraction=None):
    tensors = {
        "student_log_probs": uniform([tokens, vocab], "fp32", 2001, -SQRT3, SQRT3,
                                     "philox4x32_10_uniform_log_softmax"),
        "teacher_log_probs": uniform([tokens, vocab], "fp32", 2002, -SQRT3, SQRT3,
                                     "philox4x32_10_uniform_log_softmax"),
    }
    if ignore_fraction is not None:
        tensors["target"] = labels(tokens, vocab, 2003, ignore_fraction)
    return {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "WorkloadCase",
            "metadata": {"name": name, "title": title, "description": description},
            "spec": {"operationSpecDigest": OPERATION_DIGEST["jsd"],
                     "axes": {"tokens": tokens, "vocab": vocab}, "tensors": tensors,
                     "scalars": {"beta": fp32(beta), "ignore_index": {"dtype": "int64", "value": -100}},
                     "correctness": correctness(0.0001)}}


def fused_case(name, title, description, tokens, vocab, hidden, beta=0.5, temperature=1.0,
               ignore_fraction=None):
    bound = 1.0 / math.sqrt(hidden)
    low = -bound
    tensors = {
        "student_input": uniform([tokens, hidden], "bf16", 3001, 0.0, 1.0),
        "student_weight": uniform([vocab, hidden], "bf16", 3002, low, bound),
        "teacher_input": uniform([tokens, hidden], "bf16", 3003, 0.0, 1.0),
        "teacher_weight": uniform([vocab, hidden], "bf16", 3004, low, bound),
    }
    if ignore_fraction is not None:
        tensors["target"] = labels(tokens, vocab, 3005, ignore_fraction)
    return {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "WorkloadCase",
            "metadata": {"name": name, "title": title, "description": description},
            "spec": {"operationSpecDigest": OPERATION_DIGEST["fused_linear_jsd"],
                     "axes": {"tokens": tokens, "hidden": hidden, "vocab": vocab}, "tensors": tensors,
                     "scalars": {"beta": fp32(beta), "temperature": fp32(temperature),
                                 "ignore_index": {"dtype": "int64", "value": -100}},
                     "correctness": correctness(0.01)}}


def write(path, manifest):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2) + "\n")


SMALL = [  # (file suffix, title, tokens, vocab, beta, tau, ignore_fraction)
    ("", "default", 32, 1000, 0.5, 1.0, None),
    ("-ignore25", "a quarter of the tokens labelled ignore_index", 32, 1000, 0.5, 1.0, 0.25),
    ("-all-ignored", "every token labelled ignore_index: loss and gradients 0", 32, 1000, 0.5, 1.0, 1.0),
    ("-beta0-forward-kl", "beta 0: forward KL(p || q)", 32, 1000, 0.0, 1.0, None),
    ("-beta1-reverse-kl", "beta 1: reverse KL(q || p)", 32, 1000, 1.0, 1.0, None),
    ("-odd-vocab", "a vocabulary that is no multiple of 8", 32, 1003, 0.5, 1.0, None),
    ("-single-token", "T = 1", 1, 1000, 0.5, 1.0, None),
]

for suffix, what, tokens, vocab, beta, tau, ignore in SMALL:
    key = f"t{tokens}-v{vocab}"
    write(root / "jsd" / "small" / f"jsd-small-{key}{suffix}.json",
          jsd_case(f"jsd-small{suffix or '-default'}-tokens{tokens}-vocab{vocab}-fp32",
                   f"jsd small CPU case ({what}): T={tokens}, V={vocab}, fp32",
                   "Small enough for the fp64 CPU oracle in well under a second. Log-probabilities as in "
                   "Liger's benchmark_jsd.py (randn through log_softmax; here uniform with randn's variance).",
                   tokens, vocab, beta, ignore))
for suffix, what, tokens, vocab, beta, tau, ignore in SMALL + [
        ("-tau2", "temperature 2", 32, 1000, 0.5, 2.0, None),
        ("-tau-half-ignore25", "temperature 0.5, a quarter of the tokens ignored", 32, 1000, 0.3, 0.5, 0.25)]:
    key = f"t{tokens}-h64-v{vocab}"
    write(root / "fused_linear_jsd" / "small" / f"fused-linear-jsd-small-{key}{suffix}.json",
          fused_case(f"fused-linear-jsd-small{suffix or '-default'}-hidden64-tokens{tokens}-vocab{vocab}-bf16",
                     f"fused_linear_jsd small CPU case ({what}): T={tokens}, V={vocab}, H=64, beta={beta}, "
                     f"tau={tau}, bf16",
                     "Small enough for the fp64 CPU oracle in well under a second. Inputs torch.rand, LM "
                     "heads nn.Linear's default init (uniform +-1/sqrt(H)).",
                     tokens, vocab, 64, beta, tau, ignore))

for vocab in (4096, 8192, 16384, 32768, 65536, 131072):
    write(root / "jsd" / "liger" / f"jsd-t8192-v{vocab}.json",
          jsd_case(f"jsd-liger-vocab-sweep-tokens8192-vocab{vocab}-fp32",
                   f"jsd as Liger's benchmark_jsd.py vocab sweep (B=4, T=2048): T=8192, V={vocab}, fp32",
                   "Liger's V-sweep case: fp32 log-probabilities, beta 0.5, no labels.", 8192, vocab))
for tokens in (1024, 2048, 4096, 8192):
    write(root / "jsd" / "liger" / f"jsd-t{tokens}-v128256.json",
          jsd_case(f"jsd-liger-token-sweep-tokens{tokens}-vocab128256-fp32",
                   f"jsd as Liger's benchmark_jsd.py token sweep: T={tokens}, V=128256, fp32",
                   "Liger's BT-sweep case: fp32 log-probabilities, beta 0.5, no labels.", tokens, 128256))
for tokens in (1024, 2048, 4096, 8192):
    write(root / "fused_linear_jsd" / "liger" / f"fused-linear-jsd-h4096-t{tokens}-v128256.json",
          fused_case(f"fused-linear-jsd-liger-hidden4096-tokens{tokens}-vocab128256-bf16",
                     f"fused_linear_jsd as Liger's benchmark_fused_linear_jsd.py: T={tokens}, H=4096, "
                     "V=128256, bf16",
                     "Liger's BT-sweep case: hidden states torch.rand (uniform [0, 1)) as the script "
                     "draws them, the LM heads nn.Linear's default init (uniform +-1/sqrt(H)) where the "
                     "script draws torch.rand, whose logits near 1024 leave bf16 no usable softmax; "
                     "beta 0.5, tau 1, no labels.",
                     tokens, 128256, 4096))
