#include "sim/run/progress.hpp"

#include <cstdio>

namespace lattica {

Progress::Progress(bool enabled, int64_t total)
    : enabled_(enabled), total_(total), start_(Clock::now()), last_(start_) {}

bool Progress::due() const {
  return enabled_ && Clock::now() - last_ > std::chrono::milliseconds(500);
}

void Progress::show(int64_t done, const char* phase) {
  last_ = Clock::now();
  const double elapsed = std::chrono::duration<double>(last_ - start_).count();
  const double rate = elapsed > 0 ? done / elapsed : 0.0;
  const double eta = rate > 0 ? (total_ - done) / rate : 0.0;
  std::fprintf(stderr, "\r%-12s %lld/%lld sweeps  %.1f sweeps/s  ETA %02d:%02d:%02d   ", phase,
               static_cast<long long>(done), static_cast<long long>(total_), rate,
               static_cast<int>(eta / 3600), static_cast<int>(eta / 60) % 60,
               static_cast<int>(eta) % 60);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::finish() {
  if (shown_) std::fprintf(stderr, "\r%-80s\r", "");
}

}  // namespace lattica
