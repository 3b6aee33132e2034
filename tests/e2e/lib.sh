# Shared set-up of the end-to-end scripts that test tools/*.py: the Python to run them with
# (Debian's /usr/bin/python3, which has python3-matplotlib), a scratch dir removed on exit, and
# counted failures (the script ends with `[ $failures -eq 0 ]`). Sourced, not run.
py=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
