"""The table of a variants run (variants.sh): each kernel's x copy under dist/'s build and under
each variant, round by round, and each variant's change against dist/'s.

usage: python3 gpu/rows/variants.py DIR [--builds base,NAME,...]

DIR holds one folder a bench, `bench-BUILD-ROUND/`, each with the lab bench's `rows-*.json`.
A cell is x the D2D copy measured in that bench run. The change is the variant's mean x copy
over its rounds against base's, and "outside" where every round of one is above every round of
the other (the rounds' spread does not cover it; said only where each has two rounds or more).
A round whose D2D copy of that matrix was noisy (the lab's mark: spread over 5 %, in the bench's
results file beside its rows file) is shown with "!" and left out of the change: its ratio
divides by a copy time that is not the copy's. No torch, no GPU.
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


class Noisy(float):
    """An x copy whose round's D2D copy of the same matrix was noisy."""


def noisy_copies(folder):
    """(shape, dtype) of the D2D copies the bench's results files in `folder` mark noisy."""
    out = set()
    for f in glob.glob(os.path.join(folder, "*.json")):
        if os.path.basename(f).startswith("rows-"):
            continue
        with open(f) as fh:
            doc = json.load(fh)
        for r in doc.get("rows", []):
            if r.get("kernel") == "d2d_copy" and r.get("noisy"):
                out.add((r.get("size"), r.get("dtype")))
    return out


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
        noisy = noisy_copies(os.path.join(folder, d))
        for f in sorted(glob.glob(os.path.join(folder, d, "rows-*.json"))):
            with open(f) as fh:
                doc = json.load(fh)
            ran = (doc.get("date", ""), rnd, build)
            first[build] = min(first.get(build, ran), ran)
            for r in doc["rows"]:
                if r.get("x_copy") is None:
                    continue
                shape = f"{r['rows']}x{r['cols']}"
                key = (r["entry"], r["implementation"], shape)
                x = r["x_copy"]
                cells[key][build][rnd] = Noisy(x) if (shape, r.get("dtype")) in noisy else x
    return cells, sorted(first, key=first.get)


def change(base, variant):
    """The variant's mean x copy against base's, in percent, and whether the rounds' spread
    covers it (None where either side has no round; False where either has one, which has no
    spread to speak of). Rounds of a noisy copy ([`Noisy`]) count as none."""
    base = [x for x in base if not isinstance(x, Noisy)]
    variant = [x for x in variant if not isinstance(x, Noisy)]
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
            row.append(" ".join(shown(rounds[k]) for k in sorted(rounds)) or "-")
        for v in variants:
            pct, outside = change(list(by.get(base, {}).values()), list(by.get(v, {}).values()))
            row.append("-" if pct is None else f"{pct:+.1f} %" + (" outside" if outside else ""))
        lines.append(row)
    text = "\n".join(line.rstrip() for line in align(head, lines)) + "\n"
    if any(isinstance(x, Noisy) for by in cells.values() for r in by.values() for x in r.values()):
        text += "! = that round's D2D copy was noisy (spread over 5 %): shown, left out of the change\n"
    return text


def shown(x):
    return f"{x:.3f}" + ("!" if isinstance(x, Noisy) else "")


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
