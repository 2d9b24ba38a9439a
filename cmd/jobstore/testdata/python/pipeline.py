"""Submit jobs, run them with `jobstore work`, read how they ended.

Standard library only. Usage: python3 pipeline.py JOBSTORE ROOT JOB_PY
Submits two jobs by writing their records as docs/format.md says, runs
`JOBSTORE work ROOT --until-empty -- python3 JOB_PY`, then prints one JSON
line per job: its state, exit code, result and output.
"""
import datetime
import json
import os
import random
import subprocess
import sys


def publish(path, record, replace):
    """Write record to path whole: a temp file in the same directory, fsynced,
    then linked (write-once records) or renamed over the target."""
    directory, name = os.path.split(path)
    data = (json.dumps(record, indent=2) + "\n").encode("utf-8")
    temp = os.path.join(directory, ".%s%d" % (name, random.randrange(10**18)))
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    if replace:
        os.replace(temp, path)
    else:
        try:
            os.link(temp, path)
        finally:
            os.unlink(temp)
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def submit(root, job_id, kind, params):
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")
    job_dir = os.path.join(root, job_id)
    os.makedirs(job_dir)
    publish(os.path.join(job_dir, "job.json"),
            {"schema_version": 1, "job_id": job_id, "kind": kind, "params": params, "submitted_at": now}, False)
    # status.json last: a worker starts a job only once it says queued.
    publish(os.path.join(job_dir, "status.json"),
            {"schema_version": 1, "job_id": job_id, "state": "queued", "seq": 1, "updated_at": now}, True)
    return job_dir


def read(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def main():
    jobstore, root, job_py = sys.argv[1:4]
    os.makedirs(root, exist_ok=True)
    dirs = [
        submit(root, "sum-ok", "sum", {"numbers": [1, 2, 3, 4]}),
        submit(root, "sum-fails", "sum", {"numbers": [5], "exit": 3}),
    ]
    # The worker's own lines go to stderr: this program's output is its report.
    # --until-empty exits 1 when a job it ran did not succeed: sum-fails.
    worker = subprocess.run([jobstore, "work", root, "--until-empty", "--", sys.executable, job_py],
                            stdout=sys.stderr)
    if worker.returncode != 1:
        raise SystemExit(f"jobstore work exited {worker.returncode}, not 1")
    for job_dir in dirs:
        status = json.loads(read(os.path.join(job_dir, "status.json")))
        result = read(os.path.join(job_dir, "result.json"))
        print(json.dumps({
            "job_id": status["job_id"],
            "state": status["state"],
            "exit_code": status.get("exit_code"),
            "progress": status.get("progress"),
            "message": status.get("message", ""),
            "result": json.loads(result) if result else None,
            "stdout": read(os.path.join(job_dir, "stdout.log")),
            "stderr": read(os.path.join(job_dir, "stderr.log")),
        }), flush=True)


if __name__ == "__main__":
    main()
