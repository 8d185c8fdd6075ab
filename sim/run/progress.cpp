#include "sim/run/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "sim/run/stop_signals.hpp"

namespace lattica {

namespace {

struct Rate {
  double sweeps_per_second;
  double eta_seconds;
};

Rate rate_of(int64_t swept, int64_t left, double seconds) {
  const double rate = seconds > 0 ? swept / seconds : 0.0;
  return {rate, rate > 0 ? left / rate : 0.0};
}

/// "H:MM:SS", hours unbounded (a 24-hour job's ETA reads 23:59:59, a week's 167:59:59).
void format_duration(char* text, size_t size, double seconds) {
  const auto s = static_cast<long long>(seconds);
  std::snprintf(text, size, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
}

}  // namespace

ProgressStyle progress_style(bool quiet, bool root) {
  if (quiet) return ProgressStyle::none;
  if (isatty(STDERR_FILENO)) return ProgressStyle::terminal;
  return root ? ProgressStyle::log : ProgressStyle::none;
}

Progress::Progress(ProgressStyle style, int64_t total, double log_minutes)
    : style_(style),
      total_(total),
      log_interval_(60.0 * log_minutes),
      start_(Clock::now()),
      last_(start_) {}

void Progress::start(int64_t sweep) {
  first_ = sweep;
  start_ = last_ = Clock::now();
}

bool Progress::due() const {
  const auto since = Clock::now() - last_;
  switch (style_) {
    case ProgressStyle::terminal:
      return since > std::chrono::milliseconds(500);
    case ProgressStyle::log:
      return progress_requested() || (log_interval_.count() > 0 && since >= log_interval_);
    case ProgressStyle::none:
      break;
  }
  return false;
}

void Progress::show(int64_t done, const char* phase, int64_t last_checkpoint) {
  last_ = Clock::now();
  const Rate r =
      rate_of(done - first_, total_ - done, std::chrono::duration<double>(last_ - start_).count());
  char eta[32];
  format_duration(eta, sizeof eta, r.eta_seconds);
  if (style_ == ProgressStyle::terminal) {
    std::fprintf(stderr, "\r%-12s %lld/%lld sweeps  %.1f sweeps/s  ETA %s   ", phase,
                 static_cast<long long>(done), static_cast<long long>(total_), r.sweeps_per_second,
                 eta);
    std::fflush(stderr);
    shown_ = true;
    return;
  }
  take_progress_request();
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  char checkpoint[48] = "no checkpoint yet";
  if (last_checkpoint >= 0) {
    std::snprintf(checkpoint, sizeof checkpoint, "last checkpoint at sweep %lld",
                  static_cast<long long>(last_checkpoint));
  }
  // One write per line, so lines of concurrent jobs sharing a log do not interleave.
  std::fprintf(stderr,
               "sim: progress %s %s %lld/%lld sweeps (%.1f %%), %.3g sweeps/s, ETA %s, %s\n", when,
               phase, static_cast<long long>(done), static_cast<long long>(total_),
               total_ > 0 ? 100.0 * done / total_ : 100.0, r.sweeps_per_second, eta, checkpoint);
  std::fflush(stderr);
}

void Progress::finish() {
  if (shown_) std::fprintf(stderr, "\r%-80s\r", "");
}

}  // namespace lattica
