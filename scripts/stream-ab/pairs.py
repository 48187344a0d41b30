#!/usr/bin/env python3
"""scripts/stream-ab.sh's reader: the 'AB <variant> <ms>' lines the harness
prints on stderr, one per kernel step, base and variant alternating. Pairs
adjacent steps (skipping the first pair: the bench's validation call and
the first timed step), prints the median of variant time / base time with
its interquartile range, and the median times."""
import statistics
import sys

steps = []
for line in sys.stdin:
    f = line.split()
    if len(f) == 3 and f[0] == "AB":
        steps.append((int(f[1]), float(f[2])))
steps = steps[2:]
ratios, base, variant = [], [], []
for i in range(0, len(steps) - 1, 2):
    pair = dict(steps[i:i + 2])
    if 0 in pair and 1 in pair:
        ratios.append(pair[1] / pair[0])
        base.append(pair[0])
        variant.append(pair[1])
if len(ratios) < 3:
    sys.exit("stream-ab: fewer than 3 pairs of steps were timed (is the harness patch applied?)")
ratios.sort()
n = len(ratios)
print(f"{n:3d} pairs  variant/base {statistics.median(ratios):.3f} (IQR {ratios[n // 4]:.3f}-{ratios[(3 * n) // 4]:.3f})"
      f"  base {statistics.median(base):.2f} ms  variant {statistics.median(variant):.2f} ms")
