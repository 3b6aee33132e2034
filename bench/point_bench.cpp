// Point benchmark: one will-it-scale point, timed, and the bare event engine beside it.
//
//   slubsim_point_bench KERNEL NR_TASK [topology] [workload] [warmup] [duration]
//   slubsim_point_bench --bare [cpus]
//
// warmup "settle" (and no duration) lets the settle rule choose the window, as `slubsim run`
// does by default. --bare prints only the bare engine's events per second (cpus pending events,
// default 512), for a benchmark that times something else in the same sitting.
//
// Prints one line of key=value pairs: wall time, simulated time, engine events and slab
// operations per wall second, the process's peak RSS, and the events per second of the engine
// alone (sim/engine/engine.h) with as many pending events as the machine has CPUs, measured in the same
// process right after the point, so the model's cost is read as a ratio to the engine's, not as
// an absolute. tools/bench-points.sh runs one process per point (peak RSS is per process) and
// takes medians. Not a test: machines are noisy.
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/run/job.h"

using namespace slubsim;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A process that, each time it fires, schedules itself again a pseudo-random 1-1000 ns later:
// the engine's heap with `n` pending events and nothing else.
class Ticker final : public Process {
 public:
  Ticker(Engine& e, std::uint64_t seed) : Process(static_cast<std::uint32_t>(seed) + 1), e_(e), x_(seed * 2654435761u + 1) {}
  void fire() override {
    x_ = x_ * 6364136223846793005ull + 1442695040888963407ull;
    e_.schedule(e_.now() + static_cast<Time>((x_ >> 33) % 1000 + 1) * kNs, this);
  }

 private:
  Engine& e_;
  std::uint64_t x_;
};

// Events per second of the bare engine with n pending events, over about `budget` seconds.
double bare_engine_events_per_sec(int n, double budget) {
  Engine e;
  std::vector<Ticker> tickers;
  tickers.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) tickers.emplace_back(e, static_cast<std::uint64_t>(i));
  for (int i = 0; i < n; ++i) e.schedule(static_cast<Time>(i) * kNs, &tickers[static_cast<std::size_t>(i)]);
  const std::uint64_t batch = 1u << 20;
  auto t0 = std::chrono::steady_clock::now();
  std::uint64_t done = 0;
  double wall = 0;
  do {
    for (std::uint64_t i = 0; i < batch; ++i) e.step();
    done += batch;
    wall = seconds_since(t0);
  } while (wall < budget);
  return static_cast<double>(done) / wall;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--bare") {
    const int cpus = argc > 2 ? std::stoi(argv[2]) : 512;
    fmt::print("bare_engine_events_per_s={:.0f}\n", bare_engine_events_per_sec(cpus, 1.0));
    return 0;
  }
  if (argc < 3) {
    fmt::print(stderr, "usage: slubsim_point_bench KERNEL NR_TASK [topology] [workload] [warmup] [duration]\n");
    return 2;
  }
  JobRequest req;
  req.home = default_home();
  req.kernel = argv[1];
  req.nr_task = argv[2];
  req.topology = argc > 3 ? argv[3] : "amd-turin-2s-512t";
  req.workload = argc > 4 ? argv[4] : "mmap1";
  req.warmup = argc > 5 ? argv[5] : "20ms";
  req.duration = argc > 6 ? argv[6] : (req.warmup == "settle" ? "" : "12ms");
  if (req.warmup == "settle") req.warmup.clear();
  req.jobs = 1;
  try {
    Job job = resolve_job(req);
    auto t0 = std::chrono::steady_clock::now();
    JobResult r = run_job(job, {});
    const double wall = seconds_since(t0);
    const RunResult& rr = r.runs[0][0][0];
    const double sim_ms = to_sec(rr.end_time) * 1e3;
    // Slab operations: the window's traffic per counted operation (allocations, frees and
    // kfree_rcu of every cache the program uses) times the operations of the whole run at the
    // window's rate, warm-up included.
    double per_op = 0;
    for (const auto& [cache, t] : rr.per_op) per_op += t[0] + t[1] + t[2];
    const double slab_ops = per_op * static_cast<double>(rr.ops_per_sec) * to_sec(rr.end_time);
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    const double rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux: kilobytes
    const double bare = bare_engine_events_per_sec(job.machine.nr_cpus, 0.5);
    fmt::print("kernel={} nr_task={} topology={} workload={} wall_s={:.3f} sim_ms={:.3f} "
               "wall_s_per_sim_ms={:.4f} events={} events_per_s={:.0f} slab_ops_per_s={:.0f} "
               "ops_per_sec={} peak_rss_mb={:.0f} bare_engine_events_per_s={:.0f} engine_share={:.4f} "
               "warmup_ms={:.0f} window_ms={:.0f} settled={} half_width_pct={:.2f}\n",
               req.kernel, rr.nr_task, req.topology, req.workload, wall, sim_ms, wall / sim_ms, rr.events,
               static_cast<double>(rr.events) / wall, slab_ops / wall, rr.ops_per_sec, rss_mb, bare,
               static_cast<double>(rr.events) / wall / bare, to_us(rr.warmup) / 1000.0, to_us(rr.window) / 1000.0,
               rr.settle.settled ? 1 : 0,
               rr.ops_per_sec ? 100.0 * rr.settle.half_width / static_cast<double>(rr.ops_per_sec) : 0.0);
  } catch (const std::exception& e) {
    fmt::print(stderr, "slubsim_point_bench: {}\n", e.what());
    return 2;
  }
  return 0;
}
