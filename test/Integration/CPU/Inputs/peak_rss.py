# peak_rss.py LIMIT_MIB COMMAND...: runs COMMAND, prints its peak resident
# set and whether it stayed below LIMIT_MIB (for the memory tests).
import resource
import subprocess
import sys

limit = int(sys.argv[1])
subprocess.run(sys.argv[2:], check=True, stdout=subprocess.DEVNULL)
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"peak RSS {peak_kib // 1024} MiB")
print(f"below {limit} MiB: {'yes' if peak_kib < limit * 1024 else 'no'}")
