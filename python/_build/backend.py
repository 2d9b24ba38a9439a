"""A PEP 517 build backend for jobstore.py, standard library only.

pip builds a project in an isolated environment and fetches its build
requirements from an index; with setuptools as the backend, "pip install
./python" fails offline, and in a virtual environment without setuptools
and wheel it needs the network. This backend needs nothing: it packs the one
module, jobstore.py, into a wheel (and the source into an sdist) by hand.
"""

import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "jobstore"
MODULE = "jobstore.py"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _version():
    with open(os.path.join(HERE, MODULE), encoding="utf-8") as f:
        for line in f:
            if line.startswith("__version__"):
                return line.split("=", 1)[1].strip().strip("\"'")
    raise RuntimeError("no __version__ in " + MODULE)


def _metadata():
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        "Name: %s\n"
        "Version: %s\n"
        "Summary: Read and write jobstore job directories (job.json, status.json, cancel.json) from Python\n"
        "Home-page: https://github.com/axqua/jobstore\n"
        "License: Apache-2.0\n"
        "Requires-Python: >=3.8\n"
        "Description-Content-Type: text/markdown\n"
        "\n%s" % (NAME, _version(), readme)
    )


def _wheel_name():
    return "%s-%s-py3-none-any.whl" % (NAME, _version())


def _dist_info():
    return "%s-%s.dist-info" % (NAME, _version())


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "%s,sha256=%s,%d\n" % (name, digest.decode("ascii"), len(data))


def _write_wheel(wheel_directory, files):
    """Writes a wheel of files (name to bytes) with its dist-info."""
    info = _dist_info()
    files = dict(files)
    files[info + "/METADATA"] = _metadata().encode("utf-8")
    files[info + "/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: jobstore _build/backend.py\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n"
    ).encode("ascii")
    record = "".join(_record_line(n, d) for n, d in files.items()) + info + "/RECORD,,\n"
    files[info + "/RECORD"] = record.encode("utf-8")
    name = _wheel_name()
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(n, d)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open(os.path.join(HERE, MODULE), "rb") as f:
        return _write_wheel(wheel_directory, {MODULE: f.read()})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth file puts this directory on sys.path: edits to jobstore.py apply at once.
    return _write_wheel(wheel_directory, {NAME + ".pth": (HERE + "\n").encode("utf-8")})


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in ("pyproject.toml", "README.md", MODULE, os.path.join("_build", "backend.py")):
            tar.add(os.path.join(HERE, rel), arcname=base + "/" + rel.replace(os.sep, "/"))
        pkg_info = _metadata().encode("utf-8")
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(pkg_info)
        tar.addfile(ti, io.BytesIO(pkg_info))
    return name
