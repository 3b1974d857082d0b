"""The peers table: timing statistics, result rows, the JSON document and the text table.

Pure Python (no torch), so the schema and the formatting are tested on a machine without a GPU.
"""

import json
import os
import statistics

# The lab's Rust kernels, timed in the same rotation with --lab: columns before the peers',
# never a peer.
from lab_kernels import IMPLEMENTATIONS as LAB

SCHEMA_VERSION = 1
TOOL = "gpu/rows/peers.py"
# The peers, in the text table's column order; "copy" is the ceiling every row is divided by.
IMPLEMENTATIONS = ("eager", "compile", "liger", "triton")
COPY = "copy"
# A tensor smaller than this many L2s is partly served from L2 between runs (the copy too).
L2_MULTIPLE = 4

ROW_KEYS = (
    "op", "rows", "cols", "dtype", "implementation",
    "median_us", "min_us", "p10_us", "p90_us", "max_us", "runs", "host_us", "first_call_ms",
    "bytes", "gbps", "x_copy", "max_err", "ok", "error",
)  # fmt: skip


# Decimals kept in the JSON: CUDA events resolve about 0.5 us.
ROUNDING = {
    "median_us": 2,
    "min_us": 2,
    "p10_us": 2,
    "p90_us": 2,
    "max_us": 2,
    "host_us": 1,
    "first_call_ms": 1,
    "gbps": 1,
    "x_copy": 4,
}


def spread(times_us):
    """Median, min, 10th and 90th percentile and max of one implementation's timed runs."""
    if len(times_us) < 2:
        raise ValueError(f"need at least 2 timed runs, got {len(times_us)}")
    deciles = statistics.quantiles(times_us, n=10, method="inclusive")
    return {
        "median_us": statistics.median(times_us),
        "min_us": min(times_us),
        "p10_us": deciles[0],
        "p90_us": deciles[-1],
        "max_us": max(times_us),
    }


def gbps(nbytes, median_us):
    return nbytes / median_us / 1e3


def row(
    case, implementation, nbytes, times_us=None, host_us=None, first_call_ms=None, max_err=None, error=None
):
    """One result row. A row with an error has no times; finish_case fills in x_copy."""
    r = dict.fromkeys(ROW_KEYS)
    r.update(case)
    r.update(
        implementation=implementation,
        bytes=nbytes,
        first_call_ms=first_call_ms,
        max_err=max_err,
        ok=error is None,
        error=error,
    )
    if error is None:
        r.update(spread(times_us))
        r["runs"] = len(times_us)
        r["host_us"] = statistics.median(host_us)
        r["gbps"] = gbps(nbytes, r["median_us"])
    return r


def finish_case(rows):
    """Fill in x_copy (GB/s over the GB/s of the copy timed in the same rotation) and round
    every number to what the measurement resolves."""
    copy = next((r for r in rows if r["implementation"] == COPY and r["ok"]), None)
    for r in rows:
        if r["ok"] and copy is not None:
            r["x_copy"] = r["gbps"] / copy["gbps"]
    for r in rows:
        for k, digits in ROUNDING.items():
            if r[k] is not None:
                r[k] = round(r[k], digits)
        if r["max_err"] is not None:
            r["max_err"] = float(f"{r['max_err']:.3g}")
    return rows


def document(run, rows, complete):
    """The results document: the run's facts (date, command_line, device, versions, config,
    elapsed_s), whether every case was measured, then the rows."""
    return {"schema_version": SCHEMA_VERSION, "tool": TOOL, **run, "complete": complete, "rows": rows}


def write_json(path, doc):
    """Write the whole document to path at once (a reader never sees half a file)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def best_peer(group):
    """The peer that passed with the shortest median (the same bytes for every peer of a case),
    or None."""
    ok = [r for r in group if r["ok"] and r["implementation"] in IMPLEMENTATIONS]
    return min(ok, key=lambda r: r["median_us"])["implementation"] if ok else None


def _groups(rows):
    """Rows grouped by (op, rows, cols, dtype), in first-seen order."""
    groups = {}
    for r in rows:
        groups.setdefault((r["op"], r["rows"], r["cols"], r["dtype"]), []).append(r)
    return groups


def text_table(doc):
    """Op x shape x dtype, a column per implementation: GB/s and x copy, the best peer starred."""
    rows, device, versions = doc["rows"], doc["device"], doc["versions"]
    impls = [i for i in (*LAB, *IMPLEMENTATIONS) if any(r["implementation"] == i for r in rows)]
    l2 = device.get("l2_bytes")
    spin_us = doc["config"].get("spin_us")
    clean = doc["config"].get("l2") == "clean"
    lines = [
        f"peers: {device.get('name')}, driver {device.get('driver_version')}, torch {versions.get('torch')}, "
        f"triton {versions.get('triton')}, liger {versions.get('liger')}; {doc.get('date')}",
        "each cell: GB/s (one read + one write of the tensor) and x the D2D copy of the same "
        "tensor in the same rotation; * = best peer"
        + ("; L2 clean at each launch (--l2 clean)" if clean else ""),
    ]
    table = [["op", "rows x cols", "dtype", "copy GB/s", *impls, "best peer"]]
    errors = []
    small = False
    for (op, nrows, ncols, dtype), group in _groups(rows).items():
        by_impl = {r["implementation"]: r for r in group}
        best = best_peer(group)
        copy = by_impl.get(COPY)
        tensor_bytes = copy["bytes"] // 2 if copy else None
        mark = ""
        if l2 and not clean and tensor_bytes is not None and tensor_bytes < L2_MULTIPLE * l2:
            mark, small = " +", True
        cells = [op, f"{nrows} x {ncols}{mark}", dtype, _gbps_cell(copy)]
        for impl in impls:
            r = by_impl.get(impl)
            if r is None:
                cells.append("-")
            elif not r["ok"]:
                cells.append("error")
                errors.append(f"  {impl} {op} {nrows}x{ncols} {dtype}: {r['error']}")
            else:
                cells.append(f"{r['gbps']:.0f} {_ratio(r)}{'*' if impl == best else ' '}")
        cells.append(f"{_ratio(by_impl[best])} {best}" if best else "-")
        table.append(cells)
    lines += _align(table, text=(0, 1, 2, -1))  # op, shape, dtype, best peer
    if small:
        lines.append(
            f"+ tensor under {L2_MULTIPLE}x the L2 ({l2 / 2**20:.0f} MiB): part of it is "
            "served from L2 between runs, for the copy as for the peers"
        )
    slow_host = [r for r in rows if r["ok"] and spin_us and r["host_us"] > spin_us]
    for r in slow_host:
        lines.append(
            f"warning: {r['implementation']} {r['op']} {r['rows']}x{r['cols']} {r['dtype']}: "
            f"host {r['host_us']:.0f} us per call > the {spin_us:.0f} us GPU spin: "
            "its time may include launch gaps"
        )
    lines += _fit_lines(rows)
    if errors:
        lines.append("errors:")
        lines += errors
    return "\n".join(lines)


# The fewest row counts a fixed cost and a rate are fitted over (two points always fit a line).
FIT_MIN_POINTS = 3


def fixed_and_rate(rows):
    """Each implementation's median time as a fixed cost a launch plus its bytes over a rate,
    fitted by least squares over the row counts of one (op, cols, dtype) it ran at, where there
    are at least FIT_MIN_POINTS: what separates two implementations is then a launch's start or
    tail (the fixed microseconds) or the stream (the rate), which one size cannot tell apart."""
    points = {}
    for r in rows:
        if r["ok"]:
            key = (r["op"], r["cols"], r["dtype"], r["implementation"])
            points.setdefault(key, {})[r["rows"]] = (r["bytes"], r["median_us"])
    fits = []
    for (op, cols, dtype, impl), by_rows in points.items():
        if len(by_rows) < FIT_MIN_POINTS:
            continue
        nbytes, us = zip(*by_rows.values())
        line = statistics.linear_regression(nbytes, us)
        fits.append(
            {
                "op": op,
                "cols": cols,
                "dtype": dtype,
                "implementation": impl,
                "row_counts": sorted(by_rows),
                "fixed_us": line.intercept,
                "rate_gbps": 1 / line.slope / 1e3 if line.slope > 0 else None,
            }
        )
    return fits


def _fit_lines(rows):
    """The fits as a table under the peers' table, or nothing where no case has enough."""
    fits = fixed_and_rate(rows)
    if not fits:
        return []
    table = [["op", "cols", "dtype", "implementation", "row counts", "fixed us", "rate GB/s"]]
    for f in fits:
        rate = "-" if f["rate_gbps"] is None else f"{f['rate_gbps']:.0f}"
        counts = f"{len(f['row_counts'])} ({f['row_counts'][0]}-{f['row_counts'][-1]})"
        table.append(
            [f["op"], str(f["cols"]), f["dtype"], f["implementation"], counts, f"{f['fixed_us']:.2f}", rate]
        )
    return [
        "fixed cost and rate (median us = fixed + bytes / rate, least squares over the row counts "
        f"of each op x cols x dtype measured at {FIT_MIN_POINTS} or more; fixed: what a launch costs "
        "beyond its bytes, its start and tail, and near the L2's size what the L2 serves):",
        *_align(table, text=(0, 1, 2, 3)),
    ]


def _ratio(r):
    return "-" if r["x_copy"] is None else f"{r['x_copy']:.2f}"


def _gbps_cell(r):
    if r is None:
        return "-"
    return f"{r['gbps']:.0f}" if r["ok"] else "error"


def _align(table, text):
    """Left-align the text columns (their indexes in `text`, -1 the last), right-align the
    numbers."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    text = {i % len(widths) for i in text}
    out = []
    for row in table:
        cells = [c.ljust(w) if i in text else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.append("  ".join(cells).rstrip())
    return out
