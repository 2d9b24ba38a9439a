"""Tests of jobstore.py, standard library only:

    python3 -m unittest discover -s python -v

They read the Go library's fixtures (testdata/ at the repository's top) and
its errors.go, so that the two agree on records and error codes. The tests
against the Go library itself are in python_interop_test.go.
"""

import ast
import errno
import json
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jobstore  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.path.join(REPO, "testdata")
POSIX = os.name == "posix"


# WAIT_NEVER_ANSWERS bounds a wait that should end at once: a wait that
# would never end raises Timeout after it instead of hanging the tests.
WAIT_NEVER_ANSWERS = 3.0


def fixture(name):
    with open(os.path.join(TESTDATA, name), "rb") as fh:
        return fh.read()


class Case(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="jobstore-py-")
        self.addCleanup(self._rmtree)
        self.root = os.path.join(self.tmp, "jobs")

    def _rmtree(self):
        def writable(func, path, _):
            os.chmod(path, stat.S_IWRITE | stat.S_IREAD | stat.S_IEXEC)
            func(path)
        shutil.rmtree(self.tmp, onerror=writable)

    def job(self, job_id="j1", status=None, spec=None):
        """A job directory with job.json (the golden one, or spec bytes) and
        status bytes, if any, written directly."""
        d = os.path.join(self.root, job_id)
        os.makedirs(d)
        data = spec if spec is not None else fixture("job.golden.json").replace(b'"j1"', json.dumps(job_id).encode())
        with open(os.path.join(d, "job.json"), "wb") as fh:
            fh.write(data)
        if status is not None:
            self.put(d, "status.json", status)
        return d

    def put(self, d, name, data):
        if isinstance(data, dict):
            data = json.dumps(data).encode()
        with open(os.path.join(d, name), "wb") as fh:
            fh.write(data)

    def no_temp_left(self, d):
        for dirpath, dirnames, filenames in os.walk(d):
            for n in filenames:
                self.assertFalse(jobstore.is_temp_name(n), os.path.join(dirpath, n))


def status(**kw):
    st = {"schema_version": 1, "job_id": "j1", "state": "running", "seq": 2,
          "updated_at": "2026-11-30T09:35:40.123456+00:00"}
    st.update(kw)
    return st


class Module(Case):
    def test_parses_as_python_3_8(self):
        with open(jobstore.__file__, encoding="utf-8") as fh:
            ast.parse(fh.read(), feature_version=(3, 8))

    def test_version_is_the_packages(self):
        with open(os.path.join(os.path.dirname(jobstore.__file__), "pyproject.toml"), encoding="utf-8") as fh:
            version = re.search(r'(?m)^version = "([^"]+)"', fh.read()).group(1)
        self.assertEqual(version, jobstore.__version__)

    def test_standard_library_only(self):
        with open(jobstore.__file__, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        stdlib = {"datetime", "errno", "fcntl", "json", "os", "random", "re", "secrets", "stat", "sys", "threading", "time"}
        self.assertLessEqual(imported, stdlib)


class ErrorCodes(Case):
    def test_every_go_sentinel_has_a_class_with_its_code(self):
        with open(os.path.join(REPO, "errors.go"), encoding="utf-8") as fh:
            src = fh.read()
        consts = dict(re.findall(r'\n\t(Code\w+)\s+Code = "(\w+)"', src))
        go = {name: consts[c] for name, c in re.findall(r'\n\t(Err\w+) error = &sentinel\{(Code\w+),', src)}
        self.assertIn("ErrNotOwner", go, "errors.go was not read as expected")
        ours = {cls.__name__: cls.code for cls in jobstore.JobstoreError.__subclasses__()}
        # Go's timeout is no sentinel: its error matches context.DeadlineExceeded.
        self.assertEqual(consts["CodeTimeout"], ours.pop("Timeout"))
        self.assertEqual({name[3:]: code for name, code in go.items()}, ours)
        self.assertEqual("io", jobstore.JobstoreError.code)

    def test_errors_match_the_standard_ones_they_stand_for(self):
        self.assertTrue(issubclass(jobstore.NotJob, FileNotFoundError))
        self.assertTrue(issubclass(jobstore.Exists, FileExistsError))
        self.assertTrue(issubclass(jobstore.Invalid, ValueError))

    def test_message_names_op_path_subject_and_remedy(self):
        e = jobstore.Invalid("is empty", op="submit", path="/r/j/job.json", subject="kind", remedy="pass a kind")
        self.assertEqual("jobstore: submit /r/j/job.json: kind: is empty. Remedy: pass a kind", str(e))


class JobIDs(Case):
    def test_new_ids_have_the_go_format_and_sort_by_time(self):
        ids = [jobstore.new_job_id() for _ in range(200)]
        for i in ids:
            self.assertRegex(i, r"^\d{8}T\d{6}\.\d{6}Z-[0-9a-hjkmnp-tv-z]{10}\Z")
            jobstore.validate_job_id(i)
        self.assertEqual(sorted(ids), ids)
        self.assertEqual(len(set(ids)), len(ids))

    def test_validate(self):
        good = ["a", "render-1", "A_b.c-d", "x" * 128, "20261130T093540.123456Z-7k2m9xq4ab", "console", "com10", "index.jsonx"]
        bad = ["", ".a", "-a", "a.", "a b", "a/b", "x" * 129, "CON", "aux.txt", "LPT9.log", "com0", "Index.JSON",
               "caf\u00e9", "a\n", None, 7]
        for i in good:
            with self.subTest(id=i):
                jobstore.validate_job_id(i)
        for i in bad:
            with self.subTest(id=i):
                with self.assertRaises(jobstore.Invalid) as cm:
                    jobstore.validate_job_id(i)
                self.assertEqual("job_id", cm.exception.subject)
                self.assertEqual("invalid", cm.exception.code)

    def test_validate_names_the_character_at_its_byte(self):
        # As Go's ValidateJobID: the whole character, at the byte where it starts.
        for job_id, want in (("caf\u00e9", "'\u00e9' at byte 3"), ("\u65e5x", "'\u65e5' at byte 0"), ("a\u00e9\u00e9", "'\u00e9' at byte 1")):
            with self.subTest(id=job_id):
                with self.assertRaises(jobstore.Invalid) as cm:
                    jobstore.validate_job_id(job_id)
                self.assertIn("has the character " + want, str(cm.exception))

    def test_temp_names(self):
        self.assertTrue(jobstore.is_temp_name(".status.json123"))
        self.assertTrue(jobstore.is_temp_name(".cancel.json9"))
        for n in ("status.json", ".status.json", ".status.jsonx1", ".other123"):
            self.assertFalse(jobstore.is_temp_name(n), n)


class Timestamps(Case):
    def test_forms_the_go_reader_accepts(self):
        cases = {
            "2026-11-30T09:35:40.123456+00:00": "2026-11-30T09:35:40.123456+00:00",
            "2026-11-30T09:35:40Z": "2026-11-30T09:35:40+00:00",
            "2026-11-30 09:35:40.123456789": "2026-11-30T09:35:40.123456+00:00",
            "2026-11-30T15:05:40.123456+05:30": "2026-11-30T09:35:40.123456+00:00",
            "0001-01-01T00:00:00+00:00": "0001-01-01T00:00:00+00:00",
        }
        for s, want in cases.items():
            with self.subTest(s=s):
                self.assertEqual(want, jobstore.parse_time(s).isoformat())

    def test_forms_it_refuses(self):
        for s in ("2026-02-30T00:00:00Z", "2026-11-30", "0001-01-01T00:00:00+01:00", "yesterday", "2026-11-30T09:35:40.Z", 5):
            with self.subTest(s=s):
                self.assertRaises(jobstore.Invalid, jobstore.parse_time, s)

    def test_now_is_the_written_form(self):
        self.assertRegex(jobstore.now(), r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00\Z")


class ReadStatus(Case):
    def test_absent_is_none_and_no_job_is_not_job(self):
        d = self.job()
        self.assertIsNone(jobstore.read_status(d))
        with self.assertRaises(jobstore.NotJob):
            jobstore.read_status(os.path.join(self.root, "missing"))
        empty = os.path.join(self.root, "empty")
        os.makedirs(empty)
        self.put(empty, "status.json", status(job_id="empty"))
        with self.assertRaises(jobstore.NotJob):
            jobstore.read_status(empty)

    def test_golden_and_python_fixtures(self):
        d = self.job(status=fixture("status.golden.json"))
        st = jobstore.read_status(d)
        self.assertEqual("failed", st["state"])
        self.assertEqual(42, st["seq"])
        self.assertEqual(0.75, st["progress"])
        self.assertEqual(3, st["exit_code"])
        self.assertEqual(dict(json.loads(fixture("status.golden.json")), schema_version=2), st, "version 1 is read as 2")
        p = self.job("py-job-1", status=fixture("status.python.json"), spec=fixture("job.python.json"))
        self.assertEqual("py-job-1", jobstore.read_spec(p)["job_id"])
        self.assertEqual(dict(json.loads(fixture("status.python.json")), schema_version=2), jobstore.read_status(p))

    def test_minimal_record_leaves_optional_fields_out(self):
        d = self.job(status=b'{"schema_version":1,"state":"queued","seq":1,"updated_at":"2026-11-30T09:35:40Z","pid":0,"message":null,"exit_code":0}')
        st = jobstore.read_status(d)
        self.assertEqual({"schema_version": 2, "job_id": "j1", "state": "queued", "seq": 1,
                          "updated_at": "2026-11-30T09:35:40Z", "exit_code": 0}, st)

    def test_newer_schema_names_both_versions(self):
        d = self.job(status=fixture("status.newer.json"))
        with self.assertRaises(jobstore.NewerSchema) as cm:
            jobstore.read_status(d)
        e = cm.exception
        self.assertEqual((3, 2), (e.found, e.supported))
        self.assertIn("schema_version 3", str(e))
        self.assertIn("understands up to 2", str(e))
        self.assertIn(os.path.join(d, "status.json"), str(e))
        self.assertEqual("newer_schema", e.code)

    def test_version_2_records_carry_retries_and_schedule(self):
        spec = json.loads(fixture("job.python.json"))
        spec.update(schema_version=2, max_attempts=5, backoff_ms=1000, not_before="2026-12-01T02:00:00+00:00", priority=3)
        st = {"schema_version": 2, "job_id": "py-job-1", "state": "queued", "seq": 4, "updated_at": "2026-11-30T09:35:40+00:00",
              "attempt": 2, "retry_at": "2026-11-30T09:36:00+00:00",
              "attempts": [{"attempt": 1, "state": "failed", "ended_at": "2026-11-30T09:35:40+00:00", "error": "exit 2"}]}
        d = self.job("py-job-1", status=json.dumps(st).encode(), spec=json.dumps(spec).encode())
        got = jobstore.read_spec(d)
        self.assertEqual((5, 1000, 3), (got["max_attempts"], got["backoff_ms"], got["priority"]))
        got = jobstore.read_status(d)
        self.assertEqual("2026-11-30T09:36:00+00:00", got["retry_at"])
        self.assertEqual("exit 2", got["attempts"][0]["error"])
        self.assertNotIn(got["state"], jobstore.FINAL_STATES, "a pending retry is not final")
        for bad in (dict(st, state="running"), dict(st, attempts=[{"attempt": 1, "state": "running", "ended_at": "2026-11-30T09:35:40Z"}]),
                    dict(st, attempts=[{"attempt": 1, "state": "failed"}])):
            with self.subTest(bad=bad):
                with self.assertRaises(jobstore.Invalid):
                    jobstore.decode_status(json.dumps(bad).encode())

    def test_version_0_has_no_migration(self):
        d = self.job("old-job", status=fixture("status.v0.json"))
        with self.assertRaises(jobstore.NoMigration) as cm:
            jobstore.read_status(d)
        self.assertIn("schema_version 0 to 1", str(cm.exception))
        os.chmod(os.path.join(d, "job.json"), 0o644)
        self.put(d, "job.json", fixture("job.v0.json"))
        self.assertRaises(jobstore.NoMigration, jobstore.read_spec, d)

    def test_a_migration_step_is_applied_in_memory(self):
        # As migrate_test.go does: a version 3 that changes a field's
        # meaning, with a step from 2 (and version 2's, which adds nothing).
        def steps(file):
            return {1: lambda r: r, 2: lambda r: dict(r, state={"done": "succeeded"}.get(r.get("state"), r.get("state")))}
        raw = json.dumps(status(state="done")).encode()
        d = self.job(status=raw)
        with mock.patch.object(jobstore, "STATUS_SCHEMA_VERSION", 3), mock.patch.object(jobstore, "_BASE_SCHEMA_VERSION", 3), \
                mock.patch.object(jobstore, "_migration_steps", steps):
            st, migrated = jobstore.decode_status(raw)
            self.assertTrue(migrated)
            self.assertEqual(("succeeded", 3), (st["state"], st["schema_version"]))
            self.assertEqual("succeeded", jobstore.read_status(d)["state"])
        with open(os.path.join(d, "status.json"), "rb") as fh:
            self.assertEqual(raw, fh.read(), "a reader never rewrites the file")

    def test_schema_version_that_is_no_integer_is_invalid(self):
        for v in ("1", 1.0, 1.5, -1, 2 ** 31, True):
            with self.subTest(v=v):
                with self.assertRaises(jobstore.Invalid) as cm:
                    jobstore.decode_status(json.dumps(status(schema_version=v)).encode())
                self.assertEqual("schema_version", cm.exception.subject)

    def test_fields_the_go_decoder_refuses(self):
        cases = {"seq": [1.0, -1, 2 ** 64, "1"], "state": ["done", 3], "progress": [1.5, -0.1, "0.5"],
                 "updated_at": ["2026-02-30T00:00:00Z", 5], "job_id": ["../x"], "lease_ms": [-1, 1.5],
                 "pid": [1.0], "exit_code": ["0"]}
        for field, values in cases.items():
            for v in values:
                with self.subTest(field=field, v=v):
                    with self.assertRaises(jobstore.Invalid) as cm:
                        jobstore.decode_status(json.dumps(status(**{field: v})).encode())
                    self.assertEqual(field, cm.exception.subject)
        self.assertRaises(jobstore.Corrupt, jobstore.decode_status, b'{"seq": NaN}')
        with self.assertRaises(jobstore.Invalid):
            jobstore.decode_status(b"[1]")

    def test_wrong_job_id_is_invalid(self):
        d = self.job(status=status(job_id="j2"))
        with self.assertRaises(jobstore.Invalid) as cm:
            jobstore.read_status(d)
        self.assertEqual(("job_id", "j2", "j1"), (cm.exception.subject, cm.exception.found, cm.exception.supported))

    def test_corrupt_after_every_read_and_names_the_damage(self):
        cases = {b"": "empty", b"\0\0\0": "only NUL", b'{"state": "run': "ends early", b"{}{}": "not one JSON value",
                 b"garbage": "not JSON at all", b'{"a": 1}\0\0': "NUL bytes", fixture("status.truncated.json"): "ends early"}
        d = self.job()
        for data, words in cases.items():
            with self.subTest(data=data):
                self.put(d, "status.json", data)
                sleeps = []
                with mock.patch.object(jobstore.time, "sleep", sleeps.append):
                    with self.assertRaises(jobstore.Corrupt) as cm:
                        jobstore.read_status(d)
                self.assertIn(words, str(cm.exception))
                self.assertIn("the same through 4 reads", str(cm.exception))
                self.assertEqual([jobstore.READ_DELAY] * (jobstore.READ_ATTEMPTS - 1), sleeps)

    def test_a_torn_moment_is_read_again(self):
        d = self.job(status=b'{"schema_version": 1, "sta')
        path = os.path.join(d, "status.json")

        def writer_finishes(_):
            tmp = path + ".tmp"
            with open(tmp, "w") as fh:
                json.dump(status(seq=7), fh)
            os.replace(tmp, path)

        with mock.patch.object(jobstore.time, "sleep", writer_finishes):
            self.assertEqual(7, jobstore.read_status(d)["seq"])

    def test_too_large_is_refused_at_once(self):
        d = self.job()
        with open(os.path.join(d, "status.json"), "wb") as fh:
            fh.truncate(jobstore.MAX_SIZE + 1)
        sleeps = []
        with mock.patch.object(jobstore.time, "sleep", sleeps.append):
            with self.assertRaises(jobstore.TooLarge) as cm:
                jobstore.read_status(d)
        self.assertEqual([], sleeps, "not retried")
        self.assertEqual(jobstore.MAX_SIZE, cm.exception.supported)

    @unittest.skipUnless(POSIX, "links, FIFOs and sockets are made here on POSIX")
    def test_links_fifos_and_sockets_are_refused_without_waiting(self):
        target = os.path.join(self.tmp, "elsewhere.json")
        with open(target, "w") as fh:
            json.dump(status(), fh)
        plants = {
            "link": lambda p: os.symlink(target, p),
            "fifo": os.mkfifo,
            "directory": os.mkdir,
        }
        if len(os.path.join(self.tmp, "jobs", "socket", "status.json")) < 100:
            def sock(p):
                s = socket.socket(socket.AF_UNIX)
                self.addCleanup(s.close)
                s.bind(p)
            plants["socket"] = sock
        for kind, plant in plants.items():
            with self.subTest(kind=kind):
                d = self.job(kind)
                plant(os.path.join(d, "status.json"))
                with self.assertRaises(jobstore.NotRegular) as cm:
                    jobstore.read_status(d)
                self.assertEqual("not_regular", cm.exception.code)
        # A job directory that is a link is never followed.
        real = self.job("real", status=status(job_id="real"))
        os.symlink(real, os.path.join(self.root, "alias"))
        self.assertRaises(jobstore.NotRegular, jobstore.read_status, os.path.join(self.root, "alias"))
        self.assertRaises(jobstore.NotRegular, jobstore.read_spec, os.path.join(self.root, "alias"))
        self.assertRaises(jobstore.NotRegular, jobstore.read_status, os.path.join(self.root, "alias") + os.sep)

    @unittest.skipUnless(POSIX and os.path.exists("/dev/null"), "needs /dev/null")
    def test_a_device_is_refused(self):
        self.assertRaises(jobstore.NotRegular, jobstore._read_once, "read", "/dev/null", jobstore.MAX_SIZE)


class ListJobs(Case):
    def test_lists_as_list_does(self):
        a = self.job("a", spec=fixture("job.golden.json").replace(b'"j1"', b'"a"').replace(b"2026-11-30T09:35", b"2026-11-30T10:35"))
        self.job("b", status=status(job_id="b", state="succeeded"))
        os.makedirs(os.path.join(self.root, "not-a-job"))
        os.makedirs(os.path.join(self.root, ".submit", "x-1"))
        os.makedirs(os.path.join(self.root, ".remove-c-1"))
        self.put(self.root, "index.json", b"{}")
        self.put(self.root, "plain", b"")
        if POSIX:
            os.symlink(a, os.path.join(self.root, "alias"))
        entries = jobstore.list_jobs(self.root)
        self.assertEqual(["b", "a", "not-a-job"], [e.job_id for e in entries])
        self.assertEqual("succeeded", entries[0].status["state"])
        self.assertIsNone(entries[1].status)
        self.assertIsInstance(entries[2].error, jobstore.NotJob)
        self.assertIsNone(entries[0].error)

    def test_an_entry_gives_what_a_table_of_jobs_shows(self):
        spec = json.loads(fixture("job.golden.json").decode())
        spec.update({"schema_version": 2, "job_id": "t", "labels": {"team": "vfx"}, "not_before": "2026-12-01T10:00:00Z",
                     "priority": 3, "max_attempts": 4})
        ended = {"attempt": 1, "state": "failed", "ended_at": "2026-12-01T10:05:00+00:00", "error": "exit 1"}
        st = status(job_id="t", state="queued", schema_version=2, seq=5, attempt=1, message="attempt 1 failed",
                    retry_at="2026-12-01T11:00:00+00:00", attempts=[ended])
        self.job("t", status=json.dumps(st).encode(), spec=json.dumps(spec).encode())
        self.job("r", status=status(job_id="r", state="running", progress=0.25, message="frame 3"))
        entries = {e.job_id: e for e in jobstore.list_jobs(self.root)}
        t, r = entries["t"], entries["r"]
        self.assertEqual(("t", "queued", None), (t[1], t.state, t[4]), "the tuple's fields are where they were")
        self.assertEqual(5, len(t))
        self.assertEqual((spec["kind"], None, "attempt 1 failed", {"team": "vfx"}, 1, [ended]),
                         (t.kind, t.progress, t.message, t.labels, t.attempt, t.attempts))
        self.assertEqual(("2026-12-01T10:00:00Z", "2026-12-01T11:00:00+00:00", "2026-12-01T11:00:00+00:00"),
                         (t.not_before, t.retry_at, t.due))
        self.assertEqual((3, 4), (t.priority, t.max_attempts))
        self.assertEqual(st["updated_at"], t.updated_at)
        self.assertEqual(("running", 0.25, "frame 3", 0, [], None, 0, 0), (r.state, r.progress, r.message,
                         r.attempt, r.attempts, r.due, r.priority, r.max_attempts))

    def test_an_unreadable_job_is_an_entry_with_its_error(self):
        self.job("bad", status=b"{")
        with mock.patch.object(jobstore.time, "sleep", lambda _: None):
            (e,) = jobstore.list_jobs(self.root)
        self.assertIsInstance(e.error, jobstore.Corrupt)
        self.assertIsNotNone(e.spec)

    def test_missing_root(self):
        with self.assertRaises(jobstore.JobstoreError) as cm:
            jobstore.list_jobs(os.path.join(self.tmp, "nowhere"))
        self.assertEqual("io", cm.exception.code)


class Wait(Case):
    def test_returns_the_final_status(self):
        d = self.job(status=status(state="running"))
        path = os.path.join(d, "status.json")
        seen = []

        def runner_finishes(_):
            seen.append(jobstore.read_status(d)["state"])
            with open(path + ".tmp", "w") as fh:
                json.dump(status(state="lost" if len(seen) > 2 else "running", seq=2 + len(seen)), fh)
            os.replace(path + ".tmp", path)

        with mock.patch.object(jobstore.time, "sleep", runner_finishes):
            st = jobstore.wait(d, poll=0.01)
        self.assertEqual("lost", st["state"])
        self.assertEqual(["running"] * 3, seen)

    def test_final_states(self):
        self.assertEqual({"succeeded", "failed", "cancelled", "lost"}, set(jobstore.FINAL_STATES))
        for state in jobstore.FINAL_STATES:
            with self.subTest(state=state):
                d = self.job(state, status=status(job_id=state, state=state))
                self.assertEqual(state, jobstore.wait(d, timeout=0)["state"])

    def test_timeout_and_errors_that_end_the_wait(self):
        d = self.job(status=status(state="queued"))
        with self.assertRaises(TimeoutError):
            jobstore.wait(d, timeout=0.05, poll=0.01)
        with self.assertRaises(jobstore.JobstoreError) as cm:  # as the README catches it
            jobstore.wait(d, timeout=0.05, poll=0.01)
        self.assertIsInstance(cm.exception, jobstore.Timeout)
        self.assertEqual("timeout", cm.exception.code)
        self.assertEqual(d, cm.exception.path)
        self.assertRaises(jobstore.NotJob, jobstore.wait, os.path.join(self.root, "nope"), 1)
        self.put(d, "status.json", fixture("status.newer.json").replace(b'"j1"', b'"j1"'))
        self.assertRaises(jobstore.NewerSchema, jobstore.wait, d, 1)

    def test_what_no_later_read_can_change_ends_the_wait_at_once(self):
        # As Go's Wait (neverAnswers): each is raised at the first read,
        # well before the timeout (which would otherwise raise Timeout).
        big = b'{"schema_version": 2, "job_id": "j1", "state": "queued", "pad": "' + b"x" * (20 << 20) + b'"}'
        cases = {"a status.json over MAX_SIZE": (lambda d: self.put(d, "status.json", big), jobstore.TooLarge)}
        if POSIX:
            elsewhere = self.job("elsewhere", status=status(job_id="elsewhere", state="queued"))
            cases.update({
                "a FIFO status.json": (lambda d: os.mkfifo(os.path.join(d, "status.json")), jobstore.NotRegular),
                "a linked status.json": (lambda d: os.symlink(os.path.join(elsewhere, "status.json"),
                                                              os.path.join(d, "status.json")), jobstore.NotRegular),
                "a status.json that is a directory": (lambda d: os.mkdir(os.path.join(d, "status.json")), jobstore.NotRegular),
            })
        for i, (name, (make, want)) in enumerate(cases.items()):
            with self.subTest(name):
                d = self.job("w%d" % i)
                make(d)
                start = time.monotonic()
                with self.assertRaises(want):
                    jobstore.wait(d, timeout=WAIT_NEVER_ANSWERS, poll=0.01)
                self.assertLess(time.monotonic() - start, WAIT_NEVER_ANSWERS)

    @unittest.skipUnless(POSIX, "links are made here on POSIX")
    def test_a_linked_job_dir_ends_the_wait_however_spelled(self):
        target = os.path.join(self.tmp, "outside", "LINK")
        os.makedirs(os.path.dirname(target))
        shutil.copytree(self.job("LINK", status=status(job_id="LINK", state="queued")), target)
        shutil.rmtree(os.path.join(self.root, "LINK"))
        link = os.path.join(self.root, "LINK")
        os.symlink(target, link)
        for spelling in ("", "/", "//", "/."):
            with self.subTest(spelling=spelling):
                with self.assertRaises(jobstore.NotRegular) as cm:
                    jobstore.wait(link + spelling, timeout=WAIT_NEVER_ANSWERS, poll=0.01)
                self.assertEqual(link, cm.exception.path)
                with self.assertRaises(jobstore.NotRegular):
                    jobstore.read_cancel(link + spelling)
                with self.assertRaises(jobstore.NotRegular):
                    jobstore.read_status(link + spelling)

    def test_a_corrupt_status_is_waited_past(self):
        d = self.job(status=b"{")
        path = os.path.join(d, "status.json")
        calls = []

        def sleep(_):
            calls.append(1)
            if len(calls) == 6:  # after a whole failed read and a poll
                with open(path + ".tmp", "w") as fh:
                    json.dump(status(state="failed"), fh)
                os.replace(path + ".tmp", path)

        with mock.patch.object(jobstore.time, "sleep", sleep):
            self.assertEqual("failed", jobstore.wait(d, poll=0.01)["state"])


class Submit(Case):
    def setUp(self):
        super().setUp()
        os.makedirs(self.root)

    def test_a_missing_root_is_refused_unless_create(self):
        root = os.path.join(self.tmp, "new", "jobs")
        with self.assertRaises(jobstore.JobstoreError) as cm:
            jobstore.submit(root, "render", job_id="j1")
        self.assertEqual("io", cm.exception.code)
        self.assertIsInstance(cm.exception.cause, FileNotFoundError)
        self.assertEqual(root, cm.exception.path)
        self.assertFalse(os.path.exists(os.path.dirname(root)), "nothing is made")
        d = jobstore.submit(root, "render", job_id="j1", create=True)
        self.assertEqual(os.path.join(root, "j1"), d)
        self.assertEqual("queued", jobstore.read_status(d)["state"])

    @unittest.skipIf(os.name == "nt", "a rename replaces no directory on Windows")
    def test_a_live_entry_left_by_a_job_of_the_name_is_made_anew_with_another_inode(self):
        # A worker polling the live index on another host tells a remade
        # entry by its inode: a left entry must not keep it.
        entry = os.path.join(self.root, jobstore.LIVE_DIR, "j1")
        os.makedirs(entry)
        before = os.stat(entry).st_ino
        jobstore.submit(self.root, "render", job_id="j1")
        self.assertNotEqual(before, os.stat(entry).st_ino)
        self.assertEqual(["j1"], os.listdir(os.path.join(self.root, jobstore.LIVE_DIR)), "no temp entry is left")

    def test_a_duration_go_cannot_hold_is_refused_naming_the_field(self):
        for name in ("timeout_ms", "backoff_ms", "max_backoff_ms"):
            with self.subTest(name=name):
                kw = {name: jobstore.MAX_MS + 1}
                if name == "backoff_ms":
                    kw["max_backoff_ms"] = jobstore.MAX_MS + 1
                with self.assertRaises(jobstore.Invalid) as cm:
                    jobstore.submit(self.root, "render", job_id="j-" + name.replace("_", "-"), **kw)
                self.assertIn(cm.exception.subject, kw)
                self.assertEqual(jobstore.MAX_MS + 1, cm.exception.found)
                self.assertEqual([], [n for n in os.listdir(self.root) if not n.startswith(".")], "no job is made")
        d = jobstore.submit(self.root, "render", job_id="largest", timeout_ms=jobstore.MAX_MS)
        self.assertEqual(jobstore.MAX_MS, jobstore.read_spec(d)["timeout_ms"])

    def test_reading_a_duration_go_cannot_hold_is_refused_naming_the_field(self):
        spec = json.loads(fixture("job.golden.json").decode())
        spec.update({"schema_version": 2, "timeout_ms": jobstore.MAX_MS + 1})
        with self.assertRaises(jobstore.Invalid) as cm:
            jobstore.decode_spec(json.dumps(spec).encode())
        self.assertEqual("timeout_ms", cm.exception.subject)
        st = status(state="running", lease_ms=jobstore.MAX_MS + 1)
        with self.assertRaises(jobstore.Invalid) as cm:
            jobstore.decode_status(json.dumps(st).encode())
        self.assertEqual("lease_ms", cm.exception.subject)
    def test_indexes_the_job_as_live(self):
        jobstore.submit(self.root, "render", job_id="j1")
        live = os.path.join(self.root, jobstore.LIVE_DIR)
        self.assertEqual(["j1"], os.listdir(live))
        self.assertTrue(os.path.isdir(os.path.join(live, "j1")))
        self.assertEqual(["j1"], [e.job_id for e in jobstore.list_jobs(self.root)], "the index is no job")

    def test_builds_the_job_whole(self):
        d = jobstore.submit(self.root, "render", {"frames": [1, 2], "scene": "caf\u00e9 <night> & day"},
                            labels={"team": "vfx"}, submitted_by="ana")
        self.assertEqual(os.path.join(self.root, os.path.basename(d)), d)
        self.assertEqual({"job.json", "status.json", "job.lock"}, set(os.listdir(d)))
        self.assertEqual([], os.listdir(os.path.join(self.root, ".submit")))
        spec = jobstore.read_spec(d)
        self.assertEqual({"frames": [1, 2], "scene": "caf\u00e9 <night> & day"}, spec["params"])
        self.assertEqual(("render", "ana", {"team": "vfx"}), (spec["kind"], spec["submitted_by"], spec["labels"]))
        st = jobstore.read_status(d)
        self.assertEqual(("queued", 1, os.path.basename(d)), (st["state"], st["seq"], st["job_id"]))
        with open(os.path.join(d, "job.json"), encoding="utf-8") as fh:
            text = fh.read()
        self.assertTrue(text.endswith("}\n"))
        self.assertIn("caf\u00e9 <night> & day", text, "not escaped, as jobstore writes it")
        self.assertEqual(["schema_version", "job_id", "kind", "params", "submitted_at", "submitted_by", "labels"],
                         list(json.loads(text)))
        self.assertEqual(0, os.path.getsize(os.path.join(d, "job.lock")))
        if POSIX:
            self.assertEqual(0o444, stat.S_IMODE(os.stat(os.path.join(d, "job.json")).st_mode) & 0o666)
        self.no_temp_left(self.root)

    def test_an_existing_id_is_refused_and_left_alone(self):
        d = jobstore.submit(self.root, "render", job_id="j1", create=True)
        with open(os.path.join(d, "job.json"), "rb") as fh:
            before = fh.read()
        with self.assertRaises(jobstore.Exists) as cm:
            jobstore.submit(self.root, "other", job_id="j1")
        self.assertIsInstance(cm.exception, FileExistsError)
        self.assertIn("new job ID", cm.exception.remedy)
        with open(os.path.join(d, "job.json"), "rb") as fh:
            self.assertEqual(before, fh.read())
        self.put(self.root, "file", b"")
        self.assertRaises(jobstore.Exists, jobstore.submit, self.root, "r", job_id="file")
        os.makedirs(os.path.join(self.root, "half", "x"))
        with self.assertRaises(jobstore.Exists) as cm:
            jobstore.submit(self.root, "r", job_id="half")
        self.assertIn("holds no job.json", str(cm.exception))
        if POSIX:
            os.symlink(d, os.path.join(self.root, "link"))
            self.assertRaises(jobstore.NotRegular, jobstore.submit, self.root, "r", job_id="link")
        self.assertEqual([], os.listdir(os.path.join(self.root, ".submit")))

    def test_an_empty_directory_gives_way(self):
        os.makedirs(os.path.join(self.root, "j1"))
        d = jobstore.submit(self.root, "render", job_id="j1", create=True)
        self.assertEqual("queued", jobstore.read_status(d)["state"])

    def test_a_race_of_submitters_has_one_winner(self):
        results = []
        barrier = threading.Barrier(8)

        def one(i):
            barrier.wait()
            try:
                jobstore.submit(self.root, "k%d" % i, job_id="race")
                results.append(("won", i))
            except jobstore.Exists:
                results.append(("lost", i))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        won = [i for r, i in results if r == "won"]
        self.assertEqual(1, len(won), results)
        self.assertEqual("k%d" % won[0], jobstore.read_spec(os.path.join(self.root, "race"))["kind"])
        self.assertEqual([], os.listdir(os.path.join(self.root, ".submit")))

    def test_retries_and_schedule_make_a_version_2_spec(self):
        d = jobstore.submit(self.root, "render", max_attempts=3, backoff_ms=500, priority=2)
        with open(os.path.join(d, "job.json"), "rb") as fh:
            spec = json.loads(fh.read())
        self.assertEqual((2, 3, 500, 2), (spec["schema_version"], spec["max_attempts"], spec["backoff_ms"], spec["priority"]))
        plain = jobstore.submit(self.root, "render")
        with open(os.path.join(plain, "job.json"), "rb") as fh:
            self.assertEqual(1, json.loads(fh.read())["schema_version"], "no new field: version 1, for older readers")
        with self.assertRaises(jobstore.Invalid) as cm:
            jobstore.submit(self.root, "render", max_attempts=-1)
        self.assertEqual("max_attempts", cm.exception.subject)

    def test_invalid_input_touches_nothing(self):
        os.rmdir(self.root)  # even a root create=True would make is not made
        cases = [
            ("job_id", dict(kind="r", job_id="../evil")),
            ("job_id", dict(kind="r", job_id="CON")),
            ("kind", dict(kind="")),
            ("kind", dict(kind=None)),
            ("params", dict(kind="r", params={"x": float("nan")})),
            ("params", dict(kind="r", params={"x": object()})),
            ("labels", dict(kind="r", labels={"a": 1})),
            ("submitted_by", dict(kind="r", submitted_by=3)),
        ]
        for subject, kw in cases:
            with self.subTest(subject=subject, kw=kw):
                with self.assertRaises(jobstore.Invalid) as cm:
                    jobstore.submit(self.root, create=True, **kw)
                self.assertEqual(subject, cm.exception.subject)
                self.assertTrue(cm.exception.remedy)
                self.assertFalse(os.path.exists(self.root), "nothing touched")
        with self.assertRaises(jobstore.TooLarge):
            jobstore.submit(self.root, "r", {"blob": "x" * jobstore.MAX_SIZE}, create=True)
        self.assertFalse(os.path.exists(self.root))

    def test_a_failure_midway_leaves_no_job(self):
        for step in ("replace", "link", "rename", "fsync"):
            with self.subTest(step=step):
                real = getattr(os, step)
                calls = []

                def fail(*a, **kw):
                    calls.append(a)
                    raise OSError(errno.ENOSPC, "No space left on device (injected)")

                with mock.patch.object(jobstore.os, step, fail):
                    with self.assertRaises(jobstore.JobstoreError) as cm:
                        jobstore.submit(self.root, "render", job_id="j-" + step)
                self.assertTrue(calls, "the step ran")
                self.assertIs(real, getattr(os, step))
                self.assertIn("no job", str(cm.exception).lower())
                self.assertFalse(os.path.lexists(os.path.join(self.root, "j-" + step)))
                self.assertEqual([], os.listdir(os.path.join(self.root, ".submit")))

    def test_killed_midway_leaves_only_the_hidden_build(self):
        def killed(*a, **kw):
            raise KeyboardInterrupt

        with mock.patch.object(jobstore, "_publish_build", killed):
            self.assertRaises(KeyboardInterrupt, jobstore.submit, self.root, "render", job_id="j1")
        self.assertEqual([".submit"], os.listdir(self.root))
        self.assertEqual([], jobstore.list_jobs(self.root))


class RequestCancel(Case):
    def test_published_once_read_only(self):
        d = jobstore.submit(self.root, "render", job_id="j1", create=True)
        self.assertTrue(jobstore.request_cancel(d, "alice (GUI)", "wrong input"))
        self.assertFalse(jobstore.request_cancel(d, "bob", "again"))
        req = jobstore.read_cancel(d)
        self.assertEqual(("j1", "alice (GUI)", "wrong input"), (req["job_id"], req["requested_by"], req["reason"]))
        with open(os.path.join(d, "cancel.json"), encoding="utf-8") as fh:
            self.assertEqual(["schema_version", "job_id", "requested_at", "requested_by", "reason"], list(json.load(fh)))
        if POSIX:
            self.assertEqual(0o444, stat.S_IMODE(os.stat(os.path.join(d, "cancel.json")).st_mode) & 0o666)
        self.no_temp_left(d)

    def test_a_race_has_one_winner(self):
        d = jobstore.submit(self.root, "render", job_id="j1", create=True)
        results = []
        barrier = threading.Barrier(8)

        def one(i):
            barrier.wait()
            results.append((jobstore.request_cancel(d, "r%d" % i), i))

        with mock.patch.object(jobstore.os.path, "lexists", lambda p: False if p.endswith("cancel.json") else os.path.exists(p)):
            threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        winners = [i for ok, i in results if ok]
        self.assertEqual(1, len(winners), results)
        self.assertEqual("r%d" % winners[0], jobstore.read_cancel(d)["requested_by"])
        self.no_temp_left(d)

    def test_a_finished_job_is_refused(self):
        for state in ("succeeded", "failed", "lost", "cancelled"):
            with self.subTest(state=state):
                d = self.job(state, status=status(job_id=state, state=state))
                with self.assertRaises(jobstore.WrongState) as cm:
                    jobstore.request_cancel(d, "me")
                self.assertEqual("state", cm.exception.subject)
                self.assertEqual("wrong_state", cm.exception.code)
                self.assertFalse(os.path.exists(os.path.join(d, "cancel.json")))
        d = os.path.join(self.root, "cancelled")
        self.put(d, "cancel.json", b"{}")
        self.assertFalse(jobstore.request_cancel(d), "already cancelled on a request")

    def test_not_a_job(self):
        self.assertRaises(jobstore.NotJob, jobstore.request_cancel, os.path.join(self.root, "nope"))
        self.assertRaises(jobstore.Invalid, jobstore.request_cancel, self.root + os.sep + "..")
        self.assertRaises(jobstore.Invalid, jobstore.request_cancel, os.path.join(self.root, ".submit"))


FINISHED_AT = "2026-11-30T09:40:00.000000+00:00"


def finished(state="failed", job_id="j1", attempt=1, **kw):
    """A status.json of a job whose attempt ended in state, as a Go runner
    leaves it."""
    return status(job_id=job_id, state=state, seq=4, attempt=attempt, host="render-3", pid=4242,
                  started_at="2026-11-30T09:35:40.123456+00:00", finished_at=FINISHED_AT, **kw)


class Claims(Case):
    """What retry and remove share: Go's claim of a finished job's next
    attempt."""

    def setUp(self):
        super().setUp()
        if not POSIX:
            self.skipTest("retry and remove refuse on Windows (test_windows_is_refused)")

    def snapshot(self, d):
        """Every name under d with its bytes (None for a directory)."""
        out = {}
        for dirpath, dirnames, filenames in os.walk(d):
            for n in dirnames:
                out[os.path.relpath(os.path.join(dirpath, n), d)] = None
            for n in filenames:
                with open(os.path.join(dirpath, n), "rb") as fh:
                    out[os.path.relpath(os.path.join(dirpath, n), d)] = fh.read()
        return out

    def refused(self, op, states, supported):
        """op refuses a job in each of states (None: no status) with
        WrongState naming it, and touches nothing."""
        for state in states:
            with self.subTest(state=state):
                job_id = state or "none"
                d = self.job(job_id, status=None if state is None else finished(state, job_id=job_id))
                before = self.snapshot(d)
                with self.assertRaises(jobstore.WrongState) as cm:
                    op(d)
                self.assertEqual(("state", state or "", supported),
                                 (cm.exception.subject, cm.exception.found, cm.exception.supported))
                self.assertEqual(before, self.snapshot(d))

    def hold_lock(self, d, record=b""):
        """job.lock of d held by another open file, as another process holds it."""
        import fcntl
        fd = os.open(os.path.join(d, "job.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        self.addCleanup(os.close, fd)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, record)
        return fd


class Retry(Claims):
    def test_queues_the_job_again_as_go_does(self):
        for last in ("failed", "lost", "cancelled"):
            with self.subTest(last=last):
                d = self.job(last, status=finished(last, job_id=last, exit_code=3, error="exit 3"))
                if last == "cancelled":
                    self.put(d, "cancel.json", {"schema_version": 1, "job_id": last, "requested_at": FINISHED_AT})
                jobstore.retry(d)
                st = jobstore.read_status(d)
                self.assertEqual(("queued", 5, 2), (st["state"], st["seq"], st["attempt"]))
                self.assertEqual("retried by hand after attempt 1 (%s)" % last, st["message"])
                self.assertNotIn("retry_at", st)
                self.assertEqual([{"attempt": 1, "state": last, "started_at": "2026-11-30T09:35:40.123456+00:00",
                                   "ended_at": FINISHED_AT, "host": "render-3", "exit_code": 3, "error": "exit 3"}],
                                 st["attempts"])
                with open(os.path.join(d, "status.json"), encoding="utf-8") as fh:
                    self.assertEqual(["schema_version", "job_id", "state", "seq", "message", "updated_at", "attempt",
                                      "attempts"], list(json.load(fh)))
                self.assertIsNone(jobstore.read_cancel(d))
                self.assertTrue(os.path.isfile(os.path.join(d, ".fenced-2", "ended")), "the claim is ended")
                self.assertFalse(os.path.exists(os.path.join(d, ".run-2")))
                self.assertTrue(os.path.isdir(os.path.join(self.root, ".live", last)), "workers are told")
                self.assertEqual(0, os.path.getsize(os.path.join(d, "job.lock")), "job.lock is released empty")
                self.hold_lock(d)  # and free
                self.no_temp_left(d)

    def test_keeps_earlier_attempts_and_does_not_repeat_the_last(self):
        earlier = [{"attempt": 1, "state": "failed", "ended_at": FINISHED_AT, "unknown": 1}]
        d = self.job(status=finished("lost", attempt=2, attempts=earlier, schema_version=2))
        jobstore.retry(d)
        st = jobstore.read_status(d)
        self.assertEqual([1, 2], [a["attempt"] for a in st["attempts"]])
        self.assertNotIn("unknown", st["attempts"][0], "written as Go writes it")
        d2 = self.job("j2", status=finished("lost", job_id="j2", attempt=2,
                                            attempts=earlier + [{"attempt": 2, "state": "lost", "ended_at": FINISHED_AT}],
                                            schema_version=2))
        jobstore.retry(d2)
        self.assertEqual([1, 2], [a["attempt"] for a in jobstore.read_status(d2)["attempts"]])

    def test_the_finished_attempts_directory_may_be_there_or_not(self):
        for leftover in ((), (".fenced-1",), (".run-1",), (".fenced-1", ".run-1"), (".fenced-1/ended",)):
            with self.subTest(leftover=leftover):
                d = self.job("j%d" % len(os.listdir(self.root)) if os.path.isdir(self.root) else "j0")
                self.put(d, "status.json", finished(job_id=os.path.basename(d)))
                for name in leftover:
                    os.makedirs(os.path.join(d, name))
                jobstore.retry(d)
                self.assertEqual(2, jobstore.read_status(d)["attempt"])

    def test_passes_attempts_that_are_over(self):
        d = self.job(status=finished())
        os.makedirs(os.path.join(d, ".fenced-2"))  # a claim of attempt 2 that was fenced
        jobstore.retry(d)
        self.assertEqual(3, jobstore.read_status(d)["attempt"])
        self.assertTrue(os.path.isdir(os.path.join(d, ".fenced-3")))

    def test_refuses_what_is_not_finished_or_succeeded_touching_nothing(self):
        self.refused(jobstore.retry, ("queued", "running", "succeeded", None), ["failed", "lost", "cancelled"])

    def test_a_held_lock_or_a_claimed_attempt_is_locked_touching_nothing(self):
        d = self.job(status=finished())
        self.hold_lock(d, b'{"pid":77,"host":"h2","program":"jobstore","since":"2026-11-30T09:35:40.000000+00:00"}\n')
        before = self.snapshot(d)
        with self.assertRaises(jobstore.Locked) as cm:
            jobstore.retry(d)
        self.assertIn('pid 77 on host "h2"', str(cm.exception))
        self.assertEqual(before, self.snapshot(d))

        d = self.job("j2", status=finished(job_id="j2"))
        os.mkdir(os.path.join(d, ".run-2"))  # another host's claimant
        before = self.snapshot(d)
        before["job.lock"] = b""  # made where missing, as every locker makes it
        with self.assertRaises(jobstore.Locked) as cm:
            jobstore.retry(d)
        self.assertEqual(os.path.join(d, ".run-2"), cm.exception.path)
        self.assertEqual(before, self.snapshot(d))

    def test_a_race_has_one_winner(self):
        d = self.job(status=finished())
        results = []
        barrier = threading.Barrier(8)

        def one():
            barrier.wait()
            try:
                jobstore.retry(d)
                results.append("ok")
            except (jobstore.Locked, jobstore.WrongState) as e:
                results.append(e.code)

        threads = [threading.Thread(target=one) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(1, results.count("ok"), results)
        self.assertEqual(8, len(results))
        st = jobstore.read_status(d)
        self.assertEqual((5, 1), (st["seq"], len(st["attempts"])))

    def test_links_fifos_and_bad_ids_are_refused(self):
        d = self.job(status=finished())
        link = os.path.join(self.root, "link")
        os.symlink(d, link)
        self.assertRaises(jobstore.NotRegular, jobstore.retry, link)
        self.assertRaises(jobstore.NotRegular, jobstore.retry, link + os.sep)
        self.assertRaises(jobstore.Invalid, jobstore.retry, self.root + os.sep + "..")
        self.assertRaises(jobstore.NotJob, jobstore.retry, os.path.join(self.root, "nope"))

        fifo = self.job("fifo")
        os.mkfifo(os.path.join(fifo, "status.json"))
        self.assertRaises(jobstore.NotRegular, jobstore.retry, fifo)

        locklink = self.job("locklink", status=finished(job_id="locklink"))
        target = os.path.join(self.tmp, "elsewhere")
        os.symlink(target, os.path.join(locklink, "job.lock"))
        self.assertRaises(jobstore.NotRegular, jobstore.retry, locklink)
        self.assertFalse(os.path.lexists(target), "a link named job.lock is never followed")
        self.assertEqual("failed", jobstore.read_status(locklink)["state"])


class Remove(Claims):
    def test_removes_a_finished_job_whole(self):
        for state in ("succeeded", "failed", "cancelled", "lost"):
            with self.subTest(state=state):
                d = self.job(state, status=finished(state, job_id=state))
                os.chmod(os.path.join(d, "job.json"), 0o444)
                os.makedirs(os.path.join(d, ".fenced-1"))
                os.makedirs(os.path.join(self.root, ".live", state))
                outside = os.path.join(self.tmp, "outside-" + state)
                os.makedirs(outside)
                self.put(outside, "keep", b"x")
                os.symlink(outside, os.path.join(d, "out"))
                jobstore.remove(d)
                self.assertFalse(os.path.lexists(d))
                self.assertFalse(os.path.lexists(os.path.join(self.root, ".live", state)))
                self.assertTrue(os.path.isfile(os.path.join(outside, "keep")), "a link is removed as a link")
                self.assertEqual([".live"], sorted(os.listdir(self.root)), "no hidden directory is left")
                self.assertRaises(jobstore.NotJob, jobstore.read_status, d)

    def test_refuses_an_unfinished_job_touching_nothing(self):
        self.refused(jobstore.remove, ("queued", "running", None), ["succeeded", "failed", "cancelled", "lost"])

    def test_a_held_lock_or_a_claimed_attempt_is_locked(self):
        d = self.job(status=finished("succeeded"))
        self.hold_lock(d)
        self.assertRaises(jobstore.Locked, jobstore.remove, d)
        self.assertTrue(os.path.isdir(d))
        d2 = self.job("j2", status=finished("succeeded", job_id="j2"))
        os.mkdir(os.path.join(d2, ".run-2"))
        self.assertRaises(jobstore.Locked, jobstore.remove, d2)
        self.assertEqual("succeeded", jobstore.read_status(d2)["state"])

    def test_a_race_of_removers_and_retriers_has_one_winner(self):
        d = self.job(status=finished())
        results = []
        barrier = threading.Barrier(8)

        def one(op):
            barrier.wait()
            try:
                op(d)
                results.append(op.__name__)
            except (jobstore.Locked, jobstore.WrongState, jobstore.NotJob) as e:
                results.append(e.code)

        threads = [threading.Thread(target=one, args=(op,)) for op in (jobstore.remove, jobstore.retry) * 4]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wins = [r for r in results if r in ("remove", "retry")]
        self.assertEqual(1, len(wins), results)
        if wins == ["remove"]:
            self.assertFalse(os.path.lexists(d))
        else:
            self.assertEqual("queued", jobstore.read_status(d)["state"])

    def test_a_link_is_refused(self):
        d = self.job(status=finished("succeeded"))
        link = os.path.join(self.root, "link")
        os.symlink(d, link)
        self.assertRaises(jobstore.NotRegular, jobstore.remove, link)
        self.assertTrue(os.path.isdir(d))


class Windows(Case):
    def test_windows_is_refused(self):
        d = self.job(status=finished())
        if POSIX:
            self.assertIsNotNone(jobstore.fcntl, "flock is what the Go library locks job.lock with here")
            return
        for op in (jobstore.retry, jobstore.remove):
            with self.assertRaises(jobstore.JobstoreError) as cm:
                op(d)
            self.assertIn("jobstore retry", cm.exception.remedy)
        self.assertEqual("failed", jobstore.read_status(d)["state"])


if __name__ == "__main__":
    unittest.main()
