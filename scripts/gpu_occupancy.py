#!/usr/bin/env python3
"""The occupancy guard of `scripts/gpu-check.sh` and the writer of docs/gpu_occupancy.md.

Reads the JSON summary of `farfield gpu check --resources --json` (its last stdout line) from
the file given and compares it with the committed baseline docs/gpu_occupancy.json:

    python3 scripts/gpu_occupancy.py check SUMMARY.json    # exit 1 on a regression
    python3 scripts/gpu_occupancy.py write SUMMARY.json    # rewrite the baseline and the table

A regression is a kernel that had at least 2 resident blocks per multiprocessor at its default
launch shape in the baseline and has fewer now (a tile grown to the whole shared memory, a
register blow-up), a kernel launched by a default plan with a stack frame above MAX_STACK bytes
(per-thread arrays in local memory), or a kernel of the baseline that is no longer reported. Kernels that
gain blocks, and new kernels, pass; `write` records them.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "docs" / "gpu_occupancy.json"
TABLE = ROOT / "docs" / "gpu_occupancy.md"
# Largest stack frame (bytes per thread) a kernel launched by a default plan may have: per-thread
# arrays indexed at run time live in local memory (the run-time-width spreading kernels had
# 768-1,152 bytes; the width-specialised ones have at most 384, GM at w = 16 in f64).
MAX_STACK = 512
KEEP = ("arch", "source", "kernel", "registers", "static_smem", "spill_stores", "spill_loads", "stack_frame", "block",
        "dynamic_smem", "blocks_per_sm", "occupancy", "limiter", "case")


def rows(summary_path):
    summary = json.loads(Path(summary_path).read_text().strip().splitlines()[-1])
    res = summary.get("resources") or []
    if not res:
        sys.exit("gpu_occupancy: the summary has no resources (run `farfield gpu check --resources --json` with FARFIELD_PTXAS)")
    return [{k: r.get(k) for k in KEEP} for r in res]


def check(summary_path):
    now = {(r["arch"], r["kernel"]): r for r in rows(summary_path)}
    base = json.loads(BASELINE.read_text())["kernels"]
    bad = []
    for b in base:
        key = (b["arch"], b["kernel"])
        r = now.get(key)
        if r is None:
            bad.append(f"{key[0]} {key[1]}: in the baseline, not reported now")
        elif r["blocks_per_sm"] is not None and (r.get("stack_frame") or 0) > MAX_STACK:
            bad.append(f"{key[0]} {key[1]}: a stack frame of {r['stack_frame']} bytes per thread (local memory) at a default "
                       f"launch (case {r['case']}; at most {MAX_STACK}: per-thread arrays indexed at run time)")
        elif (b["blocks_per_sm"] or 0) >= 2 and (r["blocks_per_sm"] or 0) < 2:
            bad.append(f"{key[0]} {key[1]}: {b['blocks_per_sm']} -> {r['blocks_per_sm']} blocks/SM "
                       f"(registers {b['registers']} -> {r['registers']}, shared memory "
                       f"{(b['static_smem'] or 0) + (b['dynamic_smem'] or 0)} -> {(r['static_smem'] or 0) + (r['dynamic_smem'] or 0)} B, "
                       f"limiter {r['limiter']}, case {r['case']})")
    launched = sum(r["blocks_per_sm"] is not None for r in now.values())
    print(f"gpu_occupancy: {len(now)} kernel/arch pairs, {launched} at default launch shapes; baseline {len(base)}")
    for line in bad:
        print("gpu_occupancy: REGRESSION " + line)
    if bad:
        print("gpu_occupancy: if intended, rewrite the baseline: FARFIELD_OCCUPANCY_WRITE=1 bash scripts/gpu-check.sh")
        return 1
    return 0


def write(summary_path):
    rs = sorted(rows(summary_path), key=lambda r: (r["arch"], r["source"], r["kernel"]))
    BASELINE.write_text(json.dumps({"generated_by": "FARFIELD_OCCUPANCY_WRITE=1 bash scripts/gpu-check.sh", "kernels": rs}, indent=1) + "\n")
    out = ["# Occupancy of the CUDA kernels at the default plans' launch shapes", "",
           "Written by `FARFIELD_OCCUPANCY_WRITE=1 bash scripts/gpu-check.sh` (no GPU needed) from",
           "`farfield gpu check --resources`: registers, stack frame (per-thread local memory) and static",
           "shared memory from `ptxas -v`",
           "(the nvidia-cuda-nvcc-cu12 wheel's ptxas), block and dynamic shared memory from the launches",
           "of the default plans recorded on the CUDA-on-CPU emulator (`src/gpu/launch_shapes.tsv`,",
           "kept fresh by `gpu-emu/tests/launch_shapes.rs`), resident blocks per multiprocessor by the",
           "rules of NVIDIA's occupancy calculator (`src/gpu/occupancy.rs`). The raw rows are in",
           "`docs/gpu_occupancy.json`; the test command fails when a kernel with ≥ 2 blocks/SM there",
           "drops below 2. Dynamic shared memory is the largest any default plan asks for (the",
           "column `case`); `-`: not launched by the plans recorded.", ""]
    for arch in sorted({r["arch"] for r in rs}):
        out += [f"## {arch}", "", "| source | kernel | regs | spill (st/ld B) | stack B | static smem | block | dynamic smem | blocks/SM | occupancy | limiter | case |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
        for r in (r for r in rs if r["arch"] == arch):
            dash = lambda v: "-" if v is None else v
            occ = "-" if r["occupancy"] is None else f"{100 * r['occupancy']:.0f} %"
            out.append(f"| {r['source']} | `{r['kernel']}` | {r['registers']} | {r['spill_stores']}/{r['spill_loads']} | {dash(r['stack_frame'])} | {r['static_smem']} | "
                       f"{dash(r['block'])} | {dash(r['dynamic_smem'])} | {dash(r['blocks_per_sm'])} | {occ} | {dash(r['limiter'])} | {dash(r['case'])} |")
        out.append("")
    TABLE.write_text("\n".join(out))
    print(f"gpu_occupancy: wrote {BASELINE.relative_to(ROOT)} and {TABLE.relative_to(ROOT)} ({len(rs)} rows)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("check", "write"):
        sys.exit(__doc__)
    sys.exit(check(sys.argv[2]) if sys.argv[1] == "check" else write(sys.argv[2]))
