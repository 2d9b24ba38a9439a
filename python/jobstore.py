"""jobstore: read and write jobstore job directories from Python.

One file, the standard library only, Python 3.8 or later: copy it into a
tool (a QGIS plugin, a notebook, a script), or install it with
``pip install ./python`` from a clone of https://github.com/axqua/jobstore.
It reads and writes the file format of docs/format.md as the Go library
does, and no more:

- ``read_status``, ``read_spec``, ``read_cancel``: tolerant reads (an absent
  status.json is ``None``, "nothing has run yet"; a torn moment is read
  again; links, FIFOs and records over 16 MiB are refused; a record of a
  newer schema is refused naming both versions; an older one is migrated in
  memory);
- ``list_jobs``, ``wait``: every job under a root (an ``Entry`` each, with
  what a table of jobs shows), and the end of one job;
- ``submit``: a job built whole in the root's ``.submit/`` directory and
  renamed into place, with its queued status.json (in a root that exists,
  unless ``create=True``);
- ``request_cancel``: cancel.json, published once;
- ``retry``, ``remove``: a finished job queued again, or removed, under
  the Go library's claim of its next attempt (job.lock, then .run-N), so
  that of any number of claimants in either language one acts (not on
  Windows).

Records are returned as dicts of the fields the format defines (unknown
fields dropped, optional fields absent when empty), timestamps as the
strings the file holds (``parse_time`` turns one into an aware datetime).
Every error is a ``JobstoreError`` whose ``code`` is the Go library's
``ErrorCode`` ("not_job", "corrupt", ...); its subclasses match the Go
sentinels (``NotJob``, ``Corrupt``, ``NewerSchema``, ...).

Running jobs (writing status.json as a runner) is not
here: run them with ``jobstore work ROOT -- COMMAND`` or the Go library.
"""

import datetime
import errno
import json
import os
import random
import re
import secrets
import stat
import sys
import threading
import time

try:
    import fcntl
except ImportError:  # Windows: retry and remove refuse (see retry)
    fcntl = None

__version__ = "0.1.0.dev0"

__all__ = [
    "JOB_SCHEMA_VERSION", "STATUS_SCHEMA_VERSION", "CANCEL_SCHEMA_VERSION",
    "SPEC_FILE", "STATUS_FILE", "LOCK_FILE", "CANCEL_FILE", "INDEX_FILE", "LIVE_DIR",
    "MAX_SIZE", "MAX_MS", "READ_ATTEMPTS", "READ_DELAY", "STATES", "FINAL_STATES",
    "JobstoreError", "NotJob", "Exists", "Corrupt", "TooLarge", "Invalid",
    "NewerSchema", "NoMigration", "Locked", "CancelRequested", "NotRegular",
    "NotOwner", "NotDue", "Timeout", "Entry",
    "read_spec", "read_status", "read_cancel", "decode_spec", "decode_status",
    "decode_cancel", "list_jobs", "wait", "submit", "request_cancel",
    "new_job_id", "validate_job_id", "is_temp_name", "now", "parse_time", "retry", "remove",
]

# The schema versions this module writes and understands (model.go).
JOB_SCHEMA_VERSION = 2
STATUS_SCHEMA_VERSION = 2
# Version 2 added optional fields only (retries and scheduling): a record
# that uses none of them is written as version 1, which every reader since
# reads, and versions 1 and 2 decode alike (model.go, migrate.go).
_BASE_SCHEMA_VERSION = 1
CANCEL_SCHEMA_VERSION = 1

# File names (paths.go).
SPEC_FILE = "job.json"
STATUS_FILE = "status.json"
LOCK_FILE = "job.lock"
CANCEL_FILE = "cancel.json"
INDEX_FILE = "index.json"
SUBMIT_DIR = ".submit"
LIVE_DIR = ".live"

# The largest record a reader accepts and a writer writes (DefaultMaxSize).
MAX_SIZE = 16 << 20
# A torn or busy record is read this many times, this many seconds apart
# (DefaultReadAttempts, DefaultReadDelay).
READ_ATTEMPTS = 4
READ_DELAY = 0.05
# A stale NFS/GlusterFS file handle is reopened for this long (staleRetryFor).
_STALE_RETRY_FOR = 2.0

STATES = ("queued", "running", "succeeded", "failed", "cancelled", "lost")
FINAL_STATES = frozenset(("succeeded", "failed", "cancelled", "lost"))

_MAX_SCHEMA_VERSION = 2 ** 31 - 1
_MAX_UINT64 = 2 ** 64 - 1
_MAX_INT64 = 2 ** 63 - 1
# MAX_MS is the largest *_ms value Go reads: the most milliseconds a
# time.Duration (int64 nanoseconds) holds, about 292 years.
MAX_MS = _MAX_INT64 // 10 ** 6

_WINDOWS = os.name == "nt"


# ---------------------------------------------------------------- errors


class JobstoreError(Exception):
    """Every error this module raises. Like the Go library's *Error it
    names the operation (op), the file (path), the field (subject), what
    went wrong (msg), what to do (remedy), the value found and what is
    supported, and the cause (also __cause__). code is the Go library's
    ErrorCode: "io" here, the sentinel's code in a subclass."""

    code = "io"

    def __init__(self, msg="", op="", path="", subject="", remedy="",
                 found=None, supported=None, cause=None):
        self.op = op
        self.path = str(path) if path else ""
        self.subject = subject
        self.msg = msg
        self.remedy = remedy
        self.found = found
        self.supported = supported
        self.cause = cause
        super().__init__(self._text())
        if cause is not None:
            self.__cause__ = cause

    def _text(self):
        head = " ".join(p for p in (self.op, self.path) if p)
        out = "jobstore: "
        if head:
            out += head + ": "
        if self.subject:
            out += self.subject + ": "
        out += self.msg
        if self.cause is not None:
            cause = self.cause.strerror if isinstance(self.cause, OSError) and self.cause.strerror else str(self.cause)
            out += (": " if self.msg else "") + cause
        if self.remedy:
            if not out.endswith("."):
                out += "."
            out += " Remedy: " + self.remedy
        return out

    def __str__(self):
        return self._text()


class NotJob(JobstoreError, FileNotFoundError):
    """The directory has no job.json, or does not exist (ErrNotJob); also a
    FileNotFoundError."""
    code = "not_job"


class Exists(JobstoreError, FileExistsError):
    """A write-once record, or the job ID, is taken (ErrExists); also a
    FileExistsError."""
    code = "exists"


class Corrupt(JobstoreError):
    """The file stayed unreadable as JSON through every read (ErrCorrupt)."""
    code = "corrupt"


class TooLarge(JobstoreError):
    """A record over MAX_SIZE: refused on read and on write (ErrTooLarge)."""
    code = "too_large"


class Invalid(JobstoreError, ValueError):
    """A value is not acceptable; subject names the field (ErrInvalid);
    also a ValueError."""
    code = "invalid"


class WrongState(JobstoreError):
    """The job's state refuses the operation, e.g. a cancel of a finished
    job; nothing was written (ErrWrongState)."""
    code = "wrong_state"


class NewerSchema(JobstoreError):
    """The record was written by a newer jobstore; found and supported hold
    the two versions (ErrNewerSchema)."""
    code = "newer_schema"


class NoMigration(JobstoreError):
    """No migration step from the record's schema version (ErrNoMigration)."""
    code = "no_migration"


class Locked(JobstoreError):
    """Another process holds the job's job.lock (ErrLocked)."""
    code = "locked"


class CancelRequested(JobstoreError):
    """The job has a cancel request (ErrCancelRequested)."""
    code = "cancel_requested"


class NotRegular(JobstoreError):
    """A job directory that is a link, or a record that is not a regular
    file (a link, a FIFO, a socket, a device): never followed nor read
    (ErrNotRegular)."""
    code = "not_regular"


class NotOwner(JobstoreError):
    """A runner no longer owns its job (ErrNotOwner)."""
    code = "not_owner"


class Timeout(JobstoreError, TimeoutError):
    """A wait ended by its timeout before the job did (CodeTimeout); also
    the built-in TimeoutError."""
    code = "timeout"


class NotDue(JobstoreError):
    """The job may not start yet: its not_before, or the retry_at of a
    pending retry, is later than now (ErrNotDue)."""
    code = "not_due"


_NOT_JOB_REMEDY = "that directory is not a job: check the path, or submit the job first"
_CORRUPT_REMEDY = ("jobstore's durable writes are never torn, so the file was damaged by a power cut after a NoSync write "
                   "(a coalesced progress update), by a writer that did not use the atomic protocol, or by the disk; "
                   "restore it from a backup or remove it (a removed status.json reads as \"nothing has run yet\"); "
                   "'jobstore check ROOT' lists the other unreadable jobs")
_IRREGULAR_REMEDY = ("remove or rename it: a job directory is a plain directory and its records are regular files; "
                     "jobstore never follows a link out of the root nor opens a FIFO, socket or device")
_ID_RULE = ("1-128 characters of [A-Za-z0-9._-], not starting with '.' or '-', not ending with '.', "
            "not a Windows device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, with any extension), not index.json")


def _not_job(op, job_dir):
    if not os.path.lexists(job_dir):  # as Go's: a missing directory says so
        return NotJob("no such directory", op=op, path=job_dir,
                      remedy="check the path: no directory is there (a removed job leaves none)")
    return NotJob("no job.json here", op=op, path=job_dir, remedy=_NOT_JOB_REMEDY)


def _invalid(op, path, subject, msg, found=None, supported=None, remedy=""):
    return Invalid(msg, op=op, path=path, subject=subject, found=found, supported=supported,
                   remedy=remedy or "correct the " + subject + " field")


def _io_error(op, path, cause, msg, remedy):
    return JobstoreError(msg, op=op, path=path, cause=cause, remedy=remedy)


def _describe_type(mode):
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _irregular(op, path, mode):
    what = _describe_type(mode)
    return NotRegular("is %s, not a regular file or a plain directory" % what,
                      op=op, path=path, found=what, remedy=_IRREGULAR_REMEDY)


# ---------------------------------------------------------------- job IDs

_ID_CHARS = re.compile(r"[A-Za-z0-9._-]*\Z")
_DEVICE_STEMS = {"CON", "PRN", "AUX", "NUL"}
_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford's base 32, lower case
_last_id_time = [datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)]
_last_id_lock = threading.Lock()


def validate_job_id(job_id, op="validate job ID", path=""):
    """Raise Invalid (subject "job_id") unless job_id can name a job
    directory on Linux, macOS and Windows: 1 to 128 characters of
    [A-Za-z0-9._-], not starting with '.' or '-', not ending with '.', not a
    Windows device name (CON, AUX, COM1, ... alone or with an extension),
    not index.json in any case (ValidateJobID)."""

    def bad(msg):
        return _invalid(op, path, "job_id", msg, found=job_id, supported=_ID_RULE,
                        remedy="choose an ID of letters, digits, '.', '_' and '-' that starts with a letter or digit")

    if not isinstance(job_id, str):
        raise bad("is %s, not a string" % type(job_id).__name__)
    if job_id == "":
        raise bad("is empty")
    if len(job_id) > 128:
        raise bad("is %d characters long, more than 128" % len(job_id))
    if job_id[0] in ".-":
        raise bad("%r starts with %r" % (job_id, job_id[0]))
    if not _ID_CHARS.match(job_id) or not job_id.isascii():
        i = next(i for i, c in enumerate(job_id) if not (c.isascii() and _ID_CHARS.match(c)))
        at = len(job_id[:i].encode("utf-8", "surrogatepass"))  # a byte offset, as Go's ValidateJobID says
        raise bad("%r has the character %r at byte %d" % (job_id, job_id[i], at))
    if job_id.endswith("."):
        raise bad("%r ends with '.', which Windows drops from a file name" % job_id)
    stem = job_id.split(".", 1)[0].upper()
    if stem in _DEVICE_STEMS or (len(stem) == 4 and stem[:3] in ("COM", "LPT") and stem[3].isdigit()):
        raise bad("%r is a Windows device name, which Windows cannot create as a directory" % job_id)
    if job_id.lower() == INDEX_FILE:
        raise bad("%r is the name of the root's %s" % (job_id, INDEX_FILE))


def new_job_id():
    """A new job ID such as "20261130T093540.123456Z-7k2m9xq4ab": the UTC
    time to the microsecond, then 10 random characters, as NewJobID makes
    them. IDs sort by time; within one process each sorts after the last."""
    with _last_id_lock:
        t = _utcnow()
        if t <= _last_id_time[0]:
            t = _last_id_time[0] + datetime.timedelta(microseconds=1)
        _last_id_time[0] = t
    rand = "".join(_ID_ALPHABET[b & 31] for b in secrets.token_bytes(10))
    return t.strftime("%Y%m%dT%H%M%S.%fZ") + "-" + rand


def is_temp_name(name):
    """True for a jobstore temp file name: "." + a record's name + digits
    (IsTempName)."""
    name = os.path.basename(name)
    for target in (SPEC_FILE, STATUS_FILE, CANCEL_FILE, INDEX_FILE, "owner.json"):
        p = "." + target
        rest = name[len(p):]
        if name.startswith(p) and rest and rest.isascii() and rest.isdigit():
            return True
    return False


# ---------------------------------------------------------------- timestamps

_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})?\Z")


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def now():
    """The current time as the format writes it: UTC, microseconds, +00:00."""
    return _utcnow().isoformat(timespec="microseconds")


def parse_time(value):
    """An aware UTC datetime from a timestamp of the format: RFC 3339 (Z or
    any offset) or Python's isoformat (a space for T, no offset meaning UTC),
    0 to 9 fractional digits, truncated to the microsecond; years 1..9999
    in UTC. Anything else is Invalid."""
    m = _TIME.match(value) if isinstance(value, str) else None
    if not m:
        raise _invalid("", "", "timestamp", "%r is not an RFC 3339 or isoformat timestamp" % (value,),
                       found=value, supported="an RFC 3339 or isoformat timestamp")
    y, mo, d, h, mi, s, frac, off = m.groups()
    try:
        t = datetime.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s),
                              int((frac or "").ljust(6, "0")[:6]), tzinfo=datetime.timezone.utc)
        if off and off != "Z":
            sign = 1 if off[0] == "+" else -1
            t -= sign * datetime.timedelta(hours=int(off[1:3]), minutes=int(off[4:6]))
    except (ValueError, OverflowError) as e:
        raise _invalid("", "", "timestamp", "%r (%s)" % (value, e), found=value,
                       supported="a real date within years 1..9999") from None
    return t


# ---------------------------------------------------------------- decoding


def _schema_version(record):
    """The rule of migrate.go's schemaVersion: missing or null is 0; else a
    JSON integer within 0..2^31-1."""
    v = record.get("schema_version")
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError("%s is not an integer" % json.dumps(v))
    if v < 0 or v > _MAX_SCHEMA_VERSION:
        raise ValueError("%d is out of range 0..%d" % (v, _MAX_SCHEMA_VERSION))
    return v


def _migration_steps(file):
    """steps[n] turns a record of version n into n+1 (migrate.go). Version
    2 of job.json and status.json adds optional fields only, so its step
    changes nothing; a version-0 record is NoMigration."""
    if file in (SPEC_FILE, STATUS_FILE):
        return {1: lambda rec: rec}
    return {}


def _migrate(record, file, current):
    """Bring record (a decoded JSON object) to version current, as
    migrate.go's migrate does; returns (record, migrated)."""
    op = "migrate " + file
    try:
        v = _schema_version(record)
    except ValueError as e:
        raise _invalid(op, "", "schema_version", str(e), found=record.get("schema_version"), supported=current,
                       remedy="set schema_version to an integer; this jobstore writes %d" % current) from None
    if v > current:
        raise NewerSchema("written by a newer jobstore (schema_version %d); this version understands up to %d" % (v, current),
                          op=op, subject="schema_version", found=v, supported=current,
                          remedy="upgrade jobstore (or the tool reading this record) to a version that understands it; "
                                 "the record is left as it is")
    out = json.loads(json.dumps(record))  # a deep copy: a step may edit nested values
    steps = _migration_steps(file)
    start = v
    while v < current:
        step = steps.get(v)
        if step is None:
            raise NoMigration("no migration from schema_version %d to %d" % (v, v + 1), op=op, subject="schema_version",
                              found=v, supported=current,
                              remedy="rewrite the record at schema_version %d, or use the jobstore release that wrote it" % current)
        try:
            out = step(out) or {}
        except Exception as e:  # a step that does not fit the record
            raise NoMigration("migration from schema_version %d to %d failed" % (v, v + 1), op=op, subject="schema_version",
                              found=v, supported=current, cause=e,
                              remedy="the record does not fit the migration; correct it by hand or rewrite it") from e
        v += 1
        out["schema_version"] = v
    out["schema_version"] = current
    return out, start != current


def _describe_damage(data):
    trimmed = data.rstrip(b"\0")
    if not data:
        return "the file is empty: looks like an interrupted write"
    if not trimmed:
        return "the file holds only NUL bytes (%d): looks like an interrupted write whose data never reached the disk" % len(data)
    text = trimmed.decode("utf-8", "replace")
    start = len(text) - len(text.lstrip(" \t\r\n"))
    complete = cut = False
    end = 0
    if start == len(text):
        cut = True
    else:
        try:
            _, end = _DECODER.raw_decode(text, start)
            complete = True
        except ValueError as e:
            cut = getattr(e, "pos", 0) >= len(text) or str(e).startswith("Unterminated string")
    if len(trimmed) < len(data) and (complete or cut):
        return "the file ends in %d NUL bytes: looks like an interrupted write whose data never reached the disk" % (len(data) - len(trimmed))
    if cut:
        return "the JSON ends early at byte %d: looks like an interrupted write (truncated file)" % len(data)
    if complete:
        return "not one JSON value: more data follows the value that ends at byte %d" % len(text[:end].encode("utf-8"))
    return "not JSON at all (%d bytes)" % len(data)


def _no_constant(name):
    raise ValueError("%s is not JSON" % name)


_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def _parse(data, file):
    """One JSON object from data: Corrupt for bytes that are not one JSON
    value, Invalid for a value that is not an object."""
    try:
        text = data.decode("utf-8", "replace")  # Go replaces invalid UTF-8 too
        value = _DECODER.decode(text)
    except ValueError as e:
        raise Corrupt(_describe_damage(data), found=len(data), cause=e, remedy=_CORRUPT_REMEDY) from None
    if not isinstance(value, dict):
        raise _invalid("", "", file, "is not a JSON object", supported="a JSON object",
                       remedy="a record is a JSON object; restore it or remove it")
    return value


def _field(rec, name, kind, optional_empty=True):
    """rec[name] checked as Go's decoder checks it: None (JSON null) and a
    missing field are the zero value; a value of the wrong type is Invalid
    naming the field. kind: "str", "int", "uint", "number", "time", "any",
    "ms" (an int of milliseconds within MAX_MS either way, as Go holds a
    time.Duration)."""
    v = rec.get(name)
    if v is None:
        return None
    want = {"str": "string", "int": "int", "ms": "int (milliseconds)", "uint": "uint64", "number": "float64",
            "time": "an RFC 3339 or isoformat timestamp", "labels": "map[string]string"}.get(kind, kind)
    ok = True
    if kind == "str":
        ok = isinstance(v, str)
    elif kind == "ms":
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_MS:
            raise _invalid("", "", name, "%d ms is more than a Go time.Duration holds (%d ms, about 292 years)" % (v, MAX_MS),
                           found=v, supported="at most %d" % MAX_MS)
        ok = isinstance(v, int) and not isinstance(v, bool)
    elif kind in ("int", "uint"):
        ok = isinstance(v, int) and not isinstance(v, bool)
        if ok and kind == "uint":
            ok = 0 <= v <= _MAX_UINT64
        elif ok:
            ok = -_MAX_INT64 - 1 <= v <= _MAX_INT64
    elif kind == "number":
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    elif kind == "time":
        if not isinstance(v, str):
            ok = False
        else:
            try:
                parse_time(v)
            except Invalid as e:
                raise _invalid("", "", name, "is %s, want %s" % (e.msg, want), found=v, supported=want) from None
    elif kind == "labels":
        ok = isinstance(v, dict) and all(isinstance(x, str) or x is None for x in v.values())
    if not ok:
        raise _invalid("", "", name, "is %s, want %s" % (json.dumps(v), want), found=v, supported=want)
    return v


def _put(out, name, value):
    """Sets out[name] unless value is empty (Go's omitempty)."""
    if value is None or value == "" or value == {} or (value == 0 and not isinstance(value, float) and name not in ("exit_code",)):
        return
    out[name] = value


def _decode(data, file, current):
    rec = _parse(data, file)
    try:
        v = _schema_version(rec)
        fast = v == current or (file in (SPEC_FILE, STATUS_FILE) and _BASE_SCHEMA_VERSION <= v <= current)
    except ValueError:
        fast = False
    if fast:
        return rec, False
    return _migrate(rec, file, current)


def decode_spec(data):
    """job.json's bytes as a dict, as DecodeSpec reads them (no file, no
    retry): migration in memory, then validation. Returns (spec, migrated).
    Corrupt for bytes that are not one JSON value; NewerSchema,
    NoMigration, Invalid (subject naming the field) as the Go reader."""
    rec, migrated = _decode(data, SPEC_FILE, JOB_SCHEMA_VERSION)
    job_id = _field(rec, "job_id", "str") or ""
    kind = _field(rec, "kind", "str") or ""
    submitted_at = _field(rec, "submitted_at", "time")
    submitted_by = _field(rec, "submitted_by", "str")
    labels = _field(rec, "labels", "labels")
    validate_job_id(job_id, op="")
    if kind == "":
        raise _invalid("", "", "kind", "is empty", found=kind, supported="a non-empty string")
    spec = {"schema_version": JOB_SCHEMA_VERSION, "job_id": job_id, "kind": kind}
    if rec.get("params") is not None:
        spec["params"] = rec["params"]
    spec["submitted_at"] = submitted_at if submitted_at is not None else "0001-01-01T00:00:00.000000+00:00"
    _put(spec, "submitted_by", submitted_by)
    if labels:
        spec["labels"] = {k: (v or "") for k, v in labels.items()}
    for name, kind in _SCHEDULE_FIELDS:
        v = _field(rec, name, kind)
        if kind in ("int", "ms") and name != "priority" and v is not None and v < 0:
            raise _invalid("", "", name, "%d is negative" % v, found=v, supported="0 (the default) or more")
        _put(spec, name, v)
    if spec.get("max_backoff_ms") and spec["max_backoff_ms"] < spec.get("backoff_ms", 0):
        raise _invalid("", "", "max_backoff_ms", "the cap is below the first delay", found=spec["max_backoff_ms"],
                       supported="0 or at least backoff_ms")
    return spec, migrated


# The retry and scheduling fields of job.json (schema version 2).
_SCHEDULE_FIELDS = (("max_attempts", "int"), ("backoff_ms", "ms"), ("max_backoff_ms", "ms"), ("not_before", "time"),
                    ("priority", "int"), ("timeout_ms", "ms"))

_ATTEMPT_STATES = ("succeeded", "failed", "cancelled", "lost")


_STATUS_FIELDS = (
    ("message", "str"), ("updated_at", "time"), ("started_at", "time"), ("finished_at", "time"),
    ("pid", "int"), ("host", "str"), ("pid_scope", "str"), ("pid_start", "str"), ("lease_ms", "ms"),
    ("attempt", "uint"), ("exit_code", "int"), ("error", "str"), ("remedy", "str"),
)


def decode_status(data):
    """status.json's bytes as a dict, as DecodeStatus reads them (no file,
    no retry). Returns (status, migrated). Errors as decode_spec."""
    rec, migrated = _decode(data, STATUS_FILE, STATUS_SCHEMA_VERSION)
    job_id = _field(rec, "job_id", "str") or ""
    state = _field(rec, "state", "str") or ""
    seq = _field(rec, "seq", "uint") or 0
    progress = _field(rec, "progress", "number")
    values = {name: _field(rec, name, kind) for name, kind in _STATUS_FIELDS}
    if state not in STATES:
        raise _invalid("", "", "state", "%s is not a known state" % json.dumps(state), found=state, supported=list(STATES))
    if progress is not None and not (0 <= progress <= 1):
        raise _invalid("", "", "progress", "%r is not within [0, 1]" % progress, found=progress,
                       supported="a number within [0, 1]")
    if job_id:
        validate_job_id(job_id, op="")
    if (values["lease_ms"] or 0) < 0:
        raise _invalid("", "", "lease_ms", "%d ms is negative" % values["lease_ms"], found=values["lease_ms"],
                       supported="0 (none) or more")
    st = {"schema_version": STATUS_SCHEMA_VERSION, "job_id": job_id, "state": state, "seq": seq}
    if progress is not None:
        st["progress"] = progress
    st["updated_at"] = values["updated_at"] or "0001-01-01T00:00:00.000000+00:00"
    for name, _ in _STATUS_FIELDS:
        if name == "updated_at":
            continue
        if name == "exit_code":
            if values[name] is not None:
                st[name] = values[name]
            continue
        _put(st, name, values[name])
    retry_at = _field(rec, "retry_at", "time")
    if retry_at is not None:
        if state != "queued":
            raise _invalid("", "", "retry_at", "a pending retry in a %s record" % state, found=state, supported="a queued record")
        st["retry_at"] = retry_at
    attempts = rec.get("attempts")
    if attempts is not None:
        if not isinstance(attempts, list):
            raise _invalid("", "", "attempts", "is %s, want a list" % json.dumps(attempts), found=attempts, supported="a list")
        for i, a in enumerate(attempts):
            where = "attempts[%d]" % i
            if not isinstance(a, dict):
                raise _invalid("", "", where, "is %s, want an object" % json.dumps(a), found=a, supported="an object")
            if a.get("state") not in _ATTEMPT_STATES:
                raise _invalid("", "", where + ".state", "%s is not how an attempt ends" % json.dumps(a.get("state")),
                               found=a.get("state"), supported=list(_ATTEMPT_STATES))
            if _field(a, "ended_at", "time") is None:
                raise _invalid("", "", where + ".ended_at", "is missing", supported="a timestamp")
        if attempts:
            st["attempts"] = attempts
    return st, migrated


def decode_cancel(data):
    """cancel.json's bytes as a dict, as DecodeCancel reads them. Returns
    (request, migrated)."""
    rec, migrated = _decode(data, CANCEL_FILE, CANCEL_SCHEMA_VERSION)
    job_id = _field(rec, "job_id", "str") or ""
    requested_at = _field(rec, "requested_at", "time")
    requested_by = _field(rec, "requested_by", "str")
    reason = _field(rec, "reason", "str")
    validate_job_id(job_id, op="")
    if requested_at is None:
        raise _invalid("", "", "requested_at", "is missing", supported="a timestamp")
    req = {"schema_version": CANCEL_SCHEMA_VERSION, "job_id": job_id, "requested_at": requested_at}
    _put(req, "requested_by", requested_by)
    _put(req, "reason", reason)
    return req, migrated


# ---------------------------------------------------------------- reading

_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
_LINK_ERRNOS = {errno.ELOOP, getattr(errno, "EMLINK", errno.ELOOP), getattr(errno, "EFTYPE", errno.ELOOP)}
_ESTALE = getattr(errno, "ESTALE", None)


class _Vanished(Exception):
    """A file that opened, then was not found by its stat or a read: a stale
    handle on a network filesystem, not an absent file."""


def _read_once(op, path, max_size):
    """The bytes of the regular file at path, or None when it is absent.
    Never follows a link, never waits on a FIFO."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno in _LINK_ERRNOS or (e.errno == errno.ENXIO and not _WINDOWS):
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                raise e from None
            if not stat.S_ISREG(mode):
                raise _irregular(op, path, mode) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _irregular(op, path, st.st_mode)
        if _WINDOWS or not hasattr(os, "O_NOFOLLOW"):
            # No O_NOFOLLOW: a link is told by its name (a best effort).
            lmode = os.lstat(path).st_mode
            if stat.S_ISLNK(lmode):
                raise _irregular(op, path, lmode)
        if st.st_size > max_size:
            raise _too_large(op, path, st.st_size, max_size)
        chunks, size = [], 0
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
            size += len(b)
            if size > max_size:
                raise _too_large(op, path, size, max_size)
        return b"".join(chunks)
    except FileNotFoundError as e:
        raise _Vanished(e) from None
    finally:
        os.close(fd)


def _too_large(op, path, size, limit):
    return TooLarge("%d bytes, more than the limit of %d" % (size, limit), op=op, path=path, found=size, supported=limit,
                    remedy="jobstore refuses to write a record this large, so an older writer or another tool made it; "
                           "read it with a larger limit, or remove it")


def _transient(e):
    """A read error worth another attempt: on Windows, a sharing violation
    or access denied while a writer replaces the file."""
    return _WINDOWS and isinstance(e, PermissionError)


def _read_tolerant(op, path, decode, attempts=READ_ATTEMPTS, delay=READ_DELAY, max_size=MAX_SIZE):
    """The retry policy of tolerant.go: decode(bytes) of the file at path,
    None when it is absent. Corrupt (a torn moment) and transient errors are
    retried attempts times delay apart; a stale handle on its own budget."""
    last = None
    stale_since = None
    stale_pause = 0.005
    attempt = 0
    while attempt < attempts:
        try:
            data = _read_once(op, path, max_size)
            if data is None:
                return None
            return decode(data)
        except Corrupt as e:
            last = e
        except JobstoreError:
            raise
        except (_Vanished, OSError) as e:
            cause = e.args[0] if isinstance(e, _Vanished) else e
            if isinstance(e, _Vanished) or (_ESTALE is not None and getattr(e, "errno", None) == _ESTALE):
                t = time.monotonic()
                if stale_since is None:
                    stale_since = t
                left = _STALE_RETRY_FOR - (t - stale_since)
                if left > 0:
                    time.sleep(min(stale_pause, left))
                    stale_pause = min(2 * stale_pause, 0.1)
                    continue
                raise _io_error(op, path, cause, "the file handle is still stale after %gs of reopening" % _STALE_RETRY_FOR,
                                "another host keeps replacing the file and this client's cache of it lags; read again later") from e
            if not _transient(e):
                remedy = "check that the path names a record file in a directory, and the disk, then read again"
                if isinstance(e, PermissionError):
                    remedy = "give the reading user read permission on the file and its directory"
                raise _io_error(op, path, e, "cannot read the file", remedy) from e
            last = e
        attempt += 1
        if attempt < attempts:
            time.sleep(delay)
    if isinstance(last, Corrupt):
        raise Corrupt(last.msg + ", the same through %d reads" % attempts, op=op, path=path, found=last.found,
                      cause=last.cause, remedy=last.remedy) from None
    raise _io_error(op, path, last, "still unreadable after %d attempts" % attempts,
                    "the file is busy or on a filesystem that lost track of it; read again later")


def _with_path(e, op, path):
    """e, a decode error, with the op and path it was found at."""
    if not e.op:
        e.op = op
    if not e.path:
        e.path = str(path)
    e.args = (e._text(),)
    return e


def _job_dir(job_dir):
    """job_dir as every function here reads it, as Go's JobDir is read
    (filepath.Clean): "root/id/", "root/id//" and "root/id/." name the
    entry root/id, so that a link there is refused rather than followed by
    the kernel through the trailing separator or "."."""
    job_dir = os.fspath(job_dir)
    return os.path.normpath(job_dir) if job_dir else job_dir


def _check_job_dir(op, job_dir):
    """The job directory must be a directory, not a link to one (NotRegular);
    a missing one is NotJob. A trailing separator would make lstat follow
    a link, so it is dropped first."""
    try:
        mode = os.lstat(job_dir.rstrip(os.sep + (os.altsep or "")) or job_dir).st_mode
    except FileNotFoundError:
        raise _not_job(op, job_dir) from None
    except NotADirectoryError:
        raise _not_job(op, job_dir) from None
    if not stat.S_ISDIR(mode):
        raise _irregular(op, job_dir, mode)


def _read_record(op, job_dir, name, decode):
    path = os.path.join(job_dir, name)
    try:
        return _read_tolerant(op, path, lambda b: decode(b)[0])
    except JobstoreError as e:
        raise _with_path(e, op, path) from None


def _base(path):
    """The last element of path, as Go's JobDir.ID: trailing separators and
    "." elements dropped, ".." kept (a job directory is named by its own
    last element)."""
    seps = os.sep + (os.altsep or "")
    stripped = path.rstrip(seps)
    while len(stripped) >= 2 and stripped[-1] == "." and stripped[-2] in seps:
        stripped = stripped[:-1].rstrip(seps)
    return os.path.basename(stripped) if stripped else os.sep


def _wrong_id(op, path, found, job_dir):
    name = _base(job_dir)
    return _invalid(op, path, "job_id", "%s differs from the directory name %s" % (json.dumps(found), json.dumps(name)),
                    found=found, supported=name)


def read_spec(job_dir):
    """job.json of job_dir as a dict (see decode_spec), read as ReadSpec
    does. NotJob if job_dir has no job.json; Invalid (subject "job_id") if
    its job_id is not the directory's name; NotRegular for a job directory
    that is a link or a job.json that is not a regular file."""
    op = "read spec"
    job_dir = _job_dir(job_dir)
    _check_job_dir(op, job_dir)
    spec = _read_record(op, job_dir, SPEC_FILE, decode_spec)
    if spec is None:
        raise _not_job(op, job_dir)
    if spec["job_id"] != _base(job_dir):
        raise _wrong_id(op, os.path.join(job_dir, SPEC_FILE), spec["job_id"], job_dir)
    return spec


def read_status(job_dir):
    """status.json of job_dir as a dict (see decode_status), or None while
    nothing has run yet, read as ReadStatus does: a torn or busy file is
    read again READ_ATTEMPTS times before it is Corrupt; NotJob if job_dir
    has no job.json (a job removed meanwhile included); NewerSchema naming
    both versions; NotRegular for a link, a FIFO, a socket or a device,
    never followed and never waited on; TooLarge over MAX_SIZE."""
    op = "read status"
    job_dir = _job_dir(job_dir)
    _check_job_dir(op, job_dir)
    st = _read_record(op, job_dir, STATUS_FILE, decode_status)
    if not os.path.lexists(os.path.join(job_dir, SPEC_FILE)):
        raise _not_job(op, job_dir)
    if st is None:
        return None
    if st["job_id"] == "":
        st["job_id"] = _base(job_dir)
    elif st["job_id"] != _base(job_dir):
        raise _wrong_id(op, os.path.join(job_dir, STATUS_FILE), st["job_id"], job_dir)
    return st


def read_cancel(job_dir):
    """cancel.json of job_dir as a dict, or None when the job has no cancel
    request (ReadCancel)."""
    op = "read cancel request"
    job_dir = _job_dir(job_dir)
    _check_job_dir(op, job_dir)
    req = _read_record(op, job_dir, CANCEL_FILE, decode_cancel)
    if not os.path.lexists(os.path.join(job_dir, SPEC_FILE)):
        raise _not_job(op, job_dir)
    if req is not None and req["job_id"] != _base(job_dir):
        raise _wrong_id(op, os.path.join(job_dir, CANCEL_FILE), req["job_id"], job_dir)
    return req


def _spec_field(name, default=None):
    return property(lambda self: (self.spec or {}).get(name, default))


def _status_field(name, default=None):
    return property(lambda self: (self.status or {}).get(name, default))


class Entry(tuple):
    """One job as list_jobs found it: job_dir, job_id, spec (None if
    unreadable), status (None if none yet or unreadable), error (a
    JobstoreError, or None).

    For a table of jobs it also gives, as read (None, or the zero shown,
    when the record that holds it is absent or unreadable): state, kind,
    progress (a number within [0, 1], or None), message, labels (a dict),
    updated_at, attempt (the current attempt's number, 0 before the
    first), attempts (the list of ended attempts status.json keeps),
    not_before, retry_at (a pending retry's time), due (the later of the
    two: when a queued job may start; None: at once), priority and
    max_attempts (0: the default, one attempt). Timestamps are the strings
    the records hold (parse_time reads them)."""

    __slots__ = ()

    def __new__(cls, job_dir, job_id, spec, status, error):
        return tuple.__new__(cls, (job_dir, job_id, spec, status, error))

    job_dir = property(lambda self: self[0])
    job_id = property(lambda self: self[1])
    spec = property(lambda self: self[2])
    status = property(lambda self: self[3])
    error = property(lambda self: self[4])

    state = _status_field("state")
    kind = _spec_field("kind")
    progress = _status_field("progress")
    message = _status_field("message", "")
    labels = property(lambda self: dict((self.spec or {}).get("labels") or {}))
    updated_at = _status_field("updated_at")
    attempt = _status_field("attempt", 0)
    attempts = property(lambda self: list((self.status or {}).get("attempts") or []))
    not_before = _spec_field("not_before")
    retry_at = _status_field("retry_at")
    priority = _spec_field("priority", 0)
    max_attempts = _spec_field("max_attempts", 0)

    @property
    def due(self):
        times = [t for t in (self.not_before, self.retry_at) if t]
        return max(times, key=parse_time) if times else None

    def __repr__(self):
        return "Entry(job_id=%r, state=%r, error=%r)" % (self.job_id, (self.status or {}).get("state"), self.error)


def list_jobs(root):
    """Every job under root, as List reads them: dot-names, index.json and
    anything that is not a directory (a link included) are skipped; every
    other directory is an Entry, one without job.json with error NotJob; a
    job removed while it is read is left out. Order: jobs with a spec by
    submitted_at, then ID; then the others by ID. A root that cannot be
    read is a JobstoreError."""
    root = os.fspath(root)
    try:
        names = sorted(os.listdir(root))
    except OSError as e:
        raise _io_error("list", root, e, "cannot read the jobs root",
                        "check the path, and that this user may read the directory") from e
    entries = []
    for name in names:
        if name.startswith(".") or name == INDEX_FILE:
            continue
        job_dir = os.path.join(root, name)
        try:
            if not stat.S_ISDIR(os.lstat(job_dir).st_mode):
                continue
        except FileNotFoundError:
            continue
        entry = _read_entry(job_dir, name)
        if entry is not None:
            entries.append(entry)

    def key(e):
        if e.spec is not None:
            try:
                return (0, parse_time(e.spec["submitted_at"]), e.job_id)
            except Invalid:
                pass
        return (1, datetime.datetime.min.replace(tzinfo=datetime.timezone.utc), e.job_id)

    entries.sort(key=key)
    return entries


def _read_entry(job_dir, name):
    spec = status = error = None
    try:
        spec = read_spec(job_dir)
    except NotJob as e:
        return Entry(job_dir, name, None, None, e) if os.path.isdir(job_dir) else None
    except JobstoreError as e:
        error = e
    try:
        status = read_status(job_dir)
    except NotJob as e:
        if not os.path.isdir(job_dir):
            return None  # removed meanwhile
        spec, error = None, e
    except JobstoreError as e:
        error = error or e
    return Entry(job_dir, name, spec, status, error)


def wait(job_dir, timeout=None, poll=0.5):
    """The job's final status (state in FINAL_STATES) once it has one,
    reading status.json every poll seconds, as Wait does. What no later
    read can change ends the wait at once, as Go's Wait: NotJob (not a job,
    or removed while waiting), NotRegular (a job directory that is a link,
    a status.json that is a link, a FIFO or a directory), TooLarge (a
    status.json over MAX_SIZE) and NewerSchema; other read errors (a
    corrupt or busy file) are taken as passing. Timeout (a JobstoreError
    and a TimeoutError) once timeout seconds have passed (None: no
    limit)."""
    job_dir = _job_dir(job_dir)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            st = read_status(job_dir)
        except (NotJob, NotRegular, TooLarge, NewerSchema):
            raise
        except JobstoreError:
            st = None
        if st is not None and st["state"] in FINAL_STATES:
            return st
        pause = poll
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("the job has not ended after %gs (state %s)" % (timeout, (st or {}).get("state", "not yet run")),
                              op="wait", path=job_dir,
                              remedy="wait longer, or see why the job has not ended ('jobstore show DIR')")
            pause = min(poll, left)
        time.sleep(pause)


# ---------------------------------------------------------------- writing


def _encode(op, path, record):
    """record as the format writes it: 2-space indent, fields in order, no
    escaping of non-ASCII, a trailing newline; TooLarge over MAX_SIZE."""
    try:
        data = (json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    except (TypeError, ValueError) as e:
        raise _invalid(op, path, "params", "is not JSON: %s" % e, supported="a JSON value",
                       remedy="pass params made of dicts, lists, strings, numbers (not NaN), booleans and None") from None
    if len(data) > MAX_SIZE:
        raise TooLarge("the record is %d bytes encoded, more than the readers' limit of %d" % (len(data), MAX_SIZE),
                       op=op, path=path, found=len(data), supported=MAX_SIZE,
                       remedy="nothing was written; make the record smaller: keep bulky data in files and put their paths in params")
    return data


def _fsync_dir(path):
    if _WINDOWS:
        return  # Windows cannot fsync a directory
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, getattr(errno, "EOPNOTSUPP", errno.EINVAL)):
            raise
    finally:
        os.close(fd)


def _remove(path):
    try:
        os.unlink(path)
    except PermissionError:
        if not _WINDOWS:
            raise
        os.chmod(path, stat.S_IWRITE)  # Windows does not remove a read-only file
        os.unlink(path)


def _write_temp(directory, name, data, mode):
    """data written and fsynced to a new temp file ".<name><digits>" in
    directory, made with mode; returns its path."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    while True:
        temp = os.path.join(directory, "." + name + str(random.randrange(10 ** 18)))
        try:
            fd = os.open(temp, flags, mode)
            break
        except FileExistsError:
            continue
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _remove(temp)
        raise
    return temp


def _publish_once(temp, target):
    """Give temp the name target only if target is free; True if it did,
    False if target exists. temp is gone either way. Not os.replace, which
    would overwrite: a hard link on POSIX; on Windows os.rename, which is
    MoveFileEx without MOVEFILE_REPLACE_EXISTING."""
    try:
        if _WINDOWS:
            try:
                os.rename(temp, target)
                return True
            except FileExistsError:
                return False
        try:
            os.link(temp, target)
            return True
        except FileExistsError:
            return False
    finally:
        if os.path.lexists(temp):
            _remove(temp)


def request_cancel(job_dir, by=None, reason=None):
    """Ask the job in job_dir to stop: publish cancel.json once, read-only,
    as RequestCancel does (temp file, fsync, link without replacing, the
    directory fsynced). Returns True if this call published the request,
    False if one was there already (the first request stands; not an
    error). A running job's runner hears it through its Run.Context; a
    queued job is cancelled by the next Start (or `jobstore cancel`, or
    Reconcile), which this module does not do (it takes no lock).

    NotJob if job_dir is not a job; WrongState (subject "state") if the job
    has already ended (unless it was cancelled on a request: False);
    Invalid (subject "job_id") for a job_dir whose last element is not a
    job ID, before anything is touched."""
    op = "request cancel"
    job_dir = os.fspath(job_dir)
    job_id = _base(job_dir)
    validate_job_id(job_id, op=op, path=job_dir)  # as given: "root/j/.." is no job, not root
    job_dir = _job_dir(job_dir)
    for name, value in (("requested_by", by), ("reason", reason)):
        if value is not None and not isinstance(value, str):
            raise _invalid(op, job_dir, name, "is %s, not a string" % type(value).__name__, found=value, supported="a string")
    target = os.path.join(job_dir, CANCEL_FILE)
    st = read_status(job_dir)
    if st is not None and st["state"] in FINAL_STATES:
        if st["state"] == "cancelled" and os.path.lexists(target):
            return False
        raise WrongState("the job is already %s; a finished job cannot be cancelled" % st["state"],
                         op=op, path=os.path.join(job_dir, STATUS_FILE), subject="state",
                         found=st["state"], supported=["queued", "running"], remedy="nothing to cancel: the job has ended")
    record = {"schema_version": CANCEL_SCHEMA_VERSION, "job_id": job_id, "requested_at": now()}
    if by:
        record["requested_by"] = by
    if reason:
        record["reason"] = reason
    data = _encode(op, target, record)
    if os.path.lexists(target):
        return False
    try:
        temp = _write_temp(job_dir, CANCEL_FILE, data, 0o444)
        published = _publish_once(temp, target)
        if published:
            _fsync_dir(job_dir)
    except OSError as e:
        raise _io_error(op, target, e, "cannot publish the cancel request",
                        "nothing was published; check free space and that this user may write in the job directory") from e
    return published


def _job_name_taken(op, root, job_id):
    """Exists if job_id's name in root is taken by a job, a file or a
    directory that is not empty; NotRegular for a link or another special
    file; None when it is free or an empty directory (no job)."""
    path = os.path.join(root, job_id)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode):
        raise Exists("the job ID is taken by a regular file", op=op, path=path,
                     remedy="choose another job ID, or remove or rename the file")
    if not stat.S_ISDIR(mode):
        raise _irregular(op, path, mode)
    if not os.listdir(path):
        return
    if not os.path.lexists(os.path.join(path, SPEC_FILE)):
        raise Exists("the job ID is taken by a directory that holds no job.json "
                     "(left by an interrupted write of an older jobstore, or by another program)", op=op, path=path,
                     remedy="choose another job ID, or remove the directory once nothing writes in it")
    raise Exists("already exists; a job record is written once", op=op, path=path,
                 remedy="read the existing record, or submit under a new job ID")


def _remove_build(build):
    try:
        for name in os.listdir(build):
            _remove(os.path.join(build, name))
        os.rmdir(build)
    except OSError:
        pass  # left to jobstore's sweep (ReconcileAll, RebuildIndex), once 15 minutes old


def _makedirs_durable(path):
    missing = []
    p = os.path.abspath(path)
    while not os.path.isdir(p):
        missing.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o777)  # less the umask, as jobstore makes directories
        except FileExistsError:
            pass
        _fsync_dir(os.path.dirname(d))


def _mark_live(root, job_id):
    """Add job_id's entry to root's live index (LIVE_DIR, an empty directory
    per job that has not ended), as Submit does, so that a waiting worker
    finds the job by reading the live jobs rather than the whole root. A
    hint: a failure is ignored, and the job is then found by a worker's
    next full scan of the root (within jobstore's RepairInterval, 15
    minutes)."""
    live = os.path.join(root, LIVE_DIR)
    try:
        try:
            os.mkdir(live, 0o777)
        except FileExistsError:
            pass
        if not stat.S_ISDIR(os.lstat(live).st_mode):
            return
        entry = os.path.join(live, job_id)
        try:
            os.mkdir(entry, 0o777)
        except FileExistsError:
            # left by an earlier job of this name: made again, so that the
            # index changes and a worker reads the job under the name
            # again; made beside it and renamed over it, so that it gets
            # another inode (a worker polling the index on another host
            # tells a remade entry by its inode; rmdir and mkdir may reuse
            # it), else (Windows: a rename does not replace a directory)
            # removed and made again
            tmp = os.path.join(live, ".%s.new-%d" % (job_id, random.randrange(2 ** 64)))
            try:
                os.mkdir(tmp, 0o777)
                try:
                    os.replace(tmp, entry)
                    return
                except OSError:
                    os.rmdir(tmp)
            except OSError:
                pass
            os.rmdir(entry)
            os.mkdir(entry, 0o777)
    except OSError:
        pass


def submit(root, kind, params=None, job_id=None, labels=None, submitted_by=None, max_attempts=0, backoff_ms=0,
           max_backoff_ms=0, not_before=None, priority=0, timeout_ms=0, create=False):
    """Create a job under root, whole or not at all, as Submit does, and
    return its directory. job_id defaults to new_job_id().

    job.json (read-only) and a queued status.json (seq 1) and an empty
    job.lock are written and fsynced in a build directory of root's
    ".submit" (made if missing), the build directory is fsynced and renamed
    to root/job_id without replacing anything (an empty directory there is
    no job and gives way), and .submit and root are fsynced. A reader sees
    the job with both records or not at all; a crash leaves at most the
    build directory, which jobstore's sweep removes.

    Retries and scheduling (max_attempts, backoff_ms, max_backoff_ms,
    not_before as a timestamp string, priority, timeout_ms) are job.json's
    version-2 fields: a job that sets any is written as version 2, others
    as version 1. A *_ms value over MAX_MS (more than Go's time.Duration
    holds) is Invalid, as a negative one is.

    A root that does not exist is a JobstoreError (code "io", its cause a
    FileNotFoundError) and nothing is made, as `jobstore submit` refuses it
    without --create: a mistyped root would otherwise be a new root no
    worker watches. create=True makes it (and its missing parents).

    Invalid (subject naming the field: job_id, kind, params, labels,
    submitted_by, a retry or schedule field) and TooLarge before anything
    is touched; Exists if the ID
    is taken (also a FileExistsError); NotRegular if a link is in its
    place."""
    op = "submit"
    root = os.fspath(root)
    if job_id is None:
        job_id = new_job_id()
    path = os.path.join(root, str(job_id), SPEC_FILE)
    validate_job_id(job_id, op=op, path=os.path.join(root, str(job_id)))
    if not isinstance(kind, str) or kind == "":
        raise _invalid(op, path, "kind", "is empty" if kind == "" else "is %r, not a string" % (kind,), found=kind,
                       supported="a non-empty string", remedy="pass kind, a non-empty string such as \"render\"")
    if submitted_by is not None and not isinstance(submitted_by, str):
        raise _invalid(op, path, "submitted_by", "is %r, not a string" % (submitted_by,), found=submitted_by, supported="a string")
    if labels is not None and not (isinstance(labels, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items())):
        raise _invalid(op, path, "labels", "is %r, not a dict of strings to strings" % (labels,), found=labels,
                       supported="a dict of str to str", remedy="pass labels as {\"name\": \"value\"} with string values")
    spec = {"schema_version": JOB_SCHEMA_VERSION, "job_id": job_id, "kind": kind}
    if params is not None:
        spec["params"] = params
    spec["submitted_at"] = now()
    if submitted_by:
        spec["submitted_by"] = submitted_by
    if labels:
        spec["labels"] = labels
    schedule = {"max_attempts": max_attempts, "backoff_ms": backoff_ms, "max_backoff_ms": max_backoff_ms,
                "not_before": not_before, "priority": priority, "timeout_ms": timeout_ms}
    for name, v in schedule.items():
        _put(spec, name, v)
    if any(name in spec for name in schedule):
        spec["schema_version"] = JOB_SCHEMA_VERSION
    else:
        spec["schema_version"] = _BASE_SCHEMA_VERSION
    spec_data = _encode(op, path, spec)
    try:
        decode_spec(spec_data)  # Go's checks of the retry and schedule fields, before anything is touched
    except JobstoreError as e:
        raise _with_path(e, op, path) from None
    status_data = _encode(op, os.path.join(root, job_id, STATUS_FILE), {
        "schema_version": _BASE_SCHEMA_VERSION, "job_id": job_id, "state": "queued", "seq": 1, "updated_at": now()})

    job_dir = os.path.join(root, job_id)
    if not create and not os.path.exists(root):
        raise _io_error(op, root, FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), root),
                        "no such root: nothing was submitted",
                        "check the path: root is the directory the workers take jobs from; pass create=True to make a new root")
    try:
        if not os.path.isdir(root):
            _makedirs_durable(root)
        _job_name_taken(op, root, job_id)
        submit_dir = os.path.join(root, SUBMIT_DIR)
        try:
            os.mkdir(submit_dir, 0o777)
        except FileExistsError:
            pass
        mode = os.lstat(submit_dir).st_mode
        if not stat.S_ISDIR(mode):
            raise _irregular(op, submit_dir, mode)
        for _ in range(100):
            build = os.path.join(submit_dir, "%s-%d" % (job_id, random.randrange(2 ** 64)))
            try:
                os.mkdir(build, 0o777)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(errno.EEXIST, "no free build directory name", submit_dir)
    except OSError as e:
        if isinstance(e, JobstoreError):
            raise
        raise _io_error(op, job_dir, e, "cannot prepare the job's build directory",
                        "check free space and that this user may write in the jobs root; no job was made") from e
    try:
        os.close(os.open(os.path.join(build, LOCK_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666))
        _publish_once(_write_temp(build, SPEC_FILE, spec_data, 0o444), os.path.join(build, SPEC_FILE))
        os.replace(_write_temp(build, STATUS_FILE, status_data, 0o644), os.path.join(build, STATUS_FILE))
        _fsync_dir(build)
        _publish_build(op, root, build, job_id)
        _mark_live(root, job_id)
    except BaseException as e:
        _remove_build(build)
        if isinstance(e, JobstoreError) or not isinstance(e, OSError):
            raise
        raise _io_error(op, job_dir, e, "cannot build the job",
                        "no job %s was made; check free space, permissions and the disk, then submit it again" % job_id) from e
    try:
        _fsync_dir(submit_dir)
        _fsync_dir(root)
    except OSError as e:
        raise _io_error("fsync directory", root, e,
                        "the job %s is in place and visible, but its rename into the jobs root was not confirmed on disk" % job_id,
                        "check the disk and filesystem; the job exists, so do not submit it again") from e
    return job_dir


def _publish_build(op, root, build, job_id):
    """Rename build to root/job_id, never over a job: rename(2) replaces
    only an empty directory (which is no job); Windows' rename replaces
    nothing, so an empty directory there is removed and the rename tried
    once more, as publishBuild does."""
    target = os.path.join(root, job_id)
    try:
        os.rename(build, target)
        return
    except OSError as e:
        if not os.path.lexists(target):
            raise
        _job_name_taken(op, root, job_id)  # raises Exists unless it is an empty directory
        first = e
    try:
        os.rmdir(target)
    except OSError:
        pass
    try:
        os.rename(build, target)
    except OSError as e:
        if os.path.lexists(target):
            _job_name_taken(op, root, job_id)
            raise Exists("already exists; a job record is written once", op=op, path=target, cause=e,
                         remedy="read the existing record, or submit under a new job ID") from first
        raise


# ---------------------------------------------------------------- retry and remove
#
# The claim protocol of claim.go and internal/attempt, for a finished job:
# job.lock taken without waiting (flock, as the Go library on Unix), then
# the job's next attempt claimed by creating .run-N (mkdir is exclusive on
# every filesystem jobstore supports), the status read again under the
# claim, the record written through a temp file made in .run-N and renamed
# from it (a fence that renames .run-N away makes that rename fail), and
# the claim ended (.run-N renamed to .fenced-N, with .run-N/ended first).
# Of any number of Retry, Remove, Start and RequestCancel calls, in Go or
# here, on any number of hosts, one claims the attempt and acts.

_RUN_PREFIX = ".run-"
_FENCED_PREFIX = ".fenced-"
_END_MARKER = "ended"
_REMOVE_PREFIX = ".remove-"
_MAX_LOCK_RECORD = 4 << 10
_MAX_UINT64 = 2 ** 64 - 1
# How long, and how often, a claim reads a status older than an attempt its
# owner ended: a network filesystem client's view lags (rereadStatus).
_STALE_VIEW_FOR = 2.0
_STALE_VIEW_POLL = 0.05
_DIR_FLAGS = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
              | getattr(os, "O_CLOEXEC", 0))
_NO_WINDOWS_REMEDY = ("run `jobstore retry` or `jobstore rm` (or the Go library's Retry and Remove) on this job: "
                      "they take job.lock as Windows' LockFileEx")


class _Claim:
    """job.lock held (fd) and attempt n claimed (.run-n, made by this
    process: ident is its device and inode)."""

    def __init__(self, job_dir, fd):
        self.job_dir = job_dir
        self.fd = fd
        self.n = 0
        self.ident = None

    @property
    def run(self):
        return os.path.join(self.job_dir, _RUN_PREFIX + str(self.n))

    @property
    def fenced(self):
        return os.path.join(self.job_dir, _FENCED_PREFIX + str(self.n))

    def ours(self):
        """Whether .run-n is still the directory this process made: not
        renamed away by a fence."""
        try:
            st = os.lstat(self.run)
        except OSError:
            return False
        return stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) == self.ident

    def withdraw(self):
        """Remove a claim no record names yet (the files this process made
        in it, then .run-n), so the attempt can be claimed again; a claim
        fenced meanwhile is not ours and is left."""
        if self.ident is None or not self.ours():
            return
        try:
            fd = os.open(self.run, _DIR_FLAGS)
            try:
                if (os.fstat(fd).st_dev, os.fstat(fd).st_ino) != self.ident:
                    return
                for name in os.listdir(fd):
                    if stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                        os.unlink(name, dir_fd=fd)
            finally:
                os.close(fd)
            os.rmdir(self.run)
        except OSError:
            pass  # an empty claim nobody renews: judged gone after a lease

    def end(self):
        """End the attempt: .run-n/ended (its owner ended it after a record
        named it), then .run-n renamed to .fenced-n. Only .run-n itself can
        become .fenced-n, so a .fenced-n that exists is a fence of this
        claim, and the rename is skipped."""
        if self.ours():
            try:
                os.close(os.open(os.path.join(self.run, _END_MARKER),
                                 os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644))
            except OSError:
                pass
        if not os.path.lexists(self.fenced):
            try:
                os.rename(self.run, self.fenced)
            except OSError:
                pass  # fenced by another process meanwhile, or left to be judged over

    def unlock(self):
        """Empty job.lock (no loser names a holder that has gone), then
        release it."""
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def _describe_holder(fd):
    """The holder of job.lock, from the record it wrote there (LockJob's)."""
    try:
        rec = json.loads(os.pread(fd, _MAX_LOCK_RECORD, 0).decode("utf-8"))
        if isinstance(rec, dict) and isinstance(rec.get("pid"), int) and rec["pid"] > 0:
            prog = ' (program "%s")' % rec["program"] if rec.get("program") else ""
            return 'held by pid %d on host "%s"%s since %s, as job.lock records it' % (
                rec["pid"], rec.get("host", ""), prog, rec.get("since", "?"))
    except (OSError, ValueError):
        pass
    return "held by another process (job.lock names no holder)"


def _pid_identity():
    """pid_scope and pid_start of this process as the Go library records
    them on Linux (internal/proc): the boot and pid namespace, and the
    process's start time in clock ticks, so that a Go claimant on this host
    judges a claim this process left when it died at once, by its pid,
    rather than after a lease. Elsewhere, or unreadable: none (judged by
    lease)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            boot = fh.read().strip()
        ns = os.readlink("/proc/self/ns/pid")
        with open("/proc/self/stat", encoding="utf-8", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        start = fields[19]
        int(start)
    except (OSError, IndexError, ValueError):
        return {}
    return {"pid_scope": "linux/%s/%s" % (boot, ns), "pid_start": start}


def _lock_job(op, job_dir):
    """job.lock of job_dir taken exclusively without waiting, as LockJob
    takes it on Unix (flock, created 0644 if missing, never through a
    link), with this process's record written into it. Locked names the
    holder; NotJob without job.json; NotRegular for a job.lock that is not
    a regular file."""
    if not os.path.lexists(os.path.join(job_dir, SPEC_FILE)):
        raise _not_job(op, job_dir)
    path = os.path.join(job_dir, LOCK_FILE)
    flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno in _LINK_ERRNOS or e.errno == errno.ENXIO:
            raise _irregular(op, path, os.lstat(path).st_mode) from None
        if isinstance(e, FileNotFoundError):
            raise _not_job(op, job_dir) from None
        raise _io_error(op, path, e, "cannot open the lock file", "check the job directory and the disk, then try again") from e
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _irregular(op, path, mode)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Locked(_describe_holder(fd), op=op, path=path,
                         remedy="another process is acting on the job; try again once it is done") from None
        except OSError as e:
            raise _io_error(op, path, e, "cannot lock the lock file",
                            "the filesystem may not support locks (some network filesystems do not); "
                            "keep job roots on a local disk") from e
    except BaseException:
        os.close(fd)
        raise
    rec = {"pid": os.getpid(), "host": os.uname().nodename,
           "program": os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python", "since": now()}
    rec.update(_pid_identity())
    data = (json.dumps(rec, separators=(",", ":")) + "\n").encode("utf-8")
    try:
        os.pwrite(fd, data, 0)  # then truncate: a loser never sees an empty record between the two
        os.ftruncate(fd, len(data))
    except OSError:
        pass  # the lock is held all the same; a loser then names no holder
    return _Claim(job_dir, fd)


def _take_next(op, claim, a):
    """Claim the first attempt after a that can be claimed, as claimAfter
    does: attempts over (.fenced-n) are passed; a claim of another process
    (.run-n alone) is Locked. Returns the last attempt passed that its
    owner ended (0: none). Unlike the Go library, this module never judges
    a claimant gone nor fences it: a claim left by a crashed process is
    Locked here until a Go claimant (Start, Retry, Remove, Reconcile)
    passes it, which it does once the claimant is judged gone."""
    ended = 0
    n = a + 1
    while True:
        claim.n = n
        try:
            os.mkdir(claim.run, 0o777)
        except FileExistsError:
            if not os.path.lexists(claim.fenced):
                mode = os.lstat(claim.run).st_mode
                if not stat.S_ISDIR(mode):
                    raise _irregular(op, claim.run, mode) from None
                raise Locked("attempt %d is claimed by another process" % n, op=op, path=claim.run,
                             remedy="another process is starting, cancelling, retrying or removing the job; "
                                    "read the status again and try once it is done") from None
        except FileNotFoundError:
            raise _not_job(op, claim.job_dir) from None
        else:
            if not os.path.lexists(claim.fenced):
                st = os.lstat(claim.run)
                claim.ident = (st.st_dev, st.st_ino)
                return ended
            os.rmdir(claim.run)  # the attempt is over: never revive it
        try:
            if stat.S_ISDIR(os.lstat(claim.fenced).st_mode) and os.path.lexists(os.path.join(claim.fenced, _END_MARKER)):
                ended = n
        except OSError:
            pass
        n += 1


def _reread_status(op, job_dir, ended):
    """The status once the claim is held. A status naming an earlier
    attempt than one its owner ended is this host's view lagging behind the
    shared filesystem: read again for up to _STALE_VIEW_FOR, then Locked."""
    deadline = time.monotonic() + _STALE_VIEW_FOR
    while True:
        st = read_status(job_dir)
        if not ended or (st is not None and st.get("attempt", 0) >= ended):
            return st
        if time.monotonic() >= deadline:
            raise Locked("attempt %d was ended by its runner after it wrote a status, yet status.json still names an "
                         "earlier one: this host's view of the shared filesystem is behind" % ended,
                         op=op, path=os.path.join(job_dir, STATUS_FILE), remedy="read the status again in a while")
        time.sleep(_STALE_VIEW_POLL)


def _claim_finished(op, job_dir, refuse):
    """job.lock taken and the finished job's next attempt claimed, as Go's
    claimFinished: refuse(status) is asked before the lock, under it, and
    of the status read once the claim is held, which must name no later
    attempt. Returns the claim and that status; on any failure nothing is
    held and nothing was changed."""
    refuse(read_status(job_dir))  # before job.lock, which records its holder
    claim = _lock_job(op, job_dir)
    try:
        st = read_status(job_dir)
        refuse(st)
        a = st.get("attempt", 0)
        try:
            ended = _take_next(op, claim, a)
        except JobstoreError:
            raise
        except OSError as e:
            raise _io_error(op, claim.run, e, "cannot claim the attempt",
                            "check that this user may make directories in the job directory") from e
        try:
            st = _reread_status(op, job_dir, ended)
            if st is not None and st["state"] in FINAL_STATES and st.get("attempt", 0) > a:
                raise Locked("attempt %d claimed the job meanwhile" % st["attempt"], op=op,
                             path=os.path.join(job_dir, STATUS_FILE), remedy="read the status again")
            refuse(st)
        except BaseException:
            claim.withdraw()
            raise
    except BaseException:
        claim.unlock()
        raise
    return claim, st


def _job_dir_to_claim(op, job_dir):
    """job_dir checked and cleaned as Go's openToClaim does: its last
    element, as given, must be a job ID (Invalid before anything is
    touched); a link is NotRegular. Windows is refused (see retry)."""
    job_dir = os.fspath(job_dir)
    validate_job_id(_base(job_dir), op=op, path=job_dir)
    job_dir = _job_dir(job_dir)
    if fcntl is None:
        raise JobstoreError("not supported on this platform by this module", op=op, path=job_dir, remedy=_NO_WINDOWS_REMEDY)
    _check_job_dir(op, job_dir)
    return job_dir


def _status_path(job_dir):
    return os.path.join(job_dir, STATUS_FILE)


def _has_spec(job_dir):
    return os.path.lexists(os.path.join(job_dir, SPEC_FILE))


def _refuse_unretryable(op, job_dir):
    def refuse(st):
        if st is not None and st["state"] in ("failed", "lost", "cancelled"):
            return
        if not _has_spec(job_dir):
            raise _not_job(op, job_dir)
        found, msg, remedy = "", "the job has no status yet: it has not run", "nothing to retry: it runs when a worker takes it"
        if st is not None:
            found = st["state"]
            if found == "queued":
                msg = "the job is queued: it has yet to run"
            elif found == "running":
                msg = 'the job is running (pid %d on host "%s")' % (st.get("pid", 0), st.get("host", ""))
                remedy = "wait for it to end: a failed attempt is retried by its policy (max_attempts), and a finished job by hand"
            else:
                msg = "the job %s; there is nothing to retry" % found
                remedy = "submit a new job to run this work again"
        raise WrongState(msg, op=op, path=_status_path(job_dir), subject="state", found=found,
                         supported=["failed", "lost", "cancelled"], remedy=remedy)
    return refuse


def _refuse_unfinished(op, job_dir):
    def refuse(st):
        if st is not None and st["state"] in FINAL_STATES:
            return
        if not _has_spec(job_dir):
            raise _not_job(op, job_dir)
        found = ""
        msg = "the job has no status yet (it was submitted a moment ago, or its submission stopped after job.json)"
        remedy = "cancel the job first (request_cancel), then remove it"
        if st is not None:
            found = st["state"]
            msg = "the job is " + found
            if found == "running":
                msg += ' (pid %d on host "%s")' % (st.get("pid", 0), st.get("host", ""))
                remedy = "wait for the job to end, or cancel it and remove it once it has"
        if found != "running" and os.path.lexists(os.path.join(job_dir, CANCEL_FILE)):
            msg += ", with a cancel request not yet carried out"
            remedy = "remove it once it is cancelled: its canceller marks it so in a moment"
        raise WrongState(msg + "; only a finished job is removed", op=op, path=_status_path(job_dir), subject="state",
                         found=found, supported=["succeeded", "failed", "cancelled", "lost"], remedy=remedy)
    return refuse


_ATTEMPT_FIELDS = ("attempt", "state", "interrupted", "started_at", "ended_at", "host", "exit_code", "error")


def _attempt_end(a):
    """One entry of status.json's attempts as the Go library writes it:
    its fields in order, empty ones left out, unknown ones dropped."""
    out = {}
    for name in _ATTEMPT_FIELDS:
        v = a.get(name)
        if name in ("attempt", "state", "ended_at") or (v is not None and v != "" and v is not False):
            out[name] = v if v is not None else 0
    return out


def _write_status_as(op, claim, record):
    """status.json written through the claim: a temp file made in .run-n,
    renamed from there over status.json, the job directory fsynced. A claim
    fenced meanwhile is NotOwner and nothing is written."""
    target = _status_path(claim.job_dir)
    data = _encode(op, target, record)

    def fenced(cause=None):
        return NotOwner("attempt %d was taken over: another process judged this one gone, and its claim is now %s; "
                        "nothing was written" % (claim.n, os.path.basename(claim.fenced)),
                        op=op, path=claim.run, cause=cause, remedy="read the status again")
    if not claim.ours():
        raise fenced()
    temp = _write_temp(claim.run, STATUS_FILE, data, 0o644)
    try:
        if not claim.ours():
            raise fenced()
        os.replace(temp, target)  # by name through .run-n: fails once a fence renamed it
    except BaseException as e:
        if os.path.lexists(temp):
            _remove(temp)
        if isinstance(e, FileNotFoundError):
            raise fenced(e) from e
        raise
    _fsync_dir(claim.job_dir)


def retry(job_dir):
    """Give a job that ended failed, lost or cancelled one more attempt, as
    Go's Retry does: it is written queued again, durably, with seq+1, its
    next attempt's number, its last attempt's outcome added to attempts,
    no retry_at, and the message "retried by hand after attempt N (STATE)";
    a cancelled job's cancel.json is deleted first; then its entry in the
    root's live index is made, so that waiting workers notice.

    It claims the job's next attempt as the Go library does (job.lock,
    then .run-N), so of any number of retry, remove, Start and
    RequestCancel calls, in Go or Python, on any number of hosts, one acts
    on a given record; the others get Locked or WrongState. A claim left by
    a crashed claimant is Locked here (this module never judges one gone):
    Go's Start, Retry, Remove or Reconcile pass it after a lease.

    WrongState (subject "state") for a job that is queued, running,
    succeeded or has no status, nothing written; Locked while another
    process holds job.lock or the next attempt; NotJob, NotRegular (a link
    or FIFO in place of the job directory, status.json or job.lock), or
    Invalid for a job_dir whose last element is not a job ID, before
    anything is touched.

    On Windows it raises JobstoreError and touches nothing: the Go library
    locks job.lock there with LockFileEx on one byte at offset 2**62, which
    msvcrt.locking (a lock from the C runtime's file position) cannot be
    relied on to match, so two claimants could both act."""
    op = "retry"
    job_dir = _job_dir_to_claim(op, job_dir)
    claim, last = _claim_finished(op, job_dir, _refuse_unretryable(op, job_dir))
    try:
        try:
            if last["state"] == "cancelled":
                try:
                    _remove(os.path.join(job_dir, CANCEL_FILE))
                except FileNotFoundError:
                    pass
                except OSError as e:
                    raise _io_error(op, os.path.join(job_dir, CANCEL_FILE), e,
                                    "cannot delete the cancel request of the cancelled job",
                                    "nothing was changed; check that this user may delete files in the job directory") from e
            if last["seq"] >= _MAX_UINT64:
                raise _invalid(op, _status_path(job_dir), "seq", "is %d, the largest there is" % last["seq"],
                               found=last["seq"], remedy="this job's status cannot change any more; submit a new job")
            t = now()
            end = {"attempt": last.get("attempt", 0), "state": last["state"], "started_at": last.get("started_at"),
                   "ended_at": last.get("finished_at") or t, "host": last.get("host"), "exit_code": last.get("exit_code"),
                   "error": last.get("error")}
            attempts = [_attempt_end(a) for a in last.get("attempts", [])]
            if not (attempts and attempts[-1]["attempt"] == end["attempt"] and end["attempt"] != 0):
                attempts.append(_attempt_end(end))
            record = {"schema_version": STATUS_SCHEMA_VERSION, "job_id": last["job_id"], "state": "queued",
                      "seq": last["seq"] + 1,
                      "message": "retried by hand after attempt %d (%s)" % (last.get("attempt", 0), last["state"]),
                      "updated_at": t, "attempt": claim.n, "attempts": attempts}
            try:
                _write_status_as(op, claim, record)
            except OSError as e:
                if isinstance(e, JobstoreError):
                    raise
                raise _io_error(op, _status_path(job_dir), e, "cannot write the queued status",
                                "nothing was changed; check free space and permissions") from e
        except BaseException:
            claim.withdraw()
            raise
        claim.end()
        _mark_live(os.path.dirname(job_dir), _base(job_dir))
    finally:
        claim.unlock()


def remove(job_dir):
    """Remove the finished job in job_dir, as Go's Remove does: once its
    next attempt is claimed (as retry claims it), the job directory is
    renamed to a hidden ".remove-<id>-<digits>" in its root (one step: a
    reader finds the job whole or not at all), checked to be the directory
    claimed, its live index entry removed, the root fsynced, and the hidden
    directory deleted: job.json first, status.json last, never through a
    link, never into a filesystem mounted inside (what stays is reported,
    for jobstore's Prune to delete later). index.json is not changed.

    WrongState (subject "state", found the state, "" for none) for a job
    that is queued, running or has no status, before anything is touched;
    Locked, NotJob, NotRegular, Invalid and Windows as retry. A JobstoreError
    after the rename means the job is out of the root but its hidden
    directory is not wholly deleted."""
    op = "remove"
    job_dir = _job_dir_to_claim(op, job_dir)
    claim, _ = _claim_finished(op, job_dir, _refuse_unfinished(op, job_dir))
    root, job_id = os.path.dirname(job_dir) or ".", _base(job_dir)
    try:
        try:
            trash = _hide_job(op, job_dir, root, job_id)
        except BaseException:
            claim.withdraw()
            raise
    finally:
        claim.unlock()
    try:
        os.rmdir(os.path.join(root, LIVE_DIR, job_id))
    except OSError:
        pass
    try:
        _fsync_dir(root)
        synced = None
    except OSError as e:
        synced = e
    try:
        _purge(trash)
    except OSError as e:
        raise _io_error(op, trash, e, "the job is out of the root, but its hidden directory could not be deleted whole",
                        "nothing to do for readers, which never see it; jobstore prune deletes it once it is older than "
                        "15 minutes, or delete it by hand") from e
    if synced is not None:
        raise _io_error(op, root, synced, "the job is removed, but the jobs root could not be fsynced: "
                        "after a power cut the job may come back", "check the disk; remove the job again if it comes back")


def _hide_job(op, job_dir, root, job_id):
    """Rename job_dir to a fresh hidden name in root, never over anything,
    and check that what was renamed is the directory claimed."""
    st = os.lstat(job_dir)
    ident = (st.st_dev, st.st_ino)
    for _ in range(3):
        trash = os.path.join(root, "%s%s-%d" % (_REMOVE_PREFIX, job_id, random.randrange(2 ** 64)))
        if not os.path.lexists(trash):
            break
    else:
        raise Exists("no free hidden name to remove the job by", op=op, path=job_dir, remedy="try again")
    try:
        os.rename(job_dir, trash)
    except FileNotFoundError:
        raise _not_job(op, job_dir) from None
    except OSError as e:
        raise _io_error(op, job_dir, e, "cannot rename the job directory to a hidden name",
                        "nothing was removed; check that this user may rename entries in the jobs root") from e
    got = os.lstat(trash)
    if (got.st_dev, got.st_ino) != ident or not stat.S_ISDIR(got.st_mode):
        try:
            os.rename(trash, job_dir)
        except OSError:
            pass
        raise JobstoreError("the job directory was replaced by another while it was being removed; nothing was removed",
                            op=op, path=job_dir, remedy="look at what is at that path now")
    return trash


# How many times in all _purge empties a hidden directory that is refilled
# meanwhile (by a process that held it open before the rename), as Go's
# Remove (purgeRounds).
_PURGE_ROUNDS = 3


def _purge(path):
    """Delete the hidden directory path, job.json first and status.json
    last, every name relative to a directory opened without following a
    link; a directory on another device (a mount) is not entered. A
    directory that is not empty when it is removed (a process that held the
    job directory open before its rename made a file in it: a claimant that
    then finds the job gone) is emptied again, up to _PURGE_ROUNDS times in
    all; one that is gone was finished by another process."""
    for round_ in range(1, _PURGE_ROUNDS + 1):
        try:
            _purge_round(path)
            return
        except OSError as e:
            if e.errno == errno.ENOENT and not os.path.lexists(path):
                return
            # Not empty (EEXIST on some systems): empty it again.
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST) or round_ == _PURGE_ROUNDS:
                raise


def _purge_round(path):
    """Empty the hidden directory path in _purge's order, and remove it."""
    fd = os.open(path, _DIR_FLAGS)
    try:
        dev = os.fstat(fd).st_dev
        names = os.listdir(fd)
        order = [n for n in (SPEC_FILE,) if n in names] + [n for n in names if n not in (SPEC_FILE, STATUS_FILE)]
        order += [n for n in (STATUS_FILE,) if n in names]
        for name in order:
            _remove_at(fd, name, dev, path)
    finally:
        os.close(fd)
    os.rmdir(path)


def _remove_at(dfd, name, dev, parent):
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dfd)
        return
    if st.st_dev != dev:
        raise OSError(errno.EXDEV, "a filesystem is mounted there; it is not entered and stays",
                      os.path.join(parent, name))
    sub = os.open(name, _DIR_FLAGS, dir_fd=dfd)
    try:
        for n in os.listdir(sub):
            _remove_at(sub, n, dev, os.path.join(parent, name))
    finally:
        os.close(sub)
    os.rmdir(name, dir_fd=dfd)
