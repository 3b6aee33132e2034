// How far a long job has got: points done of the total, the rate, and the time still to go.
//
// On a terminal the meter rewrites one status line on stderr; elsewhere (a batch system's log, a
// pipe) it prints plain lines, at most one per `min_gap` seconds and always the last, so a log
// shows the pace without a line per point. The rate counts only points simulated here: points
// found on disk (a resumed sweep) count as done but not toward the rate.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace slubsim {

class ProgressMeter {
 public:
  // total: the points this process answers for; already: of them, those found on disk.
  // quiet: print nothing. tty: -1 = ask isatty(stderr), 0 = plain lines, 1 = a status line.
  ProgressMeter(std::string what, std::size_t total, std::size_t already, bool quiet, int tty = -1,
                double min_gap = 10.0);
  ~ProgressMeter();

  // One point has its result; `detail` names it (e.g. "v6.17 nr_task=64 run=1: 1234 ops/s").
  void point_done(const std::string& detail);
  // A message that is not a point (a warning); keeps the status line intact on a terminal.
  void note(const std::string& line);
  // The summary line at the end (done of total, rate, wall time).
  void finish();

  // "3.2 points/s", "ETA 1h02m" pieces, exposed for tests.
  static std::string format_eta(double seconds);

 private:
  std::string line(const std::string& detail) const;
  std::string what_;
  std::size_t total_, done_, already_, printed_done_ = 0;
  bool quiet_, tty_;
  double min_gap_;
  std::chrono::steady_clock::time_point start_, last_print_;
  bool printed_ = false, finished_ = false;
  std::mutex mu_;
};

}  // namespace slubsim
