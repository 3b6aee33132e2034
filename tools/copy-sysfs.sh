#!/usr/bin/env bash
# Copy the sysfs files tools/import-topology.py reads into DEST (run it on the machine to import):
#   tools/copy-sysfs.sh DEST [SRC]     (SRC defaults to /sys/devices/system)
# Only plain reads of small text files (tar of sysfs pads them, cp -r trips over write-only files).
# Files the machine lacks (no L3, no NUMA) are skipped; import-topology.py says what is missing.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 DEST [SRC]" >&2; exit 2; }
dest=$1
src=${2:-/sys/devices/system}
[ -d "$src/cpu" ] || { echo "copy-sysfs: error: $src: no cpu/ directory" >&2; exit 2; }
cd "$src"
n=0
shopt -s nullglob
for f in cpu/online \
         cpu/cpu[0-9]*/topology/{physical_package_id,core_id,thread_siblings_list} \
         cpu/cpu[0-9]*/cache/index[0-9]*/{level,type,shared_cpu_list} \
         node/online node/node[0-9]*/{cpulist,distance,meminfo}; do
  [ -f "$f" ] || continue
  mkdir -p "$dest/$(dirname "$f")"
  if cat "$f" >"$dest/$f" 2>/dev/null; then n=$((n + 1)); else rm -f "$dest/$f"; fi
done
echo "copy-sysfs: $n files from $src to $dest"
