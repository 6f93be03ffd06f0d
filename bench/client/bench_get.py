"""Time Client.sandboxes.get through the Python package (bindings/python).

    python3 bench_get.py URL TOKEN SANDBOX_ID N

Prints "python_us <median microseconds per call>" over 9 rounds after a
warm-up round, and "python_cpu <this process's CPU microseconds per call>"
(bench/client/run.sh).
"""
import sys
import time

from libsandbox0 import Client


def main() -> None:
    url, token, sid, n = sys.argv[1], sys.argv[2], sys.argv[3], max(10, int(sys.argv[4]))
    rounds = 9
    per = n // rounds
    with Client(token=token, base_url=url) as c:
        us = []
        cpu = 0.0  # this process's CPU (all threads, user + system), seconds
        for r in range(-1, rounds):
            t0 = time.perf_counter()
            u0 = time.process_time()
            for _ in range(per):
                c.sandboxes.get(sid)
            if r >= 0:
                us.append((time.perf_counter() - t0) * 1e6 / per)
                cpu += time.process_time() - u0
    us.sort()
    print(f"python_us {us[rounds // 2]:.1f}")
    print(f"python_cpu {cpu * 1e6 / (per * rounds):.1f}")


main()
