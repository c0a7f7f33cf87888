# The job loop both Blender samplers share (blender_sample.py for glTF,
# blender_fbx_sample.py for FBX): read JOBS.json (the arguments after "--"),
# play each job with the sampler's play(job), write OUT.json; a job that
# raises is reported with its traceback instead of ending the run.
import json
import sys
import traceback


def run_jobs(play):
    argv = sys.argv[sys.argv.index("--") + 1:]
    jobs = json.load(open(argv[0]))
    results = []
    for job in jobs:
        try:
            results.append(play(job))
        except Exception:
            results.append({"file": job["file"], "error": traceback.format_exc(), "anims": []})
    with open(argv[1], "w") as f:
        json.dump(results, f)
