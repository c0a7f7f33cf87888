#!/usr/bin/env python3
"""Times the stock `assimp info FILE -r` on an original file (through the
preload module) against the same on its .glb, for bench/run.sh.  -r (a raw
import, no post-processing) on both: Assimp 5.2.5's post-processing refuses
any glTF file without meshes ("No materials remaining", fixed in 5.4), so
`assimp info` without it cannot read an animation-only .glb at all.

usage: stock.py ASSIMP PRELOAD_SO FILE GLB RUNS

Runs the two commands RUNS times each, alternating (so both see the same
host state), and prints one line of key=value pairs: the median wall
seconds of each, their ratio, and each side's largest peak resident set
over its runs (MB)."""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, env):
    """Wall seconds and peak resident set (KiB) of one run of cmd (wait4's
    rusage is this child's own; RUSAGE_CHILDREN would be the largest of all
    the children so far)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        if status != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-400:]
            sys.exit(f"stock.py: {' '.join(cmd)} failed (wait status {status}): {tail}")
    return wall, ru.ru_maxrss


def main():
    assimp, preload, f, glb, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    ours_env = dict(os.environ, LD_PRELOAD=preload)
    glb_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    ours_cmd, glb_cmd = [assimp, "info", f, "-r"], [assimp, "info", glb, "-r"]
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(run(ours_cmd, ours_env))
        theirs.append(run(glb_cmd, glb_env))
    o, g = statistics.median(w for w, _ in ours), statistics.median(w for w, _ in theirs)
    orss, grss = max(m for _, m in ours), max(m for _, m in theirs)
    print(f"ours_s={o:.3f} glb_s={g:.3f} ratio={o / g:.3f} ours_rss_mb={orss / 1024:.1f} glb_rss_mb={grss / 1024:.1f}"
          f" runs={runs}")


if __name__ == "__main__":
    main()
