#!/usr/bin/env python3
"""Rename directories through one GlusterFS client while processes list their
parent through another. beside and apart build each directory, rename it
into the listed parent, then count the renamed directories that a third,
fresh mount cannot open (ESTALE). hide and away rename existing, listed
directories out of the way and delete them at once through the renaming
client, as Remove does, and count those whose deletion failed at first.
Run as root with the kit's volume started (bash .ci/gluster.sh start):

    python3 .ci/gluster_rename_estale.py beside 500   # build beside the renamed-to names
    python3 .ci/gluster_rename_estale.py apart 500    # build in a subdirectory nobody lists
    python3 .ci/gluster_rename_estale.py hide 500     # rename listed directories to hidden names beside them
    python3 .ci/gluster_rename_estale.py away 500     # rename listed directories into a subdirectory nobody lists

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
    if mode not in ("beside", "apart", "hide", "away"):
        sys.exit("mode: beside, apart, hide or away")
    base = tempfile.mkdtemp()
    a, b, c = (os.path.join(base, m) for m in "abc")
    for m in (a, b, c):
        mount(m)
    try:
        name = "rename-estale-%s-%d" % (mode, os.getpid())
        os.mkdir(os.path.join(b, name))
        if mode != "beside":
            os.mkdir(os.path.join(b, name, ".build"))
        final = lambda i: os.path.join(name, "j%d" % i)
        if mode == "hide":
            final = lambda i: os.path.join(name, ".remove-j%d" % i)
        elif mode == "away":
            final = lambda i: os.path.join(name, ".build", "gone-j%d" % i)

        def build(i):
            built = os.path.join(b, name, ".build", "j%d" % i) if mode != "beside" else os.path.join(b, name, ".j%d" % i)
            os.mkdir(built)
            for f in ("job.json", "job.lock", "status.json"):
                with open(os.path.join(built, f), "w") as fh:
                    fh.write("{}\n")
            os.rename(built, os.path.join(b, name, "j%d" % i))

        if mode in ("hide", "away"):  # the directories exist, and are listed, before they are renamed
            for i in range(n):
                build(i)
        stop = mp.Event()
        procs = [mp.Process(target=lister, args=(os.path.join(a, name), stop)) for _ in range(4)]
        for p in procs:
            p.start()
        failed = 0
        for i in range(n):
            if mode not in ("hide", "away"):
                build(i)
                continue
            # Remove's steps: rename the job away, then delete what it holds.
            gone = os.path.join(b, final(i))
            os.rename(os.path.join(b, name, "j%d" % i), gone)
            try:
                for f in os.listdir(gone):
                    os.unlink(os.path.join(gone, f))
                os.rmdir(gone)
            except OSError:
                failed += 1
        stop.set()
        for p in procs:
            p.join()
        stale = 0
        if mode in ("hide", "away"):
            stale = failed
            print("%s: %d of %d renamed directories could not be removed through the renaming mount" % (mode, failed, n))
        else:
            for i in range(n):
                try:
                    os.listdir(os.path.join(c, final(i)))
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
