#!/usr/bin/env python3
"""Times torch.nn.functional.scaled_dot_product_attention on the decode shapes
that `kvplan bench --device cuda --format json` measured, in the same way
(random data, CUDA events, each timed run reading its own copy of K/V so
nothing is served from L2, median of repeats), and prints them side by side.

    kvplan bench --device cuda --format json > kvplan.json
    python3 bench/torch_sdpa.py kvplan.json [--json sdpa.json] [--repeats 30]

A decode step is one query token per sequence: q [batch, q_heads, 1, d]
against K/V [batch, kv_heads, context, d] with enable_gqa=True, so SDPA reads
the same bytes as kvplan's kernel. SDPA has no fp8 or paged cache: fp8 rows
are skipped, and a paged row is compared with SDPA on the contiguous cache
of the same shape (marked "contiguous" in the sdpa_layout column).
"""
import argparse
import json
import math
import statistics
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the GPU machine has torch; a developer machine may not
    print("torch_sdpa: PyTorch is not importable; nothing to compare", file=sys.stderr)
    sys.exit(0)

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def time_sdpa(row, repeats, l2_bytes):
    """Median seconds of one SDPA decode step for a kvplan result row."""
    b, hq, hkv = row["batch"], row["q_heads"], row["kv_heads"]
    d, n = row["head_dim"], row["context"]
    dtype = DTYPES[row["dtype"]]
    kv_bytes = 2 * b * hkv * n * d * torch.finfo(dtype).bits // 8
    copies = max(2, math.ceil(3 * l2_bytes / kv_bytes))  # as kvplan's RotationCopies
    gen = torch.Generator(device="cuda").manual_seed(1)
    q = torch.randn(b, hq, 1, d, device="cuda", dtype=dtype, generator=gen)
    kvs = [(torch.randn(b, hkv, n, d, device="cuda", dtype=dtype, generator=gen),
            torch.randn(b, hkv, n, d, device="cuda", dtype=dtype, generator=gen))
           for _ in range(copies)]

    def step(i):
        k, v = kvs[i % copies]
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=(hq != hkv))

    # Check the result against a float64 computation (first sequence) before timing it.
    k, v = kvs[0]
    group = hq // hkv
    kr = k[:1].double().repeat_interleave(group, dim=1)
    vr = v[:1].double().repeat_interleave(group, dim=1)
    ref = torch.softmax(q[:1].double() @ kr.transpose(-1, -2) / math.sqrt(d), dim=-1) @ vr
    err = (step(0)[:1].double() - ref).abs().max().item()
    if not err < 2e-2:
        raise SystemExit(f"torch_sdpa: {row['label']}: SDPA differs from float64 by {err}")

    for i in range(3):
        step(i)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    spin = getattr(torch.cuda, "_sleep", None)
    for i in range(repeats):
        if spin is not None:  # as kvplan: keep the GPU busy while the host enqueues
            spin(200_000)
        start.record()
        step(i)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3)
    return statistics.median(times), kv_bytes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kvplan_json", help="output of kvplan bench --device cuda --format json")
    ap.add_argument("--json", help="write the side-by-side results here")
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    with open(args.kvplan_json) as f:
        run = json.load(f)
    if not torch.cuda.is_available():
        print("torch_sdpa: torch sees no CUDA device; nothing to compare", file=sys.stderr)
        return
    l2 = run.get("l2_bytes", 60 << 20)
    copy = run["copy_gbps"]
    out = []
    for row in run["results"]:
        entry = {"label": row["label"], "kvplan_seconds": row["seconds"], "kvplan_gbps": row["gbps"],
                 "bytes_read": row["bytes_read"]}
        if row["dtype"] in DTYPES:
            sec, kv_bytes = time_sdpa(row, args.repeats, l2)
            entry.update(sdpa_seconds=sec, sdpa_gbps=kv_bytes / sec / 1e9,
                         sdpa_layout="contiguous", speedup=sec / row["seconds"])
        out.append(entry)
        torch.cuda.empty_cache()

    print(f"\nkvplan CUDA kernel vs torch SDPA {torch.__version__} on {torch.cuda.get_device_name()}"
          f" (copy {copy:.0f} GB/s)")
    head = f"{'shape':<42} {'kvplan us':>10} {'GB/s':>6} {'%copy':>6} {'SDPA us':>9} {'GB/s':>6} {'speedup':>8}"
    print(head)
    print("-" * len(head))
    for e in out:
        k_us = e["kvplan_seconds"] * 1e6
        line = f"{e['label']:<42} {k_us:>10.1f} {e['kvplan_gbps']:>6.0f} {100 * e['kvplan_gbps'] / copy:>5.0f}%"
        if "sdpa_seconds" in e:
            line += f" {e['sdpa_seconds'] * 1e6:>9.1f} {e['sdpa_gbps']:>6.0f} {e['speedup']:>7.2f}x"
        else:
            line += f" {'n/a (no fp8 SDPA)':>25}"
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(),
                       "copy_gbps": copy, "results": out}, f, indent=2)


if __name__ == "__main__":
    main()
