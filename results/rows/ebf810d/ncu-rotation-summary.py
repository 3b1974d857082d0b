"""Median of each kernel's launches in ncu's CSV (--csv --metrics …): time, DRAM bytes, L2 hit rate, warps active."""
import csv, collections, gzip, statistics, sys
for f in sys.argv[1:]:
    lines = [l for l in gzip.open(f, "rt") if l.startswith('"')]
    rows = list(csv.reader(lines))
    hdr, data = rows[0], rows[1:]
    k, m, v, i = (hdr.index(h) for h in ("Kernel Name", "Metric Name", "Metric Value", "ID"))
    per = collections.defaultdict(lambda: collections.defaultdict(dict))
    for r in data:
        per[r[k]][r[i]][r[m]] = float(r[v].replace(",", ""))
    print(f"== {f}")
    for name, launches in per.items():
        med = lambda metric: statistics.median(x[metric] for x in launches.values() if metric in x)
        print(f"{name[:44]:44} launches {len(launches):3}  time {med('gpu__time_duration.sum') / 1e3:.2f} us  "
              f"DRAM read {med('dram__bytes_read.sum') / 1e6:.1f} MB  write {med('dram__bytes_write.sum') / 1e6:.1f} MB  "
              f"L2 hit {med('lts__t_sector_hit_rate.pct'):.1f} %  warps active {med('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f} %")
