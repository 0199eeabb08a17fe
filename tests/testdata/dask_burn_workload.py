"""Burns CPU in an identifiable Python function on every worker of a Dask cluster.

Usage: /usr/bin/python3 dask_burn_workload.py tcp://127.0.0.1:PORT [SECONDS]
Each worker thread runs `burn_cpu_hot_loop` for about SECONDS (default 1.5). The loop calls
`_hot_step` so that the hot function is not the innermost frame, which Dask's profiler never
counts itself (distributed/profile.py, process()).
"""
import sys
import time

from distributed import Client


def _hot_step(i):
    return (i * 31 + 7) % 1009


def burn_cpu_hot_loop(seconds):
    total, i = 0, 0
    deadline = time.time() + seconds
    while time.time() < deadline:
        for _ in range(2000):
            total += _hot_step(i)
            i += 1
    return total


def main():
    address = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
    with Client(address, timeout=30) as client:
        workers = client.scheduler_info()["workers"]
        futures = [client.submit(burn_cpu_hot_loop, seconds, pure=False, workers=[address],
                                 allow_other_workers=False)
                   for address, info in sorted(workers.items())
                   for _ in range(info["nthreads"])]
        client.gather(futures)


if __name__ == "__main__":
    main()
