"""Captures real `profile` replies of a Dask scheduler as raw wire bytes (testdata/*.bin).

Usage (Debian's python3-distributed, 127.0.0.1 only):
  dask-scheduler --host 127.0.0.1 --port PORT --no-dashboard &
  dask-worker tcp://127.0.0.1:PORT --host 127.0.0.1 --nthreads 1 --no-nanny --name w-a &
  dask-worker tcp://127.0.0.1:PORT --host 127.0.0.1 --nthreads 2 --no-nanny --name w-b &
  /usr/bin/python3 capture_profile.py tcp://127.0.0.1:PORT OUTDIR

The fixtures in this directory were made this way (distributed 2022.12.1+ds.1, the
workers started with --memory-limit 1GB / 2GB and --no-dashboard, freshly, so linecache's
`line` texts match this file). It waits for the idle workers to age a few profile cycles (1 s
each) and takes an idle window, then runs `burn_cpu_hot_loop` (two tasks per worker; a
pure-Python loop that calls `_hot_step`, so that the hot function is not the innermost frame,
which Dask never counts itself: profile.process) and `mild_cpu_loop` (one task per worker, a
quarter of the work, a second task prefix), and captures over the workload's window:
  profile_merged_reply       {"op": "profile", "start", "stop"}                     merged tree
  profile_per_worker_reply   the same with "merge_workers": false   {address: tree}
  profile_key_reply          per worker, with "key": "burn_cpu_hot_loop"
  profile_idle_reply         per worker, a window before the workload (count 0 trees)
The raw client speaks the wire protocol itself (handshake with compression nil, one message
per request) so the files are exactly the bytes the scheduler wrote. Also writes
profile_capture.json: the window, the workers and their addresses.
"""
import json
import socket
import struct
import sys
import time

import msgpack
from distributed import Client


def burn_cpu_hot_loop(n):
    total = 0
    for i in range(n):
        total += _hot_step(i)
    return total


def _hot_step(i):
    return (i * 31 + 7) % 1009


def mild_cpu_loop(n):
    total = 0
    for i in range(n):
        total += _mild_step(i)
    return total


def _mild_step(i):
    return (i * 17 + 3) % 1013


def read_message(sock):
    def exact(n):
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("scheduler closed the connection")
            buf += chunk
        return buf

    head = exact(8)
    (length,) = struct.unpack("<Q", head)
    rest = exact(length)
    (n,) = struct.unpack("<Q", rest[:8])
    lengths = struct.unpack("<%dQ" % n, rest[8:8 + 8 * n])
    frames, offset = [], 8 + 8 * n
    for size in lengths:
        frames.append(rest[offset:offset + size])
        offset += size
    return head + rest, frames


def write_message(sock, obj):
    frame = msgpack.packb(obj, use_bin_type=True)
    prelude = struct.pack("<Q", 1) + struct.pack("<Q", len(frame))
    sock.sendall(struct.pack("<Q", len(prelude) + len(frame)) + prelude + frame)


class RawClient:
    def __init__(self, address):
        host, port = address[len("tcp://"):].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        _, frames = read_message(self.sock)
        server = msgpack.unpackb(frames[0], raw=False)
        write_message(self.sock, {"compression": None, "python": server["python"],
                                  "pickle-protocol": 5})

    def call(self, msg):
        msg = dict(msg, reply=True)
        write_message(self.sock, msg)
        raw, frames = read_message(self.sock)
        assert len(frames) == 1, "expected a single msgpack frame"
        return raw, msgpack.unpackb(frames[0], raw=False, strict_map_key=False)

    def close(self):
        write_message(self.sock, {"op": "close", "reply": False})
        self.sock.close()


def main():
    address, outdir = sys.argv[1], sys.argv[2]
    client = Client(address, timeout=30)
    client.wait_for_workers(2)
    workers = client.scheduler_info()["workers"]
    time.sleep(2.5)  # idle profile cycles
    idle_start = time.time() - 2.0
    idle_stop = time.time() - 0.5
    time.sleep(0.5)

    start = time.time()
    futures = [client.submit(burn_cpu_hot_loop, 6_000_000 + i, pure=False,
                             workers=[w]) for i, w in enumerate(sorted(workers) * 2)]
    futures += [client.submit(mild_cpu_loop, 1_500_000 + i, pure=False, workers=[w])
                for i, w in enumerate(sorted(workers))]
    client.gather(futures)
    stop = time.time()
    time.sleep(1.5)  # let the workers close the profile cycle that holds the end

    raw = RawClient(address)
    captures = {
        "profile_merged_reply": {"op": "profile", "start": start, "stop": stop},
        "profile_per_worker_reply": {"op": "profile", "start": start, "stop": stop,
                                     "merge_workers": False},
        "profile_key_reply": {"op": "profile", "start": start, "stop": stop,
                              "merge_workers": False, "key": "burn_cpu_hot_loop"},
        "profile_idle_reply": {"op": "profile", "start": idle_start, "stop": idle_stop,
                               "merge_workers": False},
    }
    summary = {"start": start, "stop": stop, "idle_start": idle_start, "idle_stop": idle_stop,
               "workers": {a: {"name": w["name"], "nthreads": w["nthreads"]}
                           for a, w in workers.items()},
               "requests": {}, "root_counts": {}}
    for name, request in captures.items():
        data, reply = raw.call(request)
        with open("%s/%s.bin" % (outdir, name), "wb") as f:
            f.write(data)
        summary["requests"][name] = request
        if "merge_workers" in request:
            summary["root_counts"][name] = {k: v["count"] for k, v in reply.items()}
        else:
            summary["root_counts"][name] = reply["count"]
    raw.close()
    client.close()
    with open("%s/profile_capture.json" % outdir, "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    print(json.dumps(summary["root_counts"]))


if __name__ == "__main__":
    main()
