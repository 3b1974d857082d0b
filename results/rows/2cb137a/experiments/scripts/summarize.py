"""x copy of every Rust row kernel in the lab bench outputs named, one column a folder.

Usage: python3 summarize.py DIR... (each holding a bench's rows-*.json)
"""
import collections
import glob
import json
import os
import sys

res = collections.defaultdict(dict)
for d in sys.argv[1:]:
    for f in glob.glob(d + "/rows-*.json"):
        for r in json.load(open(f))["rows"]:
            if r.get("implementation", "").startswith("rust"):
                res[(r["entry"], f"{r['rows']}x{r['cols']}")][d] = r["x_copy"]
cols = sys.argv[1:]
print("%-24s %-12s" % ("entry", "shape") + "".join("%12s" % os.path.basename(c.rstrip("/"))[-12:] for c in cols))
for k in sorted(res):
    cells = ("%12.3f" % res[k][c] if c in res[k] else "%12s" % "-" for c in cols)
    print("%-24s %-12s" % k + "".join(cells))
