#!/usr/bin/env python3
"""Runs an mpirun command line with a time bound, for tests and scripts.

    mpirun_bounded.py SECONDS mpirun ARGS...

Open MPI 4.1's mpirun can deadlock in its own shutdown (PMIx_server_finalize)
after a rank exits with a non-zero status: every rank is gone (left as a
zombie, since mpirun no longer reaps it), the job's messages are printed, but
mpirun never returns and ignores SIGTERM (open-mpi/ompi#3380; seen in about 1
of 20 runs of a job whose rank ends it on a loaded 2-core machine). `timeout`
turns that into a SIGKILL of its whole process group, itself included, which
lit's `not` then reads as a crash.

This wrapper instead watches mpirun's children: once every rank has exited
and mpirun has not returned within a grace period, it kills mpirun and exits
with status 1 (the job failed: a rank that had succeeded would have let
mpirun finish), saying so on stderr. Past SECONDS it kills the whole job and
exits 124, as `timeout` does. mpirun's own exit status is passed through.
"""

import os
import signal
import subprocess
import sys
import time

# Seconds mpirun may take to return after its last rank exited.
GRACE = 5.0


def children_states(pid):
    """The states ('R', 'S', 'Z', ...) of the processes whose parent is pid."""
    states = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # Format: pid (comm) state ppid ...; comm may hold spaces or ')'.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) >= 2 and int(fields[1]) == pid:
            states.append(fields[0])
    return states


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: mpirun_bounded.py SECONDS mpirun ARGS...")
    limit = float(sys.argv[1])
    proc = subprocess.Popen(sys.argv[2:], start_new_session=True)
    start = time.monotonic()
    saw_ranks = False
    all_exited_since = None
    while True:
        try:
            rc = proc.wait(timeout=0.25)
            # A signal-killed mpirun is reported as a shell would (128 + N).
            sys.exit(rc if rc >= 0 else 128 - rc)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if now - start > limit:
            kill_group(proc)
            print(f"mpirun_bounded: the job ran past {limit:g} s; killed",
                  file=sys.stderr)
            sys.exit(124)
        states = children_states(proc.pid)
        saw_ranks = saw_ranks or bool(states)
        if saw_ranks and all(s == "Z" for s in states):
            all_exited_since = all_exited_since or now
            if now - all_exited_since > GRACE:
                kill_group(proc)
                print("mpirun_bounded: every rank had exited but mpirun did "
                      f"not return within {GRACE:g} s (Open MPI shutdown "
                      "deadlock); killed it", file=sys.stderr)
                sys.exit(1)
        else:
            all_exited_since = None


if __name__ == "__main__":
    main()
