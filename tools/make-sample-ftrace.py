#!/usr/bin/env python3
"""Write workloads/traces/sample-ftrace.txt: a small synthetic trace in the text format of
/sys/kernel/tracing/trace on a 6.x kernel with the kmem events enabled (kmem_cache_alloc with
name=, kmalloc, kmem_cache_free, kfree). Two CPUs: CPU 0 runs a web server (skbs, getname,
small kmallocs), CPU 1 munmaps/mmaps (vm_area_struct, maple_node freed by RCU) and, in softirq,
completes CPU 0's transmits (cross-CPU frees of skbuff_head_cache and the data kmallocs).
Deterministic: same output every run."""
import hashlib
import random
import sys

rng = random.Random(7)
events = []  # (time_us, cpu, comm_pid, flags, event, fields)


def hashed(addr):
    # %p prints a 32-bit hash of the address, zero-padded to 16 hex digits.
    return "00000000" + hashlib.sha1(str(addr).encode()).hexdigest()[:8]


class Cache:
    def __init__(self, name, req, size, base):
        self.name, self.req, self.size = name, req, size
        self.free, self.next = [], base

    def alloc(self):
        if self.free:
            return self.free.pop()
        self.next += self.size
        return self.next

    def release(self, addr):
        self.free.append(addr)


skb = Cache("skbuff_head_cache", 232, 256, 0xffff888100000000)
data1k = Cache(None, 704, 1024, 0xffff888102000000)
data2k = Cache(None, 1152, 2048, 0xffff888104000000)
names = Cache("names_cache", 4096, 4096, 0xffff888106000000)
small = Cache(None, 40, 64, 0xffff888108000000)
vma = Cache("vm_area_struct", 184, 192, 0xffff88810a000000)
maple = Cache("maple_node", 256, 256, 0xffff88810c000000)
k192 = Cache(None, 136, 192, 0xffff88810e000000)


def alloc(t, cpu, who, flags, cache, site, gfp="GFP_KERNEL"):
    a = cache.alloc()
    if cache.name:
        ev, f = "kmem_cache_alloc", (f"call_site={site} ptr={hashed(a)} name={cache.name} bytes_req={cache.req} "
                                     f"bytes_alloc={cache.size} gfp_flags={gfp} node=-1 accounted=false")
    else:
        ev, f = "kmalloc", (f"call_site={site} ptr={hashed(a)} bytes_req={cache.req} bytes_alloc={cache.size} "
                            f"gfp_flags={gfp} node=-1 accounted=false")
    events.append((t, cpu, who, flags, ev, f))
    return a


def free(t, cpu, who, flags, cache, addr, site):
    if cache.name:
        events.append((t, cpu, who, flags, "kmem_cache_free", f"call_site={site} ptr={hashed(addr)} name={cache.name}"))
    else:
        events.append((t, cpu, who, flags, "kfree", f"call_site={site} ptr={hashed(addr)}"))
    cache.release(addr)


NGINX, PG, IDLE = "nginx-2210", "postgres-3301", "<idle>-0"
T0 = 14325.000000  # seconds since boot of the first event
t0 = 0.0
# CPU 0: a kfree of an object allocated before tracing began, a kfree(NULL), a large kmalloc.
events.append((t0 + 3, 0, NGINX, ".....", "kfree", "call_site=sock_def_readable+0x5c/0x190 ptr=00000000deadbeef"))
events.append((t0 + 5, 0, NGINX, ".....", "kfree", "call_site=seq_release+0x1d/0x30 ptr=0000000000000000"))
big = 0xffff888200000000
events.append((t0 + 9, 0, NGINX, ".....", "kmalloc",
               f"call_site=alloc_fdtable+0x76/0x110 ptr={hashed(big)} bytes_req=9000 bytes_alloc=16384 "
               "gfp_flags=GFP_KERNEL_ACCOUNT node=-1 accounted=true"))
inflight = []  # skbs waiting for TX completion on CPU 1
t = 20.0
while t < 1200:
    # CPU 0: one request: getname + small kmalloc, then an skb (head + data) to transmit.
    n = alloc(t, 0, NGINX, ".....", names, "getname_flags.part.0+0x4f/0x1f0")
    s = alloc(t + 1.2, 0, NGINX, ".....", small, "seq_open+0x2c/0x80")
    free(t + 2.5, 0, NGINX, ".....", names, n, "putname+0x5b/0x70")
    head = alloc(t + 4.1, 0, NGINX, ".....", skb, "__alloc_skb+0x4e/0x190", "GFP_KERNEL|__GFP_NOWARN")
    dc = data2k if rng.random() < 0.4 else data1k
    d = alloc(t + 4.6, 0, NGINX, ".....", dc, "__alloc_skb+0x9e/0x190", "GFP_KERNEL|__GFP_NOWARN")
    inflight.append((t + 4.6, head, d, dc))
    free(t + 7.0, 0, NGINX, ".....", small, s, "seq_release+0x1d/0x30")
    t += rng.uniform(25, 45)
t = 30.0
live_vmas = []
while t < 1200:
    # CPU 1: mmap (a vma and two maple nodes), sometimes munmap (nodes freed after a grace period).
    v = alloc(t, 1, PG, ".....", vma, "vm_area_alloc+0x1e/0x90")
    m1 = alloc(t + 0.8, 1, PG, ".....", maple, "mas_alloc_nodes+0x15c/0x200", "GFP_KERNEL|__GFP_ZERO")
    m2 = alloc(t + 0.9, 1, PG, ".....", maple, "mas_alloc_nodes+0x15c/0x200", "GFP_KERNEL|__GFP_ZERO")
    k = alloc(t + 1.5, 1, PG, ".....", k192, "kernfs_fop_open+0x2b3/0x3d0")
    free(t + 2.4, 1, PG, ".....", k192, k, "kernfs_fop_release+0x5d/0xa0")
    live_vmas.append(v)
    if len(live_vmas) > 3:
        free(t + 3.0, 1, PG, ".....", vma, live_vmas.pop(0), "vm_area_free_rcu_cb+0x2c/0x40")
    free(t + 9.0, 1, "<idle>-0", "..s1.", maple, m1, "rcu_do_batch+0x1ab/0x560")
    free(t + 9.1, 1, "<idle>-0", "..s1.", maple, m2, "rcu_do_batch+0x1ab/0x560")
    # TX completions of CPU 0's skbs that are at least 20 us old: freed here, on CPU 1.
    while inflight and inflight[0][0] + 20 < t + 12:
        _, head, d, dc = inflight.pop(0)
        free(t + 12.0, 1, IDLE, "..s1.", dc, d, "skb_release_data+0x128/0x1b0")
        free(t + 12.2, 1, IDLE, "..s1.", skb, head, "napi_consume_skb+0x5a/0x110")
        t += 0.3
    t += rng.uniform(40, 70)
# Unrelated events, which the importer skips.
events.append((600.0, 1, PG, "d..2.", "sched_switch",
               "prev_comm=postgres prev_pid=3301 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120"))
events.append((900.0, 0, NGINX, ".....", "mm_page_alloc",
               "page=00000000f3c1a2b4 pfn=0x10a3c2 order=0 migratetype=0 gfp_flags=GFP_KERNEL"))
events.sort(key=lambda e: (e[0], e[1]))

out = sys.stdout
print("# tracer: nop", file=out)
print("#", file=out)
print(f"# entries-in-buffer/entries-written: {len(events)}/{len(events)}   #P:2", file=out)
print("#", file=out)
print("#                                _-----=> irqs-off/BH-disabled", file=out)
print("#                               / _----=> need-resched", file=out)
print("#                              | / _---=> hardirq/softirq", file=out)
print("#                              || / _--=> preempt-depth", file=out)
print("#                              ||| / _-=> migrate-disable", file=out)
print("#                              |||| /     delay", file=out)
print("#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION", file=out)
print("#              | |         |   |||||     |         |", file=out)
for tu, cpu, who, flags, ev, f in events:
    comm, pid = who.rsplit("-", 1)
    ts = f"{T0 + tu / 1e6:.6f}"
    print(f"{comm:>16}-{pid:<7} [{cpu:03d}] {flags} {ts:>12}: {ev}: {f}", file=out)
