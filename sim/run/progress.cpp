#include "sim/run/progress.h"

#include <cmath>
#include <fmt/format.h>
#include <unistd.h>

namespace slubsim {

ProgressMeter::ProgressMeter(std::string what, std::size_t total, std::size_t already, bool quiet, int tty,
                             double min_gap)
    : what_(std::move(what)),
      total_(total),
      done_(already),
      already_(already),
      quiet_(quiet),
      tty_(tty < 0 ? isatty(STDERR_FILENO) == 1 : tty == 1),
      min_gap_(min_gap),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

ProgressMeter::~ProgressMeter() {
  // An interrupted job still leaves the terminal on a fresh line.
  if (!quiet_ && tty_ && printed_ && !finished_) std::fputs("\n", stderr);
}

std::string ProgressMeter::format_eta(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long long t = std::llround(s);
  if (t < 60) return fmt::format("{}s", t);
  if (t < 3600) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
}

std::string ProgressMeter::line(const std::string& detail) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::size_t simulated = done_ - already_;
  const std::size_t left = total_ - done_;
  std::string rate = "-", eta = "?";
  if (simulated > 0 && elapsed > 0) {
    const double per_s = static_cast<double>(simulated) / elapsed;
    rate = per_s >= 1 ? fmt::format("{:.1f} points/s", per_s) : fmt::format("{:.1f} points/min", per_s * 60);
    eta = format_eta(static_cast<double>(left) / per_s);
  }
  if (left == 0) eta = "0s";
  std::string out = fmt::format("slubsim: {} [{}/{}] {}, ETA {}, {} elapsed", what_, done_, total_, rate, eta,
                                format_eta(elapsed));
  if (!detail.empty()) out += " | " + detail;
  return out;
}

void ProgressMeter::point_done(const std::string& detail) {
  if (quiet_) return;
  std::lock_guard<std::mutex> g(mu_);
  ++done_;
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    // \r, the line, and clear to its end: one status line that each point rewrites.
    std::fprintf(stderr, "\r%s\x1b[K", line(detail).c_str());
    std::fflush(stderr);
    printed_ = true;
    return;
  }
  const double gap = std::chrono::duration<double>(now - last_print_).count();
  if (!printed_ || gap >= min_gap_ || done_ == total_) {
    std::fprintf(stderr, "%s\n", line(detail).c_str());
    last_print_ = now;
    printed_ = true;
    printed_done_ = done_;
  }
}

void ProgressMeter::note(const std::string& text) {
  if (quiet_) return;
  std::lock_guard<std::mutex> g(mu_);
  if (tty_ && printed_) std::fputs("\r\x1b[K", stderr);
  std::fprintf(stderr, "slubsim: %s\n", text.c_str());
}

void ProgressMeter::finish() {
  if (quiet_ || finished_) return;
  std::lock_guard<std::mutex> g(mu_);
  finished_ = true;
  if (tty_) {
    std::fprintf(stderr, "\r%s\x1b[K\n", line("").c_str());
    return;
  }
  if (printed_ && printed_done_ == done_) return;  // the last point's line said it all
  std::fprintf(stderr, "%s\n", line("").c_str());
}

}  // namespace slubsim
