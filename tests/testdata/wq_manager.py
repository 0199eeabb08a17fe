# A real Work Queue manager (Debian's python3-workqueue) with two real workers on 127.0.0.1, for
# //tests:taskvine_wq_integration_test. Usage: wq_manager.py OUT_DIR PORT
# Writes OUT_DIR/txn.log and OUT_DIR/stats.log; runs 6 chunk tasks (category "processing"), one
# of which exits 3, and one "accumulating" task; releases the workers and exits 0 when all
# tasks came back. Workers run in their own session and are killed on the way out.
import os
import signal
import subprocess
import sys
import time

import work_queue as wq

out, port = sys.argv[1], int(sys.argv[2])
q = wq.WorkQueue(port=port, transactions_log=os.path.join(out, "txn.log"),
                 stats_log=os.path.join(out, "stats.log"))
workers = []
try:
    for i in range(6):
        command = "sleep 0.1; exit 3" if i == 4 else "sleep 0.6; echo chunk %d" % i
        t = wq.Task(command)
        t.specify_category("processing")
        t.specify_cores(1)
        q.submit(t)
    # Workers join after the tasks wait a moment (queue wait > 0).
    time.sleep(0.3)
    for _ in range(2):
        workers.append(subprocess.Popen(
            ["/usr/bin/work_queue_worker", "--single-shot", "-t", "30", "--cores", "2",
             "--memory", "1000", "--disk", "2000", "127.0.0.1", str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
    returned = 0
    deadline = time.time() + 40
    while returned < 6 and time.time() < deadline:
        t = q.wait(1)
        if t:
            returned += 1
    t = wq.Task("echo merge")
    t.specify_category("accumulating")
    t.specify_cores(1)
    q.submit(t)
    while returned < 7 and time.time() < deadline:
        t = q.wait(1)
        if t:
            returned += 1
    print("returned", returned, flush=True)
    q.shutdown_workers(0)
    del q  # writes MANAGER END
    sys.exit(0 if returned == 7 else 1)
finally:
    for w in workers:
        try:
            os.killpg(w.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        w.wait()
