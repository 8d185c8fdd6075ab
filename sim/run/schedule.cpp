#include "sim/run/schedule.hpp"

#include <algorithm>

#include "sim/config.hpp"

namespace lattica {

Schedule::Schedule(const Config& config)
    : thermalization_(config.thermalization),
      total_(config.total_sweeps()),
      measure_every_(config.measure_every),
      snapshot_every_(config.snapshot_every) {}

const char* Schedule::phase(int64_t done) const {
  return done <= thermalization_ ? "thermalizing" : "measuring";
}

int64_t Schedule::next_multiple(int64_t done, int64_t every) const {
  return thermalization_ + ((done - thermalization_) / every + 1) * every;
}

int64_t Schedule::next_stop(int64_t done) const {
  int64_t next = std::min(total_, done + kMaxSweepsPerStep);
  if (thermalizing(done)) return std::min({next, thermalization_, done + kTuningBlock});
  next = std::min(next, next_multiple(done, measure_every_));
  if (snapshot_every_ > 0) next = std::min(next, next_multiple(done, snapshot_every_));
  return next;
}

bool Schedule::measures_at(int64_t done) const {
  return done > thermalization_ && (done - thermalization_) % measure_every_ == 0;
}

bool Schedule::snapshot_at(int64_t done) const {
  return done > thermalization_ && snapshot_every_ > 0 &&
         (done - thermalization_) % snapshot_every_ == 0;
}

}  // namespace lattica
