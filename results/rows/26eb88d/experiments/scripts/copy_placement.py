"""Does where a buffer lands in device memory change a D2D copy's time? (prepared, not run)

The lab's copies of one byte count differ by 1.7-2.8 % from one matrix to the next, much the
same way in every record (of the five 268 MB copies, 65536 x 512 f32 the slowest in eight of
nine records, 32768 x 1024 f32 the fastest in seven). If the time follows the buffers, a
case's x copy carries where its buffers landed (in the lab the kernels and the copy share them;
in gpu/rows/peers.py the copy writes a buffer of its own, the implementations' outputs come
from PyTorch's caching allocator).

K pairs of buffers of one size, each pair's copy timed in every round, the pairs in a shuffled
order, CUDA events around each copy after a spin (as gpu/rows/peers.py times): per pair the
median, p10 and p90 of R rounds, then the pairs' medians against each other. Then the same K
pairs again, freed and allocated anew in reverse order, to see whether a slow pair stays slow
with its addresses or moves with them.

Usage on the GPU machine: python3 copy_placement.py [MB moved per copy, default 268] [K] [R]
"""

import random
import statistics
import sys

import torch


def time_pairs(pairs, rounds, spin_cycles, rng):
    times = [[] for _ in pairs]
    for _ in range(rounds):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        for i in order:
            src, dst = pairs[i]
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(spin_cycles)
            start.record()
            dst.copy_(src)
            end.record()
            end.synchronize()
            times[i].append(start.elapsed_time(end) * 1e3)
    return times


def report(label, pairs, times):
    print(f"## {label}")
    print("pair  src address    dst address    median us  p10 us  p90 us")
    medians = []
    for (src, dst), t in zip(pairs, times):
        t = sorted(t)
        med = statistics.median(t)
        medians.append(med)
        p10, p90 = t[len(t) // 10], t[(9 * len(t)) // 10]
        print(f"{len(medians) - 1:>4}  {src.data_ptr():#014x} {dst.data_ptr():#014x} "
              f"{med:9.1f} {p10:7.1f} {p90:7.1f}")
    lo, hi = min(medians), max(medians)
    print(f"pairs' medians {lo:.1f}-{hi:.1f} us, {100 * (hi / lo - 1):.1f} % apart\n")
    return medians


def main():
    mb = float(sys.argv[1]) if len(sys.argv) > 1 else 268.0
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    n = int(mb * 1e6 / 2 / 4)  # f32 elements read (and as many written) per copy
    rng = random.Random(0)
    print(f"# {torch.cuda.get_device_name()}, {k} pairs of {n} f32 elements "
          f"({2 * n * 4 / 1e6:.1f} MB moved a copy), {rounds} rounds")
    spin = 2_000_000  # about a millisecond of torch.cuda._sleep: the host enqueues ahead
    pairs = [(torch.rand(n, device="cuda"), torch.empty(n, device="cuda")) for _ in range(k)]
    time_pairs(pairs, 3, spin, rng)  # warm-up
    first = report("as allocated", pairs, time_pairs(pairs, rounds, spin, rng))
    again = report("the same pairs again", pairs, time_pairs(pairs, rounds, spin, rng))
    same = sorted(range(k), key=lambda i: first[i]) == sorted(range(k), key=lambda i: again[i])
    print(f"the pairs' order by time {'held' if same else 'changed'} between the two passes\n")
    del pairs
    torch.cuda.empty_cache()
    pairs = [(torch.rand(n, device="cuda"), torch.empty(n, device="cuda")) for _ in range(k)]
    pairs.reverse()
    report("allocated anew, reversed", pairs, time_pairs(pairs, rounds, spin, rng))


if __name__ == "__main__":
    main()
