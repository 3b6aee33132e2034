// Trace replay: the sample ftrace file imports with the counts it was made with, replays on a
// small and a large machine (replicated and mapped) with validation on, and malformed lines are
// errors that name their line.
#include <doctest/doctest.h>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "helpers.h"
#include "sim/run/job.h"
#include "sim/run/report.h"
#include "sim/run/slub_config.h"
#include "sim/config/trace_import.h"

using namespace slubsim;

namespace {

const std::string kSample = "workloads/traces/sample-ftrace.txt";

std::vector<slub::CacheSpec> default_caches() {
  auto file = test::source_dir() + "/configs/caches/default.json";
  return parse_caches(load_json_file(file), file);
}

std::string sample_text() {
  std::ifstream in(test::source_dir() + "/" + kSample);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::uint64_t count(const std::vector<TraceEvent>& evs, TraceOp op) {
  std::uint64_t n = 0;
  for (const auto& e : evs) n += e.op == op;
  return n;
}

double get(const json& s, const std::string& key) { return s.contains(key) ? s[key].get<double>() : 0.0; }

JobRequest sample_request(const std::string& topology, const std::string& nr_task) {
  JobRequest r;
  r.home = test::source_dir();
  r.topology = topology;
  r.workload = "ftrace:" + test::source_dir() + "/" + kSample;
  r.nr_task = nr_task;
  r.duration = "4ms";
  r.warmup = "1ms";
  r.jobs = 2;
  r.validate = true;
  return r;
}

// The ConfigError field for `text` read as ftrace (or native) output, "" if it parses.
std::string error_field(const std::string& text, bool ftrace = true) {
  try {
    auto caches = default_caches();
    build_trace(ftrace ? parse_ftrace(text, "t.txt", caches) : parse_native_trace(text, "t.txt"), caches);
  } catch (const ConfigError& e) {
    return e.field();
  }
  return "";
}

const std::string kLine =
    "            bash-1203    [001] ..... 14325.016410: ";

}  // namespace

TEST_CASE("trace: the sample ftrace file imports with the events it was made with") {
  auto caches = default_caches();
  Trace t = build_trace(parse_ftrace(sample_text(), kSample, caches), caches);
  REQUIRE(t.cpus.size() == 2);
  CHECK(t.cpu_ids == std::vector<int>{0, 1});
  // CPU 0: 141 allocations (one a 16 kB kmalloc, too large for any kmalloc cache), 72 frees
  // (one of an object allocated before the trace, one kfree(NULL)).
  CHECK(count(t.cpus[0], TraceOp::Alloc) == 140);
  CHECK(count(t.cpus[0], TraceOp::Free) == 70);
  // CPU 1: its own frees plus the 68 skb heads and data buffers CPU 0 allocated.
  CHECK(count(t.cpus[1], TraceOp::Alloc) == 88);
  CHECK(count(t.cpus[1], TraceOp::Free) == 153);
  CHECK(t.count(TraceOp::KfreeRcu) == 0);
  std::uint64_t cross = 0;
  for (const auto& e : t.cpus[1]) cross += e.op == TraceOp::Free && e.peer == 0;
  CHECK(cross == 68);
  CHECK(t.peers[0] == std::vector<int>{1});
  CHECK(t.nr_objects == 228);
  std::uint64_t survivors = 0;
  for (const auto& c : t.cpus) for (const auto& e : c) survivors += e.op == TraceOp::Alloc && !e.freed;
  CHECK(survivors == 5);
  const auto& s = t.stats;
  CHECK(s.lines == 468);
  CHECK(s.other_lines == 14);  // 12 header lines, a sched_switch and an mm_page_alloc
  CHECK(s.null_frees == 1);
  CHECK(s.unknown_frees == 1);
  CHECK(s.too_large == 1);
  CHECK(s.by_size == 127);  // the kmallocs and names_cache, which the config lacks
  CHECK(s.unconfigured == std::map<std::string, std::uint64_t>{{"names_cache", 35}});
  // skbuff_head_cache is configured (its sourced geometry, since 2026-12-03): its own cache.
  CHECK(t.caches == std::vector<std::string>{"vm_area_struct", "maple_node", "kmalloc-64", "kmalloc-192",
                                             "kmalloc-1k", "kmalloc-2k", "kmalloc-4k", "skbuff_head_cache"});
  // Timestamps relative to the first event; a pass adds the mean gap.
  CHECK(t.cpus[0].front().at == 0);
  CHECK(t.span > 1100 * kUs);
  CHECK(t.period == t.span + t.span / 450);
  for (const auto& c : t.cpus)
    for (std::size_t i = 1; i < c.size(); ++i) CHECK(c[i - 1].at <= c[i].at);
}

TEST_CASE("trace: imported ftrace written in slubsim's format reads back to the same trace") {
  auto caches = default_caches();
  TraceText imported = parse_ftrace(sample_text(), kSample, caches);
  std::ostringstream native;
  write_native_trace(imported, native);
  Trace a = build_trace(imported, caches);
  Trace b = build_trace(parse_native_trace(native.str(), "native.txt"), caches);
  REQUIRE(a.cpus.size() == b.cpus.size());
  CHECK(a.caches == b.caches);
  CHECK(a.period == b.period);
  for (std::size_t c = 0; c < a.cpus.size(); ++c) {
    REQUIRE(a.cpus[c].size() == b.cpus[c].size());
    for (std::size_t i = 0; i < a.cpus[c].size(); ++i) {
      const auto &x = a.cpus[c][i], &y = b.cpus[c][i];
      CHECK((x.at == y.at && x.object == y.object && x.peer == y.peer && x.cache == y.cache && x.op == y.op &&
             x.freed == y.freed));
    }
  }
}

TEST_CASE("trace: the sample replays on small-2s-8c at the trace's own pace, with validation") {
  auto req = sample_request("small-2s-8c", "1,2,8");
  Job job = resolve_job(req);
  REQUIRE(job.trace);
  json s = stdout_stats(job, run_job(job, {}));
  // Open loop: two tasks replay the two CPUs once, 451 events per pass; eight are four replicas.
  const double rate = 451.0 / to_sec(job.trace->period);
  CHECK(get(s, "will-it-scale.2.processes") == doctest::Approx(rate).epsilon(0.01));
  CHECK(get(s, "will-it-scale.8.processes") == doctest::Approx(4 * rate).epsilon(0.01));
  // One task replays CPU 0 alone: its allocations, and frees of what it keeps.
  CHECK(get(s, "will-it-scale.1.processes") == doctest::Approx(210.0 / to_sec(job.trace->period)).epsilon(0.01));
  CHECK(get(s, "slubsim.trace_skipped_frees") == 0);
  CHECK(get(s, "slubsim.alloc_failures") == 0);
  for (const char* cache : {"vm_area_struct", "maple_node", "kmalloc-64", "kmalloc-192", "skbuff_head_cache",
                            "kmalloc-1k", "kmalloc-2k", "kmalloc-4k"}) {
    CAPTURE(cache);
    CHECK(get(s, fmt::format("slub_stats.{}.alloc_fastpath", cache)) > 0);
  }
  // skb heads and data buffers are freed on the other CPU: remote frees take the slow path.
  CHECK(get(s, "slub_stats.skbuff_head_cache.free_slowpath") > 0);
  CHECK(get(s, "slub_stats.skbuff_head_cache.free_fastpath") == 0);
}

TEST_CASE("trace: the sample replays replicated on amd-turin-2s-512t, at pace and as fast as possible") {
  auto req = sample_request("amd-turin-2s-512t", "64");
  Job job = resolve_job(req);
  json s = stdout_stats(job, run_job(job, {}));
  const double rate = 451.0 / to_sec(job.trace->period);
  CHECK(get(s, "will-it-scale.64.processes") == doctest::Approx(32 * rate).epsilon(0.01));
  CHECK(get(s, "slubsim.trace_skipped_frees") == 0);
  CHECK(get(s, "slub_stats.kmalloc-2k.alloc_fastpath") > 0);
  CHECK(get(s, "slub_stats.maple_node.free_fastpath") > 0);
  CHECK(get(s, "slabinfo.kmalloc-1k.active_objs") > 0);

  req.trace_speed = "0";
  req.duration = "1ms";
  req.warmup = "200us";
  Job fast = resolve_job(req);
  json f = stdout_stats(fast, run_job(fast, {}));
  CHECK(get(f, "will-it-scale.64.processes") > 20 * get(s, "will-it-scale.64.processes"));
  CHECK(get(f, "slub_stats.skbuff_head_cache.alloc_fastpath") > 0);
}

TEST_CASE("trace: mapped replay merges trace CPUs onto fewer tasks and refuses more tasks than CPUs") {
  auto req = sample_request("small-2s-8c", "1");
  req.trace_map = "mapped";
  Job job = resolve_job(req);
  json s = stdout_stats(job, run_job(job, {}));
  // One task replays both CPUs, in time order: every event, cross-CPU frees included.
  CHECK(get(s, "will-it-scale.1.processes") == doctest::Approx(451.0 / to_sec(job.trace->period)).epsilon(0.01));
  CHECK(get(s, "slubsim.trace_skipped_frees") == 0);

  req.nr_task = "2,4";
  try {
    resolve_job(req);
    FAIL("mapped replay with 4 tasks for 2 trace CPUs was accepted");
  } catch (const ConfigError& e) {
    CHECK(e.field() == "--nr-task");
  }
  req.trace_map = "both";
  CHECK_THROWS_AS(resolve_job(req), ConfigError);
  req.trace_map = "replicated";
  req.trace_speed = "-1";
  CHECK_THROWS_AS(resolve_job(req), ConfigError);
  req.trace_speed = "1";
  req.sets = {"workload.ops_per_iteration=2"};
  CHECK_THROWS_AS(resolve_job(req), ConfigError);
}

TEST_CASE("trace: slubsim format replays, and a merged CPU frees at the same time as the allocation") {
  // CPU 1 allocates at 5 us what CPU 0 frees (kfree_rcu) at 5 us: mapped onto one task, the
  // allocation must still come first.
  auto dir = std::filesystem::temp_directory_path() / "slubsim-test-native";
  std::filesystem::create_directories(dir);
  auto file = (dir / "same-time.trace").string();
  std::ofstream(file) << "# cpu time_ns op cache size id\n"
                         "1 5000 alloc maple_node 256 1\n"
                         "0 5000 kfree_rcu maple_node 256 1\n"
                         "0 6000 alloc - 100 2\n"
                         "1 9000 free - 0 2\n";
  auto req = sample_request("small-2s-8c", "1");
  req.workload = "trace:" + file;
  req.trace_map = "mapped";
  Job job = resolve_job(req);
  REQUIRE(job.trace->cpus.size() == 2);
  json s = stdout_stats(job, run_job(job, {}));
  CHECK(get(s, "slubsim.trace_skipped_frees") == 0);
  CHECK(get(s, "will-it-scale.1.processes") == doctest::Approx(4.0 / to_sec(job.trace->period)).epsilon(0.01));
  CHECK(get(s, "slub_stats.kmalloc-128.alloc_fastpath") > 0);
  req.trace_map = "replicated";
  req.nr_task = "2,8";
  Job rep = resolve_job(req);
  json r = stdout_stats(rep, run_job(rep, {}));
  CHECK(get(r, "slubsim.trace_skipped_frees") == 0);
  CHECK(get(r, "will-it-scale.8.processes") == doctest::Approx(4 * get(r, "will-it-scale.2.processes")).epsilon(0.01));
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace: a malformed kmem line is an error naming its line") {
  // The sample's first 20 lines, then a kmalloc whose ptr is not a pointer at line 21.
  std::istringstream in(sample_text());
  std::string text, l;
  for (int i = 0; i < 20 && std::getline(in, l); ++i) text += l + "\n";
  text += kLine + "kmalloc: call_site=seq_open+0x2c/0x80 ptr=zz12 bytes_req=40 bytes_alloc=64 gfp_flags=GFP_KERNEL node=-1 accounted=false\n";
  auto dir = std::filesystem::temp_directory_path() / "slubsim-test-trace";
  std::filesystem::create_directories(dir);
  auto file = (dir / "malformed.txt").string();
  std::ofstream(file) << text;
  auto req = sample_request("small-2s-8c", "2");
  req.workload = "ftrace:" + file;
  try {
    resolve_job(req);
    FAIL("malformed trace accepted");
  } catch (const ConfigError& e) {
    CHECK(e.file() == file);
    CHECK(e.field() == "line 21");
    CHECK(std::string(e.what()).find("ptr=zz12") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
  req.workload = "ftrace:/no/such/trace.txt";
  CHECK_THROWS_AS(resolve_job(req), ConfigError);

  // Other shapes of damage, each at line 2 after a good line.
  const std::string good =
      kLine + "kmalloc: call_site=x+0x1/0x2 ptr=0000000012345678 bytes_req=40 bytes_alloc=64 gfp_flags=GFP_KERNEL\n";
  CHECK(error_field(good + kLine + "kmem_cache_alloc: call_site=x ptr=00000000abcd bytes_req=64 gfp_flags=GFP_KERNEL\n") == "line 2");
  CHECK(error_field(good + kLine + "kmalloc: call_site=x ptr=00000000abcd bytes_req=64 bytes_alloc=6x4\n") == "line 2");
  CHECK(error_field(good + kLine + "kfree: call_site=x+0x1/0x2\n") == "line 2");
  CHECK(error_field(good + "            bash-1203    [001] ..... 14325.01x: kfree: ptr=00000000abcd\n") == "line 2");
  CHECK(error_field(good + "            bash-1203    ..... 14325.016410: kfree: ptr=00000000abcd\n") == "line 2");
  // Time going back on one CPU.
  CHECK(error_field(good + "            bash-1203    [001] ..... 14325.000001: kfree: ptr=00000000abcd\n") == "line 2");
  // Not kmem lines: skipped, however they look.
  CHECK(error_field(good + "cpus=2\nCPU 1 is empty\n   foo-1 [000] garbage\n" + kLine +
                    "sched_switch: prev_comm=a ==> next_comm=b\n") == "");
}

TEST_CASE("trace: without name=, allocations go to the kmalloc cache of their size") {
  auto caches = default_caches();
  auto idx = [&](std::uint32_t size) {
    int i = kmalloc_cache_for(size, caches);
    return i < 0 ? std::string("none") : caches[static_cast<std::size_t>(i)].name;
  };
  CHECK(idx(8) == "kmalloc-64");   // smaller kmalloc caches are not configured
  CHECK(idx(64) == "kmalloc-64");
  CHECK(idx(65) == "kmalloc-128");
  CHECK(idx(192) == "kmalloc-192");  // a 184-byte vm_area_struct from a kernel without name=
  CHECK(idx(256) == "kmalloc-256");  // a maple_node too: the name is what says maple_node
  CHECK(idx(4096) == "kmalloc-4k");
  CHECK(idx(4097) == "none");

  // A pre-6.x kernel (no name= on either event), in trace-cmd report's layout (no flags
  // column, 0x pointers, a "cpus=" header).
  std::string text =
      "cpus=2\n"
      "           <...>-39771 [000] 312444.141944: kmem_cache_alloc:     call_site=getname_flags+0x4f/0x1f0 ptr=0xffff888100001000 bytes_req=4096 bytes_alloc=4096 gfp_flags=GFP_KERNEL\n"
      "           <...>-39771 [000] 312444.141956: kmem_cache_alloc:     call_site=__alloc_file+0x28/0x110 ptr=0xffff888100002000 bytes_req=184 bytes_alloc=192 gfp_flags=GFP_KERNEL\n"
      "          <idle>-0     [001] 312444.141960: kmalloc_node:         call_site=__alloc_skb+0x9e/0x190 [skbuff] ptr=0xffff888100003000 bytes_req=9000 bytes_alloc=16384 gfp_flags=GFP_ATOMIC node=-1\n"
      "          <idle>-0     [001] 312444.141970: kfree:                call_site=skb_release_data+0x128/0x1b0 ptr=0xffff888100003000\n"
      "           <...>-39771 [000] 312444.141990: kmem_cache_free:      call_site=putname+0x5b/0x70 ptr=0xffff888100001000\n"
      "          <idle>-0     [001] 312444.142000: kfree:                call_site=__fput+0x11/0x20 ptr=0xffff888100002000\n"
      "CPU:1 [LOST 17 EVENTS]\n";
  Trace t = build_trace(parse_ftrace(text, "old.txt", caches), caches);
  CHECK(t.caches == std::vector<std::string>{"kmalloc-192", "kmalloc-4k"});
  CHECK(t.stats.by_size == 2);
  CHECK(t.stats.too_large == 1);  // the 16 kB kmalloc_node, dropped with its kfree
  CHECK(t.stats.lost_events == 17);
  REQUIRE(t.cpus.size() == 2);
  CHECK(t.cpus[0].size() == 3);
  REQUIRE(t.cpus[1].size() == 1);
  CHECK(t.cpus[1][0].op == TraceOp::Free);
  CHECK(t.cpus[1][0].peer == 0);  // a kfree on CPU 1 of CPU 0's allocation
  CHECK(t.cpus[1][0].at == 56 * kUs);
}

TEST_CASE("trace: slubsim's own format and its errors") {
  const std::string ok =
      "# cpu time_ns op cache size id\n"
      "0 1000 alloc maple_node 256 7\n"
      "1 1500.5 alloc - 100 8\n"
      "0 2000 free - 0 9\n"          // allocated before the trace: skipped
      "1 2500 kfree_rcu - 256 7\n"   // a cross-CPU kfree_rcu
      "0 3000 free kmalloc-128 100 8\n";
  auto caches = default_caches();
  Trace t = build_trace(parse_native_trace(ok, "ok.txt"), caches);
  CHECK(t.caches == std::vector<std::string>{"maple_node", "kmalloc-128"});
  CHECK(t.stats.unknown_frees == 1);
  CHECK(t.stats.by_size == 1);
  CHECK(t.count(TraceOp::KfreeRcu) == 1);
  CHECK(t.cpus[1][0].at == 500500);  // ps
  CHECK(t.span == 2000 * kNs);

  CHECK(error_field("0 0 alloc maple_node 256\n", false) == "line 1");
  CHECK(error_field("# c\n0 0 alloc maple_node 256 1 x\n", false) == "line 2");
  CHECK(error_field("0 0 alloc no_such_cache 256 1\n", false) == "line 1");
  CHECK(error_field("0 0 malloc maple_node 256 1\n", false) == "line 1");
  CHECK(error_field("0 1.0001 alloc maple_node 256 1\n", false) == "line 1");
  CHECK(error_field("0 0 alloc - 0 1\n", false) == "line 1");
  CHECK(error_field("0 0 alloc maple_node 256 1\n0 1 alloc maple_node 256 1\n", false) == "line 2");
  CHECK(error_field("0 0 alloc maple_node 256 1\n0 1 free - 0 1\n0 2 free - 0 1\n", false) == "line 3");
  CHECK(error_field("0 0 alloc maple_node 256 1\n0 1 free kmalloc-256 0 1\n", false) == "line 2");
  CHECK(error_field("0 5 alloc maple_node 256 1\n0 4 free - 0 1\n", false) == "line 2");
  try {
    build_trace(parse_native_trace("# nothing\n", "e.txt"), caches);
    FAIL("an empty trace was accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("no allocations") != std::string::npos);
  }
}
