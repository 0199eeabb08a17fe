"""Submits a real computation to a Dask cluster and writes the Python client's own task stream.

Usage: /usr/bin/python3 dask_workload.py tcp://127.0.0.1:PORT OUTPUT [SECONDS_PER_TASK]
OUTPUT gets one line per startstop: key, worker, action, start, stop (tab-separated).
"""
import sys
import time

from distributed import Client, get_task_stream


def inc(x, seconds):
    time.sleep(seconds)
    return x + 1


def main():
    address, output = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
    with Client(address, timeout=30) as client:
        with get_task_stream(client) as ts:
            futures = client.map(inc, range(24), seconds=seconds)
            total = client.submit(sum, futures)
            assert total.result() == sum(range(1, 25))
        with open(output, "w") as out:
            for record in ts.data:
                for ss in record["startstops"]:
                    out.write("%s\t%s\t%s\t%r\t%r\n" % (record["key"], record["worker"],
                                                       ss["action"], ss["start"], ss["stop"]))


if __name__ == "__main__":
    main()
