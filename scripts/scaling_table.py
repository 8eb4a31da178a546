#!/usr/bin/env python3
"""The strong-scaling table of `fused-vocab-parallel` (docs/perf.md), from
`kibench run --gpus N --impl fused,fused-vocab-parallel,fused-vocab-parallel-compute-only`
run directories (what scripts/multi_gpu_session.sh writes, one a GPU count):

    scripts/scaling_table.py RUN_DIR...

Every ratio is a same-run ratio: `fused` runs on GPU 0 in the same rounds as
the sharded pass over N GPUs.

    ideal      = fused ÷ N
    efficiency = ideal ÷ fused-vocab-parallel
    collectives share = 1 − fused-vocab-parallel-compute-only ÷ fused-vocab-parallel
                (the same work without its all-reduces, timed beside it)

Prints a markdown table, one row a run in GPU-count order. A directory
without summary.json and protocol.json, or a run that lacks `fused` or
`fused-vocab-parallel`, is refused with exit 2 and a line naming it."""

import json
import os
import re
import sys

FUSED, SHARDED, COMPUTE_ONLY = "fused", "fused-vocab-parallel", "fused-vocab-parallel-compute-only"


class BadRun(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BadRun(f"{path}: {e}")


def gpu_count(protocol, path):
    """N of the protocol family's `_gpusN` suffix; 1 without one."""
    try:
        family = protocol["spec"]["comparability"]["family"]
    except (KeyError, TypeError):
        raise BadRun(f"{path}: spec.comparability.family missing")
    match = re.search(r"_gpus(\d+)$", family)
    return int(match.group(1)) if match else 1


def row(run_dir):
    summary_path = os.path.join(run_dir, "summary.json")
    protocol_path = os.path.join(run_dir, "protocol.json")
    summary, protocol = load(summary_path), load(protocol_path)
    gpus = gpu_count(protocol, protocol_path)
    lanes = {i.get("implementation"): i for i in summary.get("implementations", [])}
    for name in (FUSED, SHARDED):
        if name not in lanes or not isinstance(lanes[name].get("medianMs"), (int, float)):
            raise BadRun(f"{summary_path}: implementations: no {name} with a medianMs")
    fused, sharded = lanes[FUSED]["medianMs"], lanes[SHARDED]["medianMs"]
    compute_only = lanes.get(COMPUTE_ONLY, {}).get("medianMs")
    errors = lanes[SHARDED].get("errors") or {}
    worst = max((e.get("relL2", 0.0) for e in errors.values()), default=None)
    return {
        "gpus": gpus,
        "fused": fused,
        "ideal": fused / gpus,
        "sharded": sharded,
        "efficiency": fused / gpus / sharded,
        "compute_only": compute_only,
        "collectives": None if compute_only is None else 1.0 - compute_only / sharded,
        "status": lanes[SHARDED].get("status", "?"),
        "worst": worst,
        "workload": summary.get("workload", "?"),
    }


def table(rows):
    lines = ["| GPUs | `fused` (1 GPU) ms | ideal (÷ N) ms | `fused-vocab-parallel` ms | efficiency | "
             "compute-only ms | collectives share | correctness |",
             "|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: r["gpus"]):
        compute_only = "–" if r["compute_only"] is None else f"{r['compute_only']:.2f}"
        collectives = "–" if r["collectives"] is None else f"{100 * r['collectives']:.1f} %"
        worst = "" if r["worst"] is None else f" (max rel L2 {r['worst']:.1e})"
        lines.append(f"| {r['gpus']} | {r['fused']:.2f} | {r['ideal']:.2f} | {r['sharded']:.2f} | "
                     f"{100 * r['efficiency']:.1f} % | {compute_only} | {collectives} | {r['status']}{worst} |")
    return "\n".join(lines)


def main(argv):
    if len(argv) < 2:
        print("usage: scaling_table.py RUN_DIR...", file=sys.stderr)
        return 2
    try:
        rows = [row(d) for d in argv[1:]]
    except BadRun as e:
        print(f"scaling_table: {e}", file=sys.stderr)
        return 2
    workloads = sorted({r["workload"] for r in rows})
    print(f"workload: {', '.join(workloads)}\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
