#!/usr/bin/python3
"""Writes the scaling-study workloads (docs/perf.md) from the seed workload:
the seed's generators, scalars and correctness policy with other shapes.
Run from the repository root: python3 workloads/sweeps/generate.py
`kibench run BASE.json --axis tokens=... --axis vocab=...` derives its cases
the same way (lib/workload/axis_sweep.hpp), without files.
The seed shape is not repeated here: sweep with
  kibench run workloads/sweeps/*.json workloads/seed-distill-jsd-h4096-t8192-v128256.json

ragged/ holds the ragged-shape sweep: vocabularies and token counts that
are no multiple of 8 (GPT-2's 50257, 32001, 128257, T = 1, 7, 127, 1000,
4095) and hidden sizes beside the seed's (1024, 2880), each next to its
nearest aligned neighbour (50240 and 50264 for 50257, T = 64 and 128 for
the short ones), one axis at a time from the seed shape:
  kibench run workloads/sweeps/ragged/*.json --impl fused,cublas-floor,wgmma-floor"""
import copy
import json
import math
import pathlib

root = pathlib.Path(__file__).resolve().parent
seed = json.loads((root.parent / "seed-distill-jsd-h4096-t8192-v128256.json").read_text())

cases = [(t, 128256, 4096) for t in (1024, 2048, 4096, 8192, 16384, 32768)]
cases += [(8192, v, 4096) for v in (32000, 151936, 256000)]
cases += [(8192, 128256, h) for h in (2048, 8192)]
cases += [(32768, 256000, 4096)]

ragged = [(8192, v, 4096) for v in (32001, 50240, 50257, 50264, 128257)]
ragged += [(t, 128256, 4096) for t in (1, 7, 64, 127, 128, 1000, 4095)]
ragged += [(8192, 128256, h) for h in (1024, 2880)]


def write(folder, tokens, vocab, hidden):
    w = copy.deepcopy(seed)
    student = hidden // 2
    w["spec"]["axes"] = {"tokens": tokens, "vocab": vocab, "hidden": hidden}
    t = w["spec"]["tensors"]
    t["student_input"]["shape"] = [tokens, student]
    t["teacher_input"]["shape"] = [tokens, hidden]
    t["student_weight"]["shape"] = [vocab, student]
    t["teacher_weight"]["shape"] = [vocab, hidden]
    t["target"]["shape"] = [tokens]
    for name in ("student_bias", "teacher_bias"):
        if name in t:
            t[name]["shape"] = [vocab]
    for name, fan_in in (("student_weight", student), ("teacher_weight", hidden),
                         ("student_bias", student), ("teacher_bias", hidden)):
        if name in t:
            bound = 1.0 / math.sqrt(fan_in)
            t[name]["data"]["parameters"] = {"low": -bound, "high": bound}
    t["target"]["data"]["parameters"]["high"] = vocab
    name = f"distill-jsd-loss-hidden{hidden}-tokens{tokens}-vocab{vocab}-bf16"
    w["metadata"] = {
        "name": name,
        "title": f"distill_jsd_loss sweep: T={tokens}, V={vocab}, H={hidden} (student {student}), bf16",
        "description": "Scaling study: the seed workload's generators, scalars and policy at another shape.",
    }
    folder.mkdir(exist_ok=True)
    (folder / f"sweep-h{hidden}-t{tokens}-v{vocab}.json").write_text(json.dumps(w, indent=2) + "\n")


for tokens, vocab, hidden in cases:
    if (tokens, vocab, hidden) != (8192, 128256, 4096):  # the seed workload itself (names are unique)
        write(root, tokens, vocab, hidden)
for tokens, vocab, hidden in ragged:
    write(root / "ragged", tokens, vocab, hidden)
