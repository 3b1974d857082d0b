"""Writes dist/exp/rows-threads-x2.json and -x4.json (call 24): 742a196's rows file with the
block launches at 32768 x 1024 f32 and 16384 x 4096 (both types) given 2 and 4 times their
threads (up to 1024). Run from the repo root after `cargo xtask dist`."""
import json

SRC = "results/rows/742a196/rows-nvidia-h200-custom-20261204T141418Z.json"
CASES = {(32768, 1024, "f32"), (16384, 4096, "f32"), (16384, 4096, "bf16")}
for mult in (2, 4):
    doc = json.load(open(SRC))
    for r in doc["rows"]:
        if r.get("chosen") and r["schedule"] == "block" and (r["rows"], r["cols"], r["dtype"]) in CASES:
            r["launch"]["threads"] = min(r["launch"]["threads"] * mult, 1024)
    json.dump(doc, open(f"dist/exp/rows-threads-x{mult}.json", "w"))
