#!/usr/bin/env bash
# End-to-end: `slubsim run --why` prints where the tasks' time goes; the why.* keys are in
# stats.json and byte-identical across identical runs. $1 = slubsim binary.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Capture before matching: grep -q exits at its first match, and under pipefail the writer's
# SIGPIPE (or EPIPE) on the rest of the help would fail the pipeline by chance.
help=$("$bin" run --help)
grep -q -- "--why" <<<"$help" || fail "run --help lacks --why"

args=(run --topology small-2s-8c --workload sheaf-burst --kernel v6.17,v7.0 --sheaf-capacity 32
      --nr-task 4,8 --duration 1ms --warmup 200us --quiet --validate)
"$bin" "${args[@]}" --why --out "$tmp/a" > "$tmp/why.txt"
"$bin" "${args[@]}" --out "$tmp/b" --jobs 1 > /dev/null
for v in v6.17 v7.0_sheaf_capacity=32; do
  cmp "$tmp/a/$v/stats.json" "$tmp/b/$v/stats.json" || fail "$v/stats.json differs between identical runs"
done

# Folded stacks of all task time, one file per variant and row, in the format flamegraph.pl,
# inferno and speedscope read ("frame;frame;... count"): each adds up to the tasks' simulated
# CPU time in the window (nr_task x window).
python3 - "$tmp/a" <<'PY' || fail "folded stacks"
import json, os, re, sys
root = sys.argv[1]
roots = {"nonslab", "slab.fastpath", "slab.slowpath", "rcu.callbacks", "rcu.ksoftirqd"}
for v in ("v6.17", "v7.0_sheaf_capacity=32"):
    stats = json.load(open(os.path.join(root, v, "stats.json")))
    for n in (4, 8):
        path = os.path.join(root, v, f"stacks.{n}.folded")
        total, spins = 0, 0
        for line in open(path):
            m = re.fullmatch(r"([^ ;]+(?:;[^ ;]+)*) (\d+)\n", line)
            assert m, (path, line)
            assert m.group(1).split(";")[0] in roots, line
            spins += "_[spin]" in m.group(1)
            total += int(m.group(2))
        want = n * stats[f"settle.{n}.window_ms"] * 1e6
        assert abs(total - want) <= 1e-4 * want + n, (path, total, want)
        if v.startswith("v7.0"):
            assert spins > 0, path
PY
# The normal table first, then one why table per row with the variants side by side (letters
# with a legend: the labels are long).
grep -q "^kernel v7.0_sheaf_capacity=32" "$tmp/why.txt" || fail "no normal table: $(cat "$tmp/why.txt")"
grep -q "^B = v7.0_sheaf_capacity=32$" "$tmp/why.txt" || fail "no column legend: $(cat "$tmp/why.txt")"
[ "$(grep -c '^why: [0-9]* tasks, where the task time goes' "$tmp/why.txt")" = 2 ] || fail "expected 2 why tables: $(cat "$tmp/why.txt")"
grep -Eq "^category +A +B$" "$tmp/why.txt" || fail "no side-by-side header"
grep -Eq "^slab\.fastpath +[0-9.]+% [0-9.]+ +[0-9.]+% [0-9.]+$" "$tmp/why.txt" || fail "no slab.fastpath line"
grep -Eq "^wait\.maple_node\.barn_lock\.node[01] +- +[0-9.]+% [0-9.]+$" "$tmp/why.txt" || fail "no barn_lock line"
grep -Eq "^    native_queued_spin_lock_slowpath [0-9.]+% \(maple_node\.barn_lock node[01] " "$tmp/why.txt" \
  || fail "no hottest-lock summary: $(cat "$tmp/why.txt")"
# Under it, the load on each of those locks: how often taken, hold and hand-off, utilisation.
grep -Eq "^      maple_node\.barn_lock node[01]: [0-9.]+ acquisitions per op \([0-9.]+ M/s\), [0-9]+% contended; hold [0-9]+ ns(, hand-off [0-9]+ ns)?; busy [0-9]+% of the window$" "$tmp/why.txt" \
  || fail "no lock load line: $(cat "$tmp/why.txt")"
grep -Eq "^ +[0-9.]+%  __pcs_replace_empty_main;barn_replace_empty_sheaf;maple_node\.barn_lock$" "$tmp/why.txt" \
  || fail "no spin call chain line: $(cat "$tmp/why.txt")"

# The table's percentages sum to 100, and the keys are in stats.json, summing to 100 too.
python3 - "$tmp/why.txt" "$tmp/a/v7.0_sheaf_capacity=32/stats.json" <<'PY'
import json, re, sys
tables = open(sys.argv[1]).read().split("why: ")[1:]
for t in tables:
    for col in (0, 1):  # each variant's column sums to 100
        pct = []
        for m in re.finditer(r"^[a-z][\w.]* +(-|[0-9.]+% [0-9.]+) +(-|[0-9.]+% [0-9.]+)$", t, re.M):
            cell = m.group(1 + col)
            pct.append(0.0 if cell == "-" else float(cell.split("%")[0]))
        assert pct and abs(sum(pct) - 100) <= 0.005 * len(pct) + 1e-9, (sum(pct), t)
s = json.load(open(sys.argv[2]))
pk = [k for k in s if k.startswith("why.") and k.endswith(".percent")]
keys = [k for k in pk if not k.split(".")[1].isdigit()]  # means over rows
assert "why.slab.slowpath.percent" in keys and "why.nonslab.percent" in keys, keys
assert abs(sum(s[k] for k in keys) - 100) <= 0.005 * len(keys) + 1e-9, keys
assert all(s[k[:-len("percent")] + "ns_per_op"] > 0 for k in keys if s[k] > 0.1), keys
# Per row (why.<N>.*): the categories sum to 100; the spin under each call chain sums to the
# row's allocator lock waits, and why.<N>.spin.percent is their total.
for n in (4, 8):
    cats = [k for k in pk if k.startswith(f"why.{n}.") and not k.startswith(f"why.{n}.spin.")]
    spin = [k for k in pk if k.startswith(f"why.{n}.spin.") and k != f"why.{n}.spin.percent"]
    waits = [k for k in cats if k.startswith(f"why.{n}.wait.")]
    assert f"why.{n}.nonslab.percent" in cats, cats
    assert abs(sum(s[k] for k in cats) - 100) <= 0.005 * len(cats) + 1e-9, cats
    assert spin and all(k.endswith(";maple_node.barn_lock.percent") for k in spin), spin
    assert abs(sum(s[k] for k in spin) - sum(s[k] for k in waits)) <= 0.005 * (len(spin) + len(waits)) + 1e-9, (spin, waits)
    # All spinning, whatever the chain (a pin's observable): the chains' sum.
    assert abs(s[f"why.{n}.spin.percent"] - sum(s[k] for k in spin)) <= 0.005 * (len(spin) + 1) + 1e-9, n
PY
echo "e2e.why: all checks passed"
