// Hand-offs between specific tasks (every-task, round-robin), pools with a limit, and roles that
// time-share a task's CPU: the program features behind the network workloads (rawudp, rawpkt,
// sched messaging), and the rawudp program itself.
#include <doctest/doctest.h>

#include <fstream>

#include "helpers.h"
#include "sim/config/workload_json.h"
#include "sim/run/job.h"
#include "sim/run/report.h"

using namespace slubsim;

namespace {

// The field a workload document's error names, or "" if it parses.
std::string workload_error(const json& doc) {
  try {
    parse_workload(doc, "w.json");
  } catch (const ConfigError& e) {
    return e.field();
  }
  return "";
}

// Two roles: a sender that clones one kmalloc-256 object to every task's queue, and a reader
// that frees one per iteration, counting its own.
json clone_program(int limit, int send_ns = 5000, int read_ns = 20) {
  json send = {{"op", "alloc"}, {"cache", "kmalloc-256"}, {"pool", "q"}, {"to", "every-task"}};
  json read = {{"op", "free"}, {"cache", "kmalloc-256"}, {"pool", "q"}, {"count_own", true}, {"each_ns", read_ns}};
  json doc = {{"name", "clone"},
              {"description", "d"},
              {"source", "s"},
              {"pools", {{"q", {{"scope", "task"}}}}},
              {"slice", 100000},
              {"switch_ns", 1000},
              {"roles",
               {{"sender", {{"ops_per_iteration", 0}, {"program", {{{"op", "work"}, {"ns", send_ns}}, send}}}},
                {"reader", {{"ops_per_iteration", 0}, {"wait", "q"}, {"program", {read}}}}}}};
  if (limit) doc["pools"]["q"]["limit"] = limit;
  return doc;
}

double get(const json& s, const std::string& key) { return s.contains(key) ? s[key].get<double>() : 0.0; }

json run_file(const std::string& workload, const std::string& topology, const std::string& kernel,
              const std::string& nr_task, std::vector<std::string> sets = {}) {
  JobRequest r = test::job_request(topology, workload, kernel, nr_task, "4ms", "2ms");
  r.sets = std::move(sets);
  r.jobs = 1;
  r.validate = true;
  Job job = resolve_job(r);
  return stdout_stats(job, run_job(job, {}));
}

}  // namespace

TEST_CASE("task groups: contiguous, covering, as even as integer division allows") {
  // 10 tasks in 3 groups: 0-3, 4-6, 7-9.
  CHECK(task_group(0, 10, 3).first == 0);
  CHECK(task_group(3, 10, 3).last == 4);
  CHECK(task_group(4, 10, 3).first == 4);
  CHECK(task_group(6, 10, 3).last == 7);
  CHECK(task_group(9, 10, 3).first == 7);
  CHECK(task_group(9, 10, 3).last == 10);
  // One group: everybody.
  CHECK(task_group(5, 10, 1).first == 0);
  CHECK(task_group(5, 10, 1).last == 10);
  // More groups than tasks: each task alone.
  CHECK(task_group(2, 3, 8).first == 2);
  CHECK(task_group(2, 3, 8).last == 3);
  for (int n : {1, 7, 64, 100})
    for (int g : {1, 2, 5, 16})
      for (int t = 0; t < n; ++t) {
        const TaskGroup tg = task_group(t, n, g);
        CHECK(tg.first <= t);
        CHECK(t < tg.last);
      }
}

TEST_CASE("network program format: roles, hand-offs and limits parse, and bad ones name their field") {
  json good = clone_program(16);
  Program p = parse_workload(good, "w.json");
  REQUIRE(p.roles.size() == 2);
  CHECK(p.steps.empty());
  CHECK(p.pools[0].handoff);
  CHECK(p.pools[0].limit == 16);
  CHECK(p.slice == 100 * kUs);

  // The field each broken copy of the document is refused at.
  auto error_after = [&](auto&& change) {
    json x = good;
    change(x);
    return workload_error(x);
  };
  CHECK(error_after([](json& x) { x["program"] = json::array({{{"op", "work"}, {"ns", 1}}}); }) == "program");
  CHECK(error_after([](json& x) { x["switch_ns"] = 0; }) == "switch_ns");
  CHECK(error_after([](json& x) { x["roles"]["reader"]["program"][0].erase("count_own"); }) == "roles");
  CHECK(error_after([](json& x) { x["pools"]["q"]["scope"] = "node"; }) == "roles.sender.program[1].to");
  CHECK(error_after([](json& x) { x["roles"]["sender"]["program"][1]["to"] = "everyone"; }) ==
        "roles.sender.program[1].to");
  CHECK(error_after([](json& x) { x["groups"] = 0; }) == "groups");
  CHECK(error_after([](json& x) { x["tasks_per_cpu"] = 0; }) == "tasks_per_cpu");
  CHECK(error_after([](json& x) {
          x["program"] = x["roles"]["sender"]["program"];
          x["ops_per_iteration"] = 1;
          x.erase("roles");
          x["tasks_per_cpu"] = 2;
        }) == "tasks_per_cpu");
  // Nothing hands objects to q: count_own could only count the task's own objects, and the
  // limit could never be reached by another task.
  CHECK(error_after([](json& x) { x["roles"]["sender"]["program"][1].erase("to"); }) ==
        "roles.reader.program[0].count_own");
  CHECK(error_after([](json& x) { x["roles"]["reader"]["wait"] = "nope"; }) == "roles.reader.wait");
  CHECK(error_after([](json& x) {
          x["roles"]["sender"]["program"][1]["op"] = "alloc_bulk";
          x["roles"]["sender"]["program"][1]["each_ns"] = 5;
        }) == "roles.sender.program[1].each_ns");
}

TEST_CASE("every-task clones reach every task; readers count their own; a full queue drops at once") {
  const Machine m = test::preset("small-2s-8c");
  const Costs c = test::default_costs();
  for (int limit : {0, 4}) {
    CAPTURE(limit);
    const std::string file = "/tmp/slubsim-test-clone-" + std::to_string(limit) + ".json";
    {
      // Without a limit the readers keep up; with one they are made slower than their senders.
      std::ofstream(file) << (limit ? clone_program(limit, 500, 3000) : clone_program(0)).dump(1);
    }
    json s = run_file(file, "small-2s-8c", "v6.17", "8");
    const double ops = get(s, "will-it-scale.8.processes");
    REQUIRE(ops > 0);
    const std::string st = "slub_stats.kmalloc-256.";
    const double allocs = get(s, st + "alloc_fastpath") + get(s, st + "alloc_slowpath");
    const double frees = get(s, st + "free_fastpath") + get(s, st + "free_slowpath");
    // Each packet is cloned to all 8 tasks; a reader counts 1 in 8 of what it reads.
    const double window_s = 0.004;
    const double per_op = allocs / (ops * window_s);
    if (limit == 0) {
      CHECK(per_op == doctest::Approx(8.0).epsilon(0.15));
      // Most frees are remote: the reader frees clones other CPUs allocated.
      CHECK(get(s, st + "free_slowpath") > 0.5 * frees);
    } else {
      // Readers are slower than the eight senders feeding each queue: clones are dropped (freed
      // at once by their sender), so a counted packet costs more clones than tasks.
      CHECK(per_op > 8.0 * 1.5);
    }
    // Steady state: what is allocated is freed, within the objects in flight.
    CHECK(frees == doctest::Approx(allocs).epsilon(0.05));
  }
}

TEST_CASE("tasks_per_cpu: each CPU time-shares copies that are tasks of their own for hand-offs and counting") {
  // Three copies of the sender/reader pair on each of 8 CPUs are 24 tasks: a packet is cloned
  // for all 24 queues, and a reader counts its own sender's (1 in 24), so a counted packet
  // costs 24 clones; every copy's reader adds to the CPU's operations.
  for (int copies : {1, 3}) {
    CAPTURE(copies);
    const std::string file = "/tmp/slubsim-test-copies-" + std::to_string(copies) + ".json";
    {
      json doc = clone_program(0, 20000);  // senders slow enough for 24 readers' frees to keep up
      doc["tasks_per_cpu"] = copies;
      std::ofstream(file) << doc.dump(1);
    }
    json s = run_file(file, "small-2s-8c", "v6.17", "8");
    const double ops = get(s, "will-it-scale.8.processes");
    REQUIRE(ops > 0);
    const std::string st = "slub_stats.kmalloc-256.";
    const double allocs = get(s, st + "alloc_fastpath") + get(s, st + "alloc_slowpath");
    CHECK(allocs / (ops * 0.004) == doctest::Approx(8.0 * copies).epsilon(0.15));
  }
}

TEST_CASE("wakeup_preempts: a woken reader takes the CPU at once, and the CPU goes back to its sender") {
  // One CPU, a sender (5 us per packet) and its reader (20 ns) with a 100 us slice and 1 us
  // switches. EEVDF (a woken reader waits for the slice): the sender fills its slice (20
  // packets), then the reader drains them, 2 switches per 20 packets, about 5.1 us a packet.
  // CFS (wakeup_preempts): every packet wakes the reader, which preempts the sender, frees it
  // and gives the CPU back: 2 switches per packet, about 7.0 us a packet.
  double us_per_packet[2] = {0, 0};
  for (int preempt : {0, 1}) {
    CAPTURE(preempt);
    const std::string file = "/tmp/slubsim-test-wakeup.json";
    std::ofstream(file) << clone_program(0).dump(1);
    json s = run_file(file, "small-2s-8c", "v6.17", "1",
                      {std::string("kernel.wakeup_preempts=") + (preempt ? "true" : "false")});
    const double ops = get(s, "will-it-scale.1.processes");
    REQUIRE(ops > 0);
    us_per_packet[preempt] = 1e6 / ops;
  }
  CHECK(us_per_packet[0] == doctest::Approx(5.1).epsilon(0.05));
  CHECK(us_per_packet[1] == doctest::Approx(7.0).epsilon(0.05));
}

TEST_CASE("rawudp: every packet is cloned for every server and client socket, and servers free them remotely") {
  json eager = run_file("rawudp", "small-2s-8c", "v6.7", "8");
  json sheaves = run_file("rawudp", "small-2s-8c", "v7.0", "8");
  for (const json* s : {&eager, &sheaves}) {
    REQUIRE(get(*s, "will-it-scale.8.processes") > 0);
    // skbuff_head_cache carries the clones: far more objects than any other cache.
    const std::string h = "slub_stats.skbuff_head_cache.";
    const double head = get(*s, h + "alloc_fastpath") + get(*s, h + "alloc_slowpath");
    const std::string d = "slub_stats.skbuff_small_head.";
    const double data = get(*s, d + "alloc_fastpath") + get(*s, d + "alloc_slowpath");
    CHECK(head > 8 * data);
  }
  // The servers' frees of other CPUs' clone heads go through __slab_free, and under eager
  // freezing fill the cpu partial lists that list_lock then drains.
  CHECK(get(eager, "slub_stats.skbuff_head_cache.free_slowpath") > 1000);
  CHECK(get(eager, "slub_stats.skbuff_head_cache.cpu_partial_free") > 0);
  CHECK(get(eager, "lock_stat.skbuff_head_cache.list_lock.acquisitions") > 0);
}

TEST_CASE("rawudp and sched-messaging: same inputs and seed give the same stats, byte for byte") {
  for (const char* w : {"rawudp", "sched-messaging", "rawpkt"}) {
    CAPTURE(w);
    const json a = run_file(w, "small-2s-8c", "v6.17", "8");
    const json b = run_file(w, "small-2s-8c", "v6.17", "8");
    CHECK(a.dump() == b.dump());
  }
}

TEST_CASE("slabinfo shares: computed from the cache's SLUB_STATS as tools/mm/slabinfo.c prints them") {
  const json s = run_file("sched-messaging", "small-2s-8c", "v6.7", "8");
  const std::string c = "skbuff_head_cache";
  auto st = [&](const char* k) { return get(s, "slub_stats." + c + "." + k); };
  const double allocs = st("alloc_fastpath") + st("alloc_slowpath");
  const double frees = st("free_fastpath") + st("free_slowpath");
  REQUIRE(allocs > 0);
  REQUIRE(frees > 0);
  CHECK(get(s, "slabinfo." + c + ".alloc_fastpath_pct") == doctest::Approx(100.0 * st("alloc_fastpath") / allocs).epsilon(1e-4));
  CHECK(get(s, "slabinfo." + c + ".free_slowpath_pct") == doctest::Approx(100.0 * st("free_slowpath") / frees).epsilon(1e-4));
  CHECK(get(s, "slabinfo." + c + ".cpu_partial_alloc_pct") ==
        doctest::Approx(100.0 * st("cpu_partial_alloc") / allocs).epsilon(1e-4));
  const double deact = st("deactivate_full") + st("deactivate_empty") + st("deactivate_to_head") +
                       st("deactivate_to_tail") + st("deactivate_bypass");
  if (deact > 0)
    CHECK(get(s, "slabinfo." + c + ".alloc_refill_pct") == doctest::Approx(100.0 * st("alloc_refill") / deact).epsilon(1e-4));
}

TEST_CASE("2021 cpu partial accounting: free objects (v5.15) against slabs (v5.15-pages), same targets") {
  // skbuff_head_cache, 256 B: cpu_partial 13 objects in both; as slabs DIV_ROUND_UP(26, objects
  // per slab). Counting free objects lets a list of slabs with one free object each grow to 13
  // slabs before it drains; counting slabs drains it at two. Queued wakeups (one sender/receiver
  // pair per CPU whose receiver preempted at each wakeup would free every message into its
  // still-current cpu slab, and no list would form in the 4 ms window).
  auto drains = [&](const std::string& kernel) {
    const json s = run_file("sched-messaging", "vm-8vcpu-1n", kernel, "8",
                            {"workload.groups=1", "kernel.wakeup_preempts=false"});
    const double allocs = get(s, "slub_stats.skbuff_head_cache.alloc_fastpath") + get(s, "slub_stats.skbuff_head_cache.alloc_slowpath");
    REQUIRE(allocs > 0);
    return get(s, "slub_stats.skbuff_head_cache.cpu_partial_drain") / allocs;
  };
  const double objects = drains("v5.15"), slabs = drains("v5.15-pages"), x4 = drains("v5.16");
  CHECK(slabs > 1.5 * objects);
  CHECK(x4 < slabs);
}
