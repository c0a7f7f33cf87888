#!/usr/bin/env python3
"""Turns bench/run.sh's raw lines (key=value pairs) into bench/RESULTS.md.

usage: report.py RESULTS_TXT RUNS QUICK"""
import platform
import re
import subprocess
import sys
import time

# the import time targets (ours / .glb): World of Goo and NIFF run the game's
# playback rules over every frame, the others read keys the consumer can use
RATIO_TARGET = {"wog": 2.0, "niff": 2.0}


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


WRITERS = []
STOCK = []


def parse(path):
    rows, batch = [], None
    for line in open(path):
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        if line.startswith("batch"):
            batch = kv
        elif line.startswith("writer"):
            WRITERS.append(kv)
        elif line.startswith("stock"):
            STOCK.append(kv)
        elif "format" in kv:
            rows.append(kv)
    return rows, batch


def f(x, nd=1):
    v = float(x)
    return "n/a" if v != v else f"{v:,.{nd}f}"  # nan: no .glb to compare with


def mark(ok):
    return "yes" if ok else "**no**"


def main():
    rows, batch = parse(sys.argv[1])
    runs, quick = sys.argv[2], sys.argv[3] == "1"
    out = []
    w = out.append
    w("# Benchmark results")
    w("")
    w("Written by `bash bench/run.sh`" + (" --quick (1x sizes, 2 runs: a smoke run, not the figures)" if quick else "") +
      f" on {time.strftime('%Y-%m-%d')}. Every time is the median of {runs} runs. Each Assimp import runs"
      " in a child process forked before anything large is allocated (a fresh heap, as a program that"
      " imports one file has), ours and the `.glb`'s alternating, so the ratio compares the same machine"
      " state; the C loads (read, to_scene) run in the parent, one after another. Loads bake on every core"
      " (the option `threads`, automatic). Where the time goes, before and after the changes of issue 31:"
      " [PROFILES.md](PROFILES.md).")
    w("")
    w("## Machine")
    w("")
    cpu = sh("lscpu | sed -n 's/^Model name: *//p'") or platform.processor()
    mem = sh("free -g | awk '/Mem/{print $2}'")
    assimp = sh("dpkg-query -W -f='${Version}' libassimp5 2>/dev/null")
    w(f"- CPU: {cpu}, {sh('nproc')} cores; {mem} GiB")
    w(f"- {sh('uname -sr')}; {sh('gcc --version | head -1')}; Assimp {assimp}")
    w("- Release build (`-O3`), in `build-bench/`")
    w("")
    w("## Commands")
    w("")
    w("```")
    w("bash bench/run.sh                       # everything below")
    w("build-bench/bench_gen FORMAT NODES KEYS OUT   # an input, with our writers")
    w("build-bench/retroanim convert OUT OUT.glb     # the glTF to compare with")
    w("build-bench/bench_run --runs N OUT OUT.glb    # one line of figures")
    w("build-bench/retroanim batch DIR OUT --format glb2 -j 1|2")
    w("LD_PRELOAD=build-bench/libretroanim_preload.so assimp info OUT -r   # the stock tool")
    w("```")
    w("")
    w("Columns: **read** = `ra_document_read` (the format model) in MB/s of file; **keys/s** = scene keys per second"
      " of the whole C load (`ra_document_load`: read + to_scene + checks); **to_scene** = load − read;"
      " **ours** = `Assimp::Importer::ReadFile` on the original file through our importer (the C load, then"
      " the `aiScene` filled with the key density inserted on the way); **glb** ="
      " `ReadFile` on the `.glb` that `retroanim convert` made of it (Assimp's glTF 2 importer);"
      " **ratio** = ours / glb (target <= 1.0; <= 2.0 for World of Goo and NIFF, whose import runs the"
      " game's playback rules over every frame); **peak/scene** = the heap's high-water mark during"
      " our `ReadFile` (every allocation of the process, the file buffer included) over the bytes of the"
      " `aiScene` it returned (target <= 2).")
    w("")
    big = [r for r in rows if r["scale"] == ("1" if quick else "16")]
    w("## The large files" + (" (1x in this quick run)" if quick else " (the issue's sizes)"))
    w("")
    w("| format | nodes x keys | file MB | scene keys | read MB/s | keys/s (C load) | to_scene ms | ours ms | glb ms | ratio | peak/scene |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in big:
        w(f"| {r['format']} | {r['nodes']} x {r['keys_per_track']} | {f(int(r['bytes']) / 1e6)} | {int(r['keys']):,} |"
          f" {f(r['read_mbs'], 0)} | {float(r['load_keys_per_s']):,.3g} | {f(r['to_scene_ms'])} | {f(r['ours_ms'])} |"
          f" {f(r['glb_ms'])} | {f(r['ratio'], 2)} | {f(r['peak_ratio'], 2)} |")
    w("")
    w("Targets on these files:")
    w("")
    w("| format | ratio <= target | read >= 500 MB/s | peak <= 2x scene |")
    w("|---|---|---|---|")
    for r in big:
        t = RATIO_TARGET.get(r["format"], 1.0)
        w(f"| {r['format']} | {mark(float(r['ratio']) <= t)} ({f(r['ratio'], 2)} for {t:.1f}) |"
          f" {mark(float(r['read_mbs']) >= 500)} ({f(r['read_mbs'], 0)}) |"
          f" {mark(float(r['peak_ratio']) <= 2)} ({f(r['peak_ratio'], 2)}) |")
    w("")
    if not quick:
        w("## Growth")
        w("")
        w("The same generator at 1x (nodes/4 x keys/4), 4x (nodes/2 x keys/2) and 16x the size. Linear cost means a"
          " constant time per key: the last column is the 16x time per key over the 1x time per key (1.0 = linear)."
          " A load with less than 200,000 keys of work bakes on one thread (the automatic threshold), a larger one"
          " on both cores, so the time per key falls with size where a file crosses it.")
        w("")
        w("| format | C load ms 1x / 4x / 16x | ours ms 1x / 4x / 16x | ns per key 1x / 4x / 16x (C load) | 16x / 1x per key |")
        w("|---|---|---|---|---|")
        by = {}
        for r in rows:
            by.setdefault(r["format"], {})[r["scale"]] = r
        for fmt, s in by.items():
            if not all(k in s for k in ("1", "4", "16")):
                continue
            per = [float(s[k]["load_ms"]) * 1e6 / max(1, int(s[k]["keys"])) for k in ("1", "4", "16")]
            w(f"| {fmt} | {' / '.join(f(s[k]['load_ms']) for k in ('1', '4', '16'))} |"
              f" {' / '.join(f(s[k]['ours_ms']) for k in ('1', '4', '16'))} |"
              f" {' / '.join(f(p, 0) for p in per)} | {f(per[2] / per[0], 2)} |")
        w("")
    if STOCK:
        w("")
        w("## Through the stock `assimp` tool")
        w("")
        w("Debian's `assimp info FILE -r` on the largest file of each format through the preload module"
          " (`LD_PRELOAD=build-bench/libretroanim_preload.so`), against the same command on the file's `.glb`:"
          f" median wall seconds of {STOCK[0].get('runs', runs)} runs of each, alternating, and the largest peak resident"
          " set of those runs (the whole process: Assimp, the file, the scene). `-r` (no post-processing) on"
          " both sides: Assimp 5.2.5's post-processing refuses every glTF file without meshes (\"No materials"
          " remaining\", fixed in Assimp 5.4), so plain `assimp info` cannot read an animation-only `.glb`.")
        w("")
        w("| format | scale | ours s | .glb s | ratio | ours peak RSS MB | .glb peak RSS MB |")
        w("|---|---|---|---|---|---|---|")
        for r in STOCK:
            w(f"| {r['format']} | {r['scale']}x | {f(r['ours_s'], 2)} | {f(r['glb_s'], 2)} | {f(r['ratio'], 2)} |"
              f" {f(r['ours_rss_mb'], 0)} | {f(r['glb_rss_mb'], 0)} |")
        w("")
    if WRITERS:
        w("")
        w("## Writers: `convert` to .glb against `convert` to .assbin")
        w("")
        w("retroanim's own glTF writer (`convert F out.glb`) against Assimp's cheapest exporter"
          " (`convert F out.assbin`) on the largest file of each format, median of 3 runs each; both include"
          " the import. Target: .glb at most 1.5x the .assbin time. Throughput: the .glb's bytes over the"
          " whole conversion.")
        w("")
        w("| format | scale | .glb MB | .glb s | .assbin s | ratio | .glb MB/s | .fbx MB | .fbx s | .fbx MB/s |")
        w("|---|---|---|---|---|---|---|---|---|---|")
        for r in WRITERS:
            mb = int(r["glb_bytes"]) / 1e6
            g, a = float(r["glb_s"]), float(r["assbin_s"])
            fb = int(r.get("fbx_bytes", 0)) / 1e6
            fs = float(r.get("fbx_s", "nan"))
            w(f"| {r['format']} | {r['scale']}x | {mb:.1f} | {g:.2f} | {a:.2f} | {g / a:.2f} ({mark(g / a <= 1.5)}) |"
              f" {mb / g:.0f} | {fb:,.0f} | {f(fs, 1)} | {f(fb / fs, 0)} |")
        w("")
        w("The `.fbx` column is one run of `convert F out.fbx` (retroanim's FBX writer, default settings). FBX"
          " holds rotations as Euler angles, and Blender plays them by interpolating the angles linearly, which"
          " departs from slerp with the square of the angle between keys: the writer adds keys on the slerp path"
          " until that error, times the scene's lever sum, stays within 2.5e-5. On these generated scenes (random"
          " turns between keys, lever sums in the hundreds) that makes the .fbx 1.4 to 30 times the .glb's size"
          " (its key times are deflated, its values raw float32; a file past 4 GiB is written as FBX 7.5 after"
          " a first attempt as 7.4);"
          " `--fbx-euler-tolerance DEG` trades Blender's accuracy for size (players that slerp between keys,"
          " Assimp and three.js, play any tolerance exactly).")
        w("")
    if batch:
        w("## Batch conversion")
        w("")
        w(f"`retroanim batch` over 1,000 small files (200 per format, plus the 200 Metroid skeletons beside them),"
          f" to `.glb`; median of 5 wall-clock runs of each, -j1 and -j2 alternating.")
        w("")
        w("| files written | -j1 s | -j2 s | speedup (target >= 1.7) | cores busy -j1 / -j2 |")
        w("|---|---|---|---|---|")
        w(f"| {batch['files']} | {f(batch['j1_s'], 2)} | {f(batch['j2_s'], 2)} | {f(batch['speedup'], 2)}"
          f" ({mark(float(batch['speedup']) >= 1.7)}) | {batch.get('j1_cores', 'n/a')} / {batch.get('j2_cores', 'n/a')} |")
        w("")
        w("Cores busy = (user + system CPU seconds) / wall seconds of that run: how much of the two cores the"
          " batch kept working. On this shared virtual machine the wall time of the same run varies by up to 40%"
          " (system time spent in page faults grows when the host is busy), so a speedup below 1.7 with -j2"
          " near 2 cores busy is the host, not the batch.")
        w("")
    w("## Raw lines")
    w("")
    w("```")
    w(open(sys.argv[1]).read().rstrip())
    w("```")
    print("\n".join(out))


if __name__ == "__main__":
    main()
