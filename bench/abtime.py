#!/usr/bin/env python3
"""abtime.py: interleaved A/B timing of whole commands.

    bench/abtime.py N 'label=command' ['label=command' ...]

Runs each command N times, the order of the commands alternating between
rounds (A B, B A, ...) so that a shared machine's load falls on all of
them alike, and prints per label the median and range of the CPU time
(user + sys of the child, from os.wait4: microseconds, where /usr/bin/time
rounds to 10 ms) and of the wall time. Output goes to /dev/null; a command
that fails stops the run.
"""
import os
import shlex
import statistics
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    n = int(sys.argv[1])
    cmds = [a.split("=", 1) for a in sys.argv[2:]]
    res = {label: ([], []) for label, _ in cmds}
    devnull = os.open(os.devnull, os.O_WRONLY)
    for i in range(n):
        for label, cmd in cmds if i % 2 == 0 else cmds[::-1]:
            argv = shlex.split(cmd)
            t0 = time.perf_counter()
            pid = os.fork()
            if pid == 0:
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                os.execvp(argv[0], argv)
            _, status, ru = os.wait4(pid, 0)
            wall = time.perf_counter() - t0
            if status != 0:
                sys.exit(f"abtime: {label}: {cmd} failed ({status})")
            res[label][0].append(ru.ru_utime + ru.ru_stime)
            res[label][1].append(wall)
    for label, (cpu, wall) in res.items():
        print(f"{label:12s} cpu median {statistics.median(cpu):.4f} [{min(cpu):.4f}..{max(cpu):.4f}]"
              f"  wall median {statistics.median(wall):.4f} [{min(wall):.4f}..{max(wall):.4f}]  n={len(cpu)}")


if __name__ == "__main__":
    main()
