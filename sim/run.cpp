#include "sim/run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace lattica {

namespace {

using Clock = std::chrono::steady_clock;

/// Thermalization sweeps between two adjustments of the Metropolis step.
constexpr int64_t kTuningBlock = 10;

/// A status line on stderr, redrawn at most twice a second.
class Progress {
 public:
  Progress(bool enabled, int64_t total)
      : enabled_(enabled), total_(total), start_(Clock::now()), last_(start_) {}

  /// True when a redraw is due; the caller then synchronizes the engine and calls show().
  bool due() const { return enabled_ && Clock::now() - last_ > std::chrono::milliseconds(500); }

  void show(int64_t done, const char* phase) {
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

  void finish() {
    if (shown_) std::fprintf(stderr, "\r%-80s\r", "");
  }

 private:
  bool enabled_;
  int64_t total_;
  Clock::time_point start_, last_;
  bool shown_ = false;
};

}  // namespace

RunSummary run_chain(const Config& config, Engine& engine, OutputFile& output, bool show_progress) {
  const int64_t therm = config.thermalization;
  const int64_t total = therm + config.measurements * config.measure_every;
  std::vector<int64_t> sweeps;  // measurements waiting to be written
  std::vector<double> values;
  MeasurementBatch batch;
  std::vector<unsigned char> frame;
  RunSummary summary;
  const SnapshotFormat format = engine.snapshot_format();
  auto take_snapshot = [&](int64_t sweep) {
    frame.resize(static_cast<size_t>(engine.replicas() * engine.volume()) * format.components *
                 element_bytes(format.type));
    engine.configuration(frame.data());
    output.append_snapshot(sweep, frame.data());
    ++summary.snapshots;
  };
  std::vector<int64_t> spectral_sweeps;  // structure-factor measurements waiting to be written
  std::vector<double> spectral_values;
  std::vector<int64_t> timeslice_sweeps;  // time-slice correlators waiting to be written
  std::vector<double> timeslice_values;
  auto collect = [&] {
    engine.collect(batch);
    values.insert(values.end(), batch.values.begin(), batch.values.end());
    // The batch holds the last batch.count measurements of `sweeps`.
    const size_t first = sweeps.size() - static_cast<size_t>(batch.count);
    for (int64_t row : batch.spectral_rows) spectral_sweeps.push_back(sweeps[first + row]);
    spectral_values.insert(spectral_values.end(), batch.spectral_values.begin(),
                           batch.spectral_values.end());
    for (int64_t row : batch.timeslice_rows) timeslice_sweeps.push_back(sweeps[first + row]);
    timeslice_values.insert(timeslice_values.end(), batch.timeslice_values.begin(),
                            batch.timeslice_values.end());
  };
  auto write_measurements = [&] {
    if (engine.queued() > 0) collect();
    output.append_measurements(sweeps, values);
    output.append_structure_factor_series(spectral_sweeps, spectral_values);
    output.append_timeslices(timeslice_sweeps, timeslice_values);
    output.flush();
    sweeps.clear();
    values.clear();
    spectral_sweeps.clear();
    spectral_values.clear();
    timeslice_sweeps.clear();
    timeslice_values.clear();
  };
  const int64_t capacity = config.engine_settings().measurement_capacity;

  Progress progress(show_progress, total);
  const auto start = Clock::now();
  engine.initialize();

  int64_t sweep = 0;
  int64_t last_snapshot = -1;
  while (sweep < total) {
    // Advance to the next event: a measurement, a snapshot, the end of thermalization, or a
    // progress redraw (bounded steps keep the status line live on long runs).
    int64_t next = std::min<int64_t>(total, sweep + 1024);
    if (sweep < therm) {
      // Thermalization goes in blocks that measure the Metropolis acceptance and tune the step.
      next = std::min({next, therm, sweep + kTuningBlock});
      engine.thermalization_sweep(static_cast<uint64_t>(sweep),
                                  static_cast<uint64_t>(next - sweep));
    } else {
      const int64_t into = sweep - therm;
      next = std::min(next, therm + (into / config.measure_every + 1) * config.measure_every);
      if (config.snapshot_every > 0)
        next = std::min(next, therm + (into / config.snapshot_every + 1) * config.snapshot_every);
      engine.sweep(static_cast<uint64_t>(sweep), static_cast<uint64_t>(next - sweep));
    }
    sweep = next;
    if (sweep > therm) {
      const int64_t into = sweep - therm;
      if (into % config.measure_every == 0) {
        engine.measure();  // queued on the device; no wait
        sweeps.push_back(sweep);
        ++summary.measurements;
        if (engine.queued() == capacity) collect();
        if (static_cast<int64_t>(sweeps.size()) >= config.flush_every) write_measurements();
      }
      if (config.snapshot_every > 0 && into % config.snapshot_every == 0) {
        take_snapshot(sweep);
        last_snapshot = sweep;
      }
    }
    if (progress.due()) {
      engine.synchronize();
      progress.show(sweep, sweep <= therm ? "thermalizing" : "measuring");
    }
  }
  write_measurements();
  if (last_snapshot != total) take_snapshot(total);  // the final configuration, always
  output.write_histograms(engine.histograms());
  StructureFactorSums structure_factor;
  if (engine.structure_factor(structure_factor)) output.write_structure_factor(structure_factor);
  output.write_step_tuning(engine.step_tuning());
  engine.synchronize();
  output.flush();
  progress.finish();

  summary.sweeps = total;
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  summary.site_updates_per_ns = summary.seconds > 0
                                    ? static_cast<double>(total) * engine.volume() *
                                          engine.replicas() * config.sequence.size() /
                                          (summary.seconds * 1e9)
                                    : 0.0;
  return summary;
}

}  // namespace lattica
