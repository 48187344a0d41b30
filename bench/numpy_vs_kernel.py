#!/usr/bin/python3
"""Decode attention three ways, side by side in one run, on the same shapes:

  kernel   kvplan's CPU kernel (`kvplan bench --shape ... --concat --format json`),
           also timed with a naive concat-per-step cache (copy all, then attend)
  numpy    the same attention in NumPy (matmul -> softmax -> matmul, batched over
           KV heads, GQA by reshaping the query heads), cache preallocated
  concat   NumPy with the cache grown by np.concatenate every step (what a
           straightforward Python decode loop does)

Run with Debian's interpreter, whose NumPy uses libopenblas0-pthread (all cores):
    /usr/bin/python3 bench/numpy_vs_kernel.py [--kvplan build/release/kvplan] [--quick]
Bytes are counted from the shape (K and V once per step); caches are flushed by
writing 64 MiB before every timed step; times are medians.
"""
import argparse
import json
import subprocess
import sys
import time

import numpy as np

FLUSH = np.empty(64 << 20, dtype=np.uint8)


def flush():
    FLUSH.fill(np.random.randint(0, 255))


def attend(q, k, v, scale):
    """q [kvh, g, d], k/v [kvh, n, d] -> out [kvh, g, d]."""
    s = np.matmul(q, k.transpose(0, 2, 1)) * scale
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    return np.matmul(p, v)


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        flush()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def numpy_shape(dtype, n, kvh, g, d, repeats):
    rng = np.random.default_rng(1)
    npt = np.float32 if dtype == "fp32" else np.float16
    k = rng.standard_normal((kvh, n, d), dtype=np.float32).astype(npt)
    v = rng.standard_normal((kvh, n, d), dtype=np.float32).astype(npt)
    q = rng.standard_normal((kvh, g, d), dtype=np.float32).astype(npt)
    scale = npt(1.0 / np.sqrt(d))
    out = attend(q, k, v, scale)  # warm-up
    assert np.all(np.isfinite(out))
    t_attend = median_time(lambda: attend(q, k, v, scale), repeats)
    state = {"k": k, "v": v}
    new = rng.standard_normal((kvh, 1, d), dtype=np.float32).astype(npt)

    def concat_step():
        state["k"] = np.concatenate([state["k"], new], axis=1)
        state["v"] = np.concatenate([state["v"], new], axis=1)
        attend(q, state["k"], state["v"], scale)

    t_concat = median_time(concat_step, repeats)
    return t_attend, t_concat


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kvplan", default="build/release/kvplan")
    ap.add_argument("--quick", action="store_true", help="smaller caches, fewer repeats")
    ap.add_argument("--repeats", type=int, default=0)
    args = ap.parse_args()
    repeats = args.repeats or (3 if args.quick else 5)
    big = 32768 if args.quick else 131072
    # (dtype, context, kv_heads, group, head_dim); NumPy's fp16 matmul has no BLAS
    # path and is timed on a small cache only.
    shapes = [("fp32", big, 8, 1, 128), ("fp32", big // 4, 8, 4, 128), ("fp32", 4096, 8, 1, 128),
              ("fp16", 8192, 8, 1, 128)]
    cmd = [args.kvplan, "bench", "--concat", "--format", "json", "--repeats", str(repeats)]
    for dt, n, kvh, g, d in shapes:
        cmd += ["--shape", f"dtype={dt},context={n},kv_heads={kvh},group={g},head_dim={d}"]
    kernel = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    print(f"machine: {kernel['machine']}; read ceiling {kernel['read_ceiling_gbps']:.1f} GB/s; "
          f"numpy {np.__version__} (OpenBLAS, all cores); repeats {repeats}, median")
    head = ("shape", "cache MiB", "kernel GB/s", "numpy GB/s", "kernel/numpy",
            "kernel+concat ms", "numpy+concat ms", "kernel ms")
    rows = []
    for (dt, n, kvh, g, d), r in zip(shapes, kernel["results"]):
        t_np, t_np_concat = numpy_shape(dt, n, kvh, g, d, 1 if dt == "fp16" else repeats)
        b = r["bytes_read"]
        rows.append((r["label"], f"{b / 2**20:.0f}", f"{r['gbps']:.2f}", f"{b / t_np / 1e9:.2f}",
                     f"{t_np / r['seconds']:.1f}x", f"{1e3 * r.get('concat_seconds', 0):.1f}",
                     f"{1e3 * t_np_concat:.1f}", f"{1e3 * r['seconds']:.2f}"))
        print(f"  done {r['label']}", file=sys.stderr)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))


if __name__ == "__main__":
    main()
