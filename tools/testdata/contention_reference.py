#!/usr/bin/env python3
"""CPU contention of a TaskVine run, read from its transactions log on its own (no code shared
with the C++ parser or the rule): each task's last RETRIEVED record gives its execution
(time_worker_start .. time_worker_end) and the resource monitor's machine_load / machine_cpus.

  contention_reference.py TRANSACTIONS [LOAD_RATIO=1.25]

Prints the run span (first execution start to last end), the share of it covered by tasks whose
machine load was >= LOAD_RATIO x the machine's CPUs, the seconds those tasks waited for a CPU
(duration x (1 - cpus / load)), and that wait over their mean concurrency (summed duration over
the time they cover)."""
import json
import sys


def main():
    path = sys.argv[1]
    ratio_min = float(sys.argv[2]) if len(sys.argv) > 2 else 1.25
    last = {}
    for line in open(path):
        if line.startswith("#"):
            continue
        words = line.split(None, 6)
        if len(words) < 5 or words[2] != "TASK" or words[4] != "RETRIEVED":
            continue
        objects = []
        decoder = json.JSONDecoder()
        text = line
        i = text.find("{")
        while i >= 0:
            obj, end = decoder.raw_decode(text, i)
            objects.append(obj)
            i = text.find("{", end)
        last[int(words[3])] = objects[-1]
    first, final = None, None
    busy, wait, wall = [], 0.0, 0.0
    for task, m in sorted(last.items()):
        if "time_worker_start" not in m:
            continue
        start, end = m["time_worker_start"][0], m["time_worker_end"][0]
        first = start if first is None else min(first, start)
        final = end if final is None else max(final, end)
        if "machine_load" not in m or m["machine_cpus"][0] <= 0:
            continue
        ratio = m["machine_load"][0] / m["machine_cpus"][0]
        if ratio < ratio_min:
            continue
        busy.append((start, end))
        wait += (end - start) * (1 - 1 / ratio)
        wall += end - start
    busy.sort()
    covered, reach = 0.0, None
    for start, end in busy:
        lo = start if reach is None else max(start, reach)
        if end > lo:
            covered += end - lo
        reach = end if reach is None else max(reach, end)
    span = final - first
    print("tasks %d contended %d span %.6f covered %.6f share %.6f wait %.6f cost %.6f" %
          (len(last), len(busy), span, covered, covered / span, wait,
           wait * covered / wall if wall else 0))


if __name__ == "__main__":
    main()
