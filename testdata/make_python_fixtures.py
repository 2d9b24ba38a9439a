#!/usr/bin/env python3
"""Write job.python.json and status.python.json the way Python tools do.

Plain json.dump(obj, fh, indent=2): ASCII escapes for non-ASCII text, ","
and ": " separators, no trailing newline; timestamps from
datetime.isoformat() in the forms Python writes them: UTC with
microseconds, a whole second (isoformat then leaves out the fraction), an
offset other than UTC, and a naive datetime (no offset, meaning UTC).

The Go tests read these files and compare every field with the values
below (recordjson_golden_test.go, TestPythonFixtures_ReadBackExactly). Run it again
only if the fixtures must change:

    python3 testdata/make_python_fixtures.py [output directory]

The output is deterministic; TestPythonFixtures_MatchTheScript checks that
the committed files are what this script writes.
"""

import json
import os
import sys
from datetime import datetime, timedelta, timezone

IST = timezone(timedelta(hours=5, minutes=30))

JOB = {
    "schema_version": 1,
    "job_id": "py-job-1",
    "kind": "render",
    "params": {"frames": [1, 2, 3], "scene": "caf\u00e9 <night> & day", "scale": 0.5},
    "submitted_at": datetime(2026, 11, 30, 15, 5, 40, 123456, tzinfo=IST).isoformat(),
    "submitted_by": "ana@qgis",
    "labels": {"team": "vfx", "\u00e9quipe": "\u2713"},
}

STATUS = {
    "schema_version": 1,
    "job_id": "py-job-1",
    "state": "failed",
    "seq": 42,
    "progress": 0.75,
    "message": "frame 3/4 \u2014 na\u00efve <ok> & \"done\"",
    "updated_at": datetime(2026, 11, 30, 9, 35, 40, 123456, tzinfo=timezone.utc).isoformat(),
    "started_at": datetime(2026, 11, 30, 9, 30, 0, tzinfo=timezone.utc).isoformat(),
    "finished_at": datetime(2026, 11, 30, 9, 35, 40, 5).isoformat(),
    "pid": 31337,
    "host": "render-node-7",
    "exit_code": 3,
    "error": "out of memory",
    "remedy": "give the job more memory",
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, obj in (("job.python.json", JOB), ("status.python.json", STATUS)):
        with open(os.path.join(out, name), "w", encoding="ascii", newline="\n") as fh:
            json.dump(obj, fh, indent=2)


if __name__ == "__main__":
    main()
