"""I/O workload run inside a sandbox (bench_gvisor) and inside runsc on a
plain loop mount (plain_runsc.sh): the same program, timed from inside.

    python3 io.py PATH MIB

Sequential write of MIB MiB in 1 MiB blocks then fsync, sequential read of
it, 4096 random 4 KiB reads, 4096 random 4 KiB writes then fdatasync.
Prints one line: seq_write_mbs= seq_read_mbs= rand_read_iops= rand_write_iops=
"""
import os
import random
import sys
import time

path, mib = sys.argv[1], int(sys.argv[2])
block = os.urandom(1 << 20)
t = time.monotonic()
fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
for _ in range(mib):
    os.write(fd, block)
os.fsync(fd)
os.close(fd)
seq_w = mib / (time.monotonic() - t)
t = time.monotonic()
fd = os.open(path, os.O_RDONLY)
while os.read(fd, 1 << 20):
    pass
os.close(fd)
seq_r = mib / (time.monotonic() - t)
rng = random.Random(7)
blocks = (mib << 20) // 4096
ops = 4096
fd = os.open(path, os.O_RDWR)
t = time.monotonic()
for _ in range(ops):
    os.pread(fd, 4096, rng.randrange(blocks) * 4096)
rand_r = ops / (time.monotonic() - t)
small = os.urandom(4096)
t = time.monotonic()
for _ in range(ops):
    os.pwrite(fd, small, rng.randrange(blocks) * 4096)
os.fdatasync(fd)
rand_w = ops / (time.monotonic() - t)
os.close(fd)
os.unlink(path)
print(f"seq_write_mbs={seq_w:.1f} seq_read_mbs={seq_r:.1f} "
      f"rand_read_iops={rand_r:.0f} rand_write_iops={rand_w:.0f}")
