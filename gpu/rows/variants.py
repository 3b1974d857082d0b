"""The table of a variants run (variants.sh): each kernel's x copy under dist/'s build and under
each variant, round by round, and each variant's change against dist/'s.

usage: python3 gpu/rows/variants.py DIR [--builds base,NAME,...]

DIR holds one folder a bench, `bench-BUILD-ROUND/`, each with the lab bench's `rows-*.json`.
A cell is x the D2D copy measured in that bench run. The change is the variant's mean x copy
over its rounds against base's, and "outside" where every round of one is above every round of
the other (the rounds' spread does not cover it; said only where each has two rounds or more).
No torch, no GPU.
"""
import argparse
import collections
import glob
import json
import os
import re
import statistics
import sys

from peer_kernels import align

BENCH = re.compile(r"^bench-(?P<build>[A-Za-z0-9_-]+?)-(?P<round>\d+)$")


def read(folder):
    """{(entry, implementation, shape): {build: {round: x_copy}}} and the builds in the order
    their first bench ran (by the date each results file records; by round, then name, where
    one records none)."""
    cells = collections.defaultdict(lambda: collections.defaultdict(dict))
    first = {}
    for d in sorted(os.listdir(folder)):
        m = BENCH.match(d)
        if not m or not os.path.isdir(os.path.join(folder, d)):
            continue
        build, rnd = m["build"], int(m["round"])
        for f in sorted(glob.glob(os.path.join(folder, d, "rows-*.json"))):
            with open(f) as fh:
                doc = json.load(fh)
            ran = (doc.get("date", ""), rnd, build)
            first[build] = min(first.get(build, ran), ran)
            for r in doc["rows"]:
                if r.get("x_copy") is None:
                    continue
                key = (r["entry"], r["implementation"], f"{r['rows']}x{r['cols']}")
                cells[key][build][rnd] = r["x_copy"]
    return cells, sorted(first, key=first.get)


def change(base, variant):
    """The variant's mean x copy against base's, in percent, and whether the rounds' spread
    covers it (None where either side has no round; False where either has one, which has no
    spread to speak of)."""
    if not base or not variant:
        return None, None
    pct = (statistics.mean(variant) / statistics.mean(base) - 1) * 100
    spread = len(base) > 1 and len(variant) > 1
    outside = spread and (min(variant) > max(base) or max(variant) < min(base))
    return pct, outside


def table(cells, builds):
    base, variants = builds[0], builds[1:]
    head = ["kernel", "backend", "shape"] + builds + [f"{v} / {base}" for v in variants]
    lines = []
    for (entry, impl, shape), by in sorted(cells.items()):
        row = [entry, impl.removeprefix("rust-"), shape]
        for b in builds:
            rounds = by.get(b, {})
            row.append(" ".join(f"{rounds[k]:.3f}" for k in sorted(rounds)) or "-")
        for v in variants:
            pct, outside = change(list(by.get(base, {}).values()), list(by.get(v, {}).values()))
            row.append("-" if pct is None else f"{pct:+.1f} %" + (" outside" if outside else ""))
        lines.append(row)
    return "\n".join(line.rstrip() for line in align(head, lines)) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--builds", help="base first, then the variants (default: as they ran)")
    a = ap.parse_args(argv)
    cells, ran = read(a.dir)
    if not cells:
        sys.exit(f"error: no bench-BUILD-ROUND/rows-*.json under {a.dir}")
    builds = a.builds.split(",") if a.builds else ran
    # A build whose every bench failed stays in the table, as dashes, beside those that ran.
    missing = [b for b in builds if b not in ran]
    if missing:
        print(f"warning: no bench of {', '.join(missing)} under {a.dir} (bench-{missing[0]}-*.txt "
              "says why)", file=sys.stderr)
    sys.stdout.write(table(cells, builds))


if __name__ == "__main__":
    main()
