// Engine benchmark: wall time and engine events per second for a run of the stand-in workload.
// Prints one line per repetition; tools/bench.sh takes medians. Not a test: machines are noisy.
//
//   slubsim_bench [topology] [nr_task] [duration] [repetitions]
#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <string>

#include "sim/run/job.h"

using namespace slubsim;

int main(int argc, char** argv) {
  JobRequest req;
  req.home = default_home();
  req.topology = argc > 1 ? argv[1] : "amd-turin-2s-512t";
  req.workload = "lock-standin";
  req.nr_task = argc > 2 ? argv[2] : "512";
  req.duration = argc > 3 ? argv[3] : "10ms";
  req.warmup = "1ms";
  req.jobs = 1;
  int reps = argc > 4 ? std::stoi(argv[4]) : 5;
  try {
    Job job = resolve_job(req);
    for (int i = 0; i < reps; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      JobResult r = run_job(job, {});
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const RunResult& rr = r.runs[0][0][0];
      fmt::print("rep={} topology={} nr_task={} sim_ms={:.3f} wall_s={:.4f} events={} requests={} "
                 "events_per_s={:.0f} requests_per_s={:.0f} ops_per_s={}\n",
                 i, req.topology, rr.nr_task, to_sec(rr.end_time) * 1e3, wall, rr.events,
                 rr.requests, rr.events / wall, rr.requests / wall, rr.ops_per_sec);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "slubsim_bench: {}\n", e.what());
    return 2;
  }
  return 0;
}
