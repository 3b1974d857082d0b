#!/usr/bin/env python3
"""Whether two PTX files assemble to the same SASS, kernel by kernel.

Usage: same_sass.py OLD.ptx NEW.ptx [PTXAS_DIR]

Each file goes through `ptxas -arch=sm_90` and `cuobjdump -sass` (from PTXAS_DIR, default the
CUDA 13 wheel that scripts/setup.sh lays out in .tools/); a kernel's SASS is its instructions
with their encodings, the address comments and the `.headerflags` line (which records the
PTX's `.target`) left out. Prints one line per kernel of OLD that differs or is missing in
NEW, the kernels NEW adds, and a summary; exits 1 when any kernel of OLD differs.
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path


def sass(ptx: Path, bin_dir: Path) -> dict[str, list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        subprocess.run(
            [bin_dir / "ptxas", "-arch=sm_90", ptx, "-o", cubin], check=True
        )
        text = subprocess.run(
            [bin_dir / "cuobjdump", "-sass", cubin],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    kernels: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        named = re.match(r"\s+Function : (\S+)", line)
        if named:
            current = kernels.setdefault(named.group(1), [])
        elif current is not None and "headerflags" not in line:
            current.append(re.sub(r"/\*[0-9a-f]{4,}\*/", "", line).strip())
    return kernels


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    old_ptx, new_ptx = Path(sys.argv[1]), Path(sys.argv[2])
    root = Path(__file__).resolve().parents[2]
    bin_dir = Path(sys.argv[3]) if len(sys.argv) == 4 else root / ".tools/cuda/nvidia/cu13/bin"
    old, new = sass(old_ptx, bin_dir), sass(new_ptx, bin_dir)
    differ = [k for k in old if k in new and old[k] != new[k]]
    missing = [k for k in old if k not in new]
    added = [k for k in new if k not in old]
    for k in differ:
        print(f"differs: {k}")
    for k in missing:
        print(f"missing: {k}")
    for k in added:
        print(f"added: {k}")
    same = len(old) - len(differ) - len(missing)
    print(f"{same} of {len(old)} kernels the same SASS; {len(added)} added")
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
