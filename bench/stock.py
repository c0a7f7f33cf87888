#!/usr/bin/env python3
"""Times the stock `assimp info FILE -r` on an original file (through the
preload module) against the same on its .glb, for bench/run.sh.  -r (a raw
import, no post-processing) on both: Assimp 5.2.5's post-processing refuses
any glTF file without meshes ("No materials remaining", fixed in 5.4), so
`assimp info` without it cannot read an animation-only .glb at all.

usage: stock.py ASSIMP PRELOAD_SO FILE GLB RUNS

Runs the two commands RUNS times each, alternating (so both see the same
host state), and prints one line of key=value pairs: the median wall
seconds of each, their ratio, and each side's largest resident set (MB)."""
import os
import statistics
import subprocess
import sys
import time


def run(cmd, env):
    """Wall seconds and the peak resident set (KiB) of one run of cmd."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = p.communicate()
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"stock.py: {' '.join(cmd)} failed ({p.returncode}): {err.decode(errors='replace')[-400:]}")
    return wall


def rss_of(cmd, env):
    """The child's peak resident set in KiB (wait4's rusage is this child's
    own; RUSAGE_CHILDREN would be the largest of all the children so far)."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"stock.py: {' '.join(cmd)} failed (status {status})")
    return ru.ru_maxrss


def main():
    assimp, preload, f, glb, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    ours_env = dict(os.environ, LD_PRELOAD=preload)
    glb_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    ours_cmd, glb_cmd = [assimp, "info", f, "-r"], [assimp, "info", glb, "-r"]
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(run(ours_cmd, ours_env))
        theirs.append(run(glb_cmd, glb_env))
    o, g = statistics.median(ours), statistics.median(theirs)
    orss, grss = rss_of(ours_cmd, ours_env), rss_of(glb_cmd, glb_env)
    print(f"ours_s={o:.3f} glb_s={g:.3f} ratio={o / g:.3f} ours_rss_mb={orss / 1024:.1f} glb_rss_mb={grss / 1024:.1f}"
          f" runs={runs}")


if __name__ == "__main__":
    main()
