#!/usr/bin/env bash
# Times fsync on the disk that holds DIR (default .): 300 writes of 4 KiB, each followed by
# an fsync, as a durable commit does. A disk that stalls shows in the p99 and the maximum
# of every durable backend's latency (docs/performance.md).
#
#   scripts/fsync-latency.sh [DIR]
set -euo pipefail
exec python3 - "${1:-.}" <<'PY'
import os, sys, tempfile, time
fd, path = tempfile.mkstemp(dir=sys.argv[1], prefix="anysqs-fsync-")
try:
    lat = []
    for _ in range(300):
        os.write(fd, b"x" * 4096)
        t = time.perf_counter()
        os.fsync(fd)
        lat.append((time.perf_counter() - t) * 1000)
finally:
    os.close(fd)
    os.unlink(path)
lat.sort()
print("fsync of 4 KiB in %s, 300 times: p50 %.2f ms, p99 %.2f ms, max %.2f ms"
      % (sys.argv[1], lat[149], lat[296], lat[-1]))
PY
