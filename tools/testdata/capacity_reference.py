#!/usr/bin/env python3
"""Independent reference for the capacity findings (aggregation/capacity.h), read straight from a
TaskVine transactions log; shares no code with the C++ parser. Not run by the build: its output
is written into tools/taskvine_capacity_findings_test.cc's comments and expectations.

Definitions:
  slots(t)   cores (RESOURCES) of the workers between CONNECTION and DISCONNECTION (or the end)
  busy(t)    attempts between RUNNING and WAITING_RETRIEVAL, or their worker's DISCONNECTION
  waiting(t) tasks READY and not yet RUNNING (every category)
  window     first instant with a slot .. last instant with a task busy or waiting
  worker-bound: waiting > 0 and slots - busy < 1; dispatch-bound: waiting > 0 and a slot free
  replay     'processing' tasks that reached DONE, time_worker_end - time_worker_start of their
             final RETRIEVED attempt (else DONE - RUNNING), in task id order, list-scheduled on
             round(mean slots) and twice that many slots, none before its first READY (seconds
             after the window's start, at least 0)
  dead       workers that disconnected with attempts busy on them
Usage: capacity_reference.py TRANSACTIONS
"""
import heapq
import json
import sys

events = []  # (time_us, order, kind, payload)
workers = {}
tasks = {}
last_us = 0
end_us = None
for n, line in enumerate(open(sys.argv[1])):
    if line.startswith('#'):
        continue
    f = line.split()
    if len(f) < 4:
        continue
    t = int(f[0])
    last_us = max(last_us, t)
    if f[2] == 'MANAGER' and f[4] == 'END':
        end_us = t
    if f[2] == 'WORKER':
        w = f[3]
        if f[4] == 'CONNECTION':
            workers[w] = {'connect': t, 'cores': 0, 'end': None, 'reason': None, 'busy': set()}
        elif f[4] == 'RESOURCES':
            workers[w]['cores'] = json.loads(' '.join(f[5:]))['cores'][0]
            events.append((t, n, 'slots', (w, workers[w]['cores'])))
        elif f[4] == 'DISCONNECTION':
            workers[w]['end'] = t
            workers[w]['reason'] = f[5]
            events.append((t, n, 'gone', w))
    if f[2] == 'TASK':
        tid = int(f[3])
        st = f[4]
        task = tasks.setdefault(tid, {'attempts': [], 'cat': None, 'done': None, 'state': None})
        if st == 'READY':
            task['cat'] = f[5]
            task.setdefault('ready', t)
            events.append((t, n, 'ready', tid))
        elif st == 'RUNNING':
            task['attempts'].append({'worker': f[5], 'running': t})
            events.append((t, n, 'running', (tid, f[5])))
        elif st == 'WAITING_RETRIEVAL':
            events.append((t, n, 'finished', (tid, f[5])))
        elif st == 'RETRIEVED':
            js = line[line.rfind('{"time_worker_start'):] if 'time_worker_start' in line else None
            if js:
                d = json.loads(js)
                task['attempts'][-1]['exec'] = d['time_worker_end'][0] - d['time_worker_start'][0]
        elif st == 'DONE':
            task['done'] = t

events.sort()
slots_of, busy_on = {}, {}
waiting = set()
timeline = []  # (t, slots, busy, waiting)
lost = {}
for t, _, kind, p in events:
    if kind == 'slots':
        slots_of[p[0]] = p[1]
    elif kind == 'gone':
        slots_of.pop(p, None)
        if busy_on.get(p):
            lost[p] = len(busy_on[p])
        busy_on.pop(p, None)
    elif kind == 'ready':
        waiting.add(p)
    elif kind == 'running':
        waiting.discard(p[0])
        busy_on.setdefault(p[1], set()).add(p[0])
    elif kind == 'finished':
        busy_on.get(p[1], set()).discard(p[0])
    timeline.append((t, sum(slots_of.values()), sum(len(v) for v in busy_on.values()),
                     len(waiting)))
final = end_us if end_us is not None else last_us
# the state after the last change at each instant holds until the next instant
states = []
for i, (t, s, b, w) in enumerate(timeline):
    if i + 1 < len(timeline) and timeline[i + 1][0] == t:
        continue
    states.append((t, s, b, w))
last_active = max(states[i + 1][0] if i + 1 < len(states) else final
                  for i, (t, s, b, w) in enumerate(states) if b > 0 or w > 0)
start = None
wb = db = slot_s = free_wait = 0.0
for i, (t, s, b, w) in enumerate(states):
    nxt = min(states[i + 1][0] if i + 1 < len(states) else final, last_active)
    if s < 1 or nxt <= t:
        continue
    if start is None:
        start = t
    dt = (nxt - t) / 1e6
    slot_s += s * dt
    if w > 0:
        if s - b >= 1:
            db += dt
            free_wait += (s - b) * dt
        else:
            wb += dt
span = (last_active - start) / 1e6
mean_slots = slot_s / span
durs = []
for tid in sorted(tasks):
    task = tasks[tid]
    if task['cat'] != 'processing' or task['done'] is None or not task['attempts']:
        continue
    a = task['attempts'][-1]
    durs.append((max(0.0, (task['ready'] - start) / 1e6),
                 a.get('exec', (task['done'] - a['running']) / 1e6)))


def replay(d, k):
    heap = [0.0] * k
    end = 0.0
    for ready, x in d:
        s = max(heapq.heappop(heap), ready)
        end = max(end, s + x)
        heapq.heappush(heap, s + x)
    return end


S = round(mean_slots)
print(f'span {span:.3f} s, mean slots {mean_slots:.4f}, worker-bound {wb:.3f} s '
      f'({wb / span:.1%}), dispatch-bound {db:.3f} s, free slot-s while waiting {free_wait:.3f} '
      f'({free_wait / slot_s:.1%} of {slot_s:.3f})')
print(f'replay {len(durs)} chunks: {S} slots {replay(durs, S):.3f} s, {2 * S} slots '
      f'{replay(durs, 2 * S):.3f} s')
print('dead workers (disconnected with attempts busy):',
      {w: (workers[w]['reason'], n, (workers[w]['end'] - start) / 1e6) for w, n in lost.items()})
