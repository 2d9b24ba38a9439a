"""A job's command for `jobstore work`: standard library only.

Reads the job's params (JSON) on stdin, reports progress on stdout, leaves
its result in the job directory, and exits 0 (or the status the params ask
for).
"""
import json
import os
import sys

params = json.load(sys.stdin)
job_dir = os.environ["JOBSTORE_JOB_DIR"]
total = 0
for i, n in enumerate(params["numbers"], 1):
    total += n
    print("progress %.3f added %d" % (i / len(params["numbers"]), n), flush=True)
with open(os.path.join(job_dir, "result.json"), "w", encoding="utf-8") as fh:
    json.dump({"job_id": os.environ["JOBSTORE_JOB_ID"], "sum": total}, fh)
print("a line on stderr", file=sys.stderr)
sys.exit(params.get("exit", 0))
