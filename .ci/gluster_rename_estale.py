#!/usr/bin/env python3
"""Rename directories through one GlusterFS client while processes list their
parent through another, then count the renamed directories that a third,
fresh mount cannot open (ESTALE). Run as root with the kit's volume started
(bash .ci/gluster.sh start):

    python3 .ci/gluster_rename_estale.py beside 500   # build beside the renamed-to names
    python3 .ci/gluster_rename_estale.py apart 500    # build in a subdirectory nobody lists

It mounts the volume three times under a temporary directory and removes
its own directory from the volume at the end, unless some directories
stayed unopenable (they cannot be removed until the brick restarts).
"""
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile

VOLUME = os.environ.get("JOBSTORE_GLUSTER_VOLUME", "jobstore-kit")


def mount(at):
    os.makedirs(at, exist_ok=True)
    subprocess.run(["mount", "-t", "glusterfs", "localhost:/" + VOLUME, at], check=True)


def lister(parent, stop):
    while not stop.is_set():
        try:
            for e in os.scandir(parent):
                try:
                    e.stat(follow_symlinks=False)
                    if not e.name.startswith("."):
                        os.listdir(os.path.join(parent, e.name))
                except OSError:
                    pass
        except OSError:
            pass


def main():
    mode, n = sys.argv[1], int(sys.argv[2])
    if mode not in ("beside", "apart"):
        sys.exit("mode: beside or apart")
    base = tempfile.mkdtemp()
    a, b, c = (os.path.join(base, m) for m in "abc")
    for m in (a, b, c):
        mount(m)
    try:
        name = "rename-estale-%s-%d" % (mode, os.getpid())
        os.mkdir(os.path.join(b, name))
        if mode == "apart":
            os.mkdir(os.path.join(b, name, ".build"))
        stop = mp.Event()
        procs = [mp.Process(target=lister, args=(os.path.join(a, name), stop)) for _ in range(4)]
        for p in procs:
            p.start()
        for i in range(n):
            built = os.path.join(b, name, ".build", "j%d" % i) if mode == "apart" else os.path.join(b, name, ".j%d" % i)
            os.mkdir(built)
            for f in ("job.json", "job.lock", "status.json"):
                with open(os.path.join(built, f), "w") as fh:
                    fh.write("{}\n")
            os.rename(built, os.path.join(b, name, "j%d" % i))
        stop.set()
        for p in procs:
            p.join()
        stale = 0
        for i in range(n):
            try:
                os.listdir(os.path.join(c, name, "j%d" % i))
            except OSError:
                stale += 1
        print("%s: %d of %d renamed directories cannot be opened from a fresh mount" % (mode, stale, n))
        if stale == 0:
            subprocess.run(["rm", "-rf", os.path.join(c, name)], check=False)
    finally:
        for m in (a, b, c):
            subprocess.run(["umount", m], check=False)


if __name__ == "__main__":
    main()
