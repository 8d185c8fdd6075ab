#include "sim/run.hpp"

#include "sim/background_writer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lattica {

namespace {

using Clock = std::chrono::steady_clock;

/// Thermalization sweeps between two adjustments of the Metropolis step.
constexpr int64_t kTuningBlock = 10;
/// Most sweeps between two looks at the clock, the signals and the progress line.
constexpr int64_t kMaxSweepsPerStep = 64;

volatile std::sig_atomic_t stop_signal = 0;

extern "C" void on_stop_signal(int signal) { stop_signal = signal; }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return "a signal";
  }
}

/// Seconds since the epoch when the run must have stopped: run.walltime after the start, or
/// Slurm's job end time, whichever comes first; 0 when neither applies.
double stop_deadline(const Config& config, double start) {
  double deadline = config.walltime_seconds > 0 ? start + config.walltime_seconds : 0.0;
  if (const char* end = std::getenv("SLURM_JOB_END_TIME")) {
    char* rest = nullptr;
    const double slurm = std::strtod(end, &rest);
    if (rest != end && slurm > 0 && (deadline == 0.0 || slurm < deadline)) deadline = slurm;
  }
  return deadline;
}

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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

/// Throws (a runtime failure) at the first value of `batch` that is not finite, naming the
/// observable, the replica and the sweep, so that it never reaches the output: the couplings
/// made the energies overflow, or a Langevin pass diverged. sweeps[first + k] is the sweep of
/// the batch's measurement k.
void refuse_non_finite(const MeasurementBatch& batch, const std::vector<int64_t>& sweeps,
                       size_t first, const std::vector<std::string>& names, int replicas,
                       bool langevin) {
  const size_t per_measurement = names.size() * static_cast<size_t>(replicas);
  for (size_t i = 0; i < batch.values.size(); ++i) {
    if (std::isfinite(batch.values[i])) continue;
    const size_t k = i / per_measurement, r = i % per_measurement / names.size();
    std::ostringstream os;
    os << "the measurement at sweep " << sweeps[first + k] << " is not finite: observable '"
       << names[i % names.size()] << "' of replica " << r << " is " << batch.values[i]
       << (langevin ? "; the Langevin dynamics diverged: lower update.langevin_step, or use "
                      "\"mala\", whose accept/reject keeps it stable"
                    : "; the couplings make the model's numbers overflow: choose smaller ones");
    throw std::runtime_error(os.str());
  }
}

}  // namespace

void install_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGTERM, SIGUSR1}) sigaction(signal, &action, nullptr);
  action.sa_flags = SA_RESETHAND;  // a second Ctrl-C kills
  sigaction(SIGINT, &action, nullptr);
  // Past a file-size limit (ulimit -f) a write fails with EFBIG, reported like a full disk,
  // instead of the signal killing the run without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  // A closed stderr (sim ... 2>&1 | head -1) makes messages fail with EPIPE instead of killing
  // the run.
  std::signal(SIGPIPE, SIG_IGN);
}

RunSummary run_chain(const Config& config, Engine& engine, OutputFile* output, bool show_progress,
                     const Checkpoint* resume, Communicator* ranks) {
  // Other ranks than 0 of a decomposed run take part in every collective step of the engine
  // (collect, snapshots, state) but write nothing.
  const bool writes = output != nullptr;
  const int64_t therm = config.thermalization;
  const int64_t total = config.total_sweeps();
  std::vector<int64_t> sweeps;  // measurements waiting to be written
  std::vector<double> values;
  MeasurementBatch batch;
  RunSummary summary;
  // Snapshots and measurement batches are written by a second thread while the chain goes on;
  // the output file is touched here only after writer.drain().
  BackgroundWriter writer;
  std::array<uint64_t, Engine::kSnapshotSlots> slot_writes{};  // the job writing each slot
  int next_slot = 0;
  auto take_snapshot = [&](int64_t sweep) {
    const int slot = next_slot;
    next_slot = (next_slot + 1) % Engine::kSnapshotSlots;
    writer.wait_for(slot_writes[slot]);  // the slot's previous frame is written
    engine.start_snapshot(slot);
    if (writes) {
      slot_writes[slot] = writer.submit([output, &engine, slot, sweep] {
        output->append_snapshot(sweep, engine.snapshot_data(slot));
      });
    }
    ++summary.snapshots;
  };
  std::vector<int64_t> spectral_sweeps;  // structure-factor measurements waiting to be written
  std::vector<double> spectral_values;
  std::vector<int64_t> timeslice_sweeps;  // time-slice correlators waiting to be written
  std::vector<double> timeslice_values;
  const std::vector<std::string> observable_names = engine.observable_names();
  const bool langevin =
      std::any_of(config.sequence.begin(), config.sequence.end(),
                  [](const std::string& a) { return a == "langevin" || a == "mala"; });
  auto collect = [&] {
    engine.collect(batch);
    // The batch holds the last batch.count measurements of `sweeps`.
    const size_t first = sweeps.size() - static_cast<size_t>(batch.count);
    refuse_non_finite(batch, sweeps, first, observable_names, engine.replicas(), langevin);
    values.insert(values.end(), batch.values.begin(), batch.values.end());
    for (int64_t row : batch.spectral_rows) spectral_sweeps.push_back(sweeps[first + row]);
    spectral_values.insert(spectral_values.end(), batch.spectral_values.begin(),
                           batch.spectral_values.end());
    for (int64_t row : batch.timeslice_rows) timeslice_sweeps.push_back(sweeps[first + row]);
    timeslice_values.insert(timeslice_values.end(), batch.timeslice_values.begin(),
                            batch.timeslice_values.end());
  };
  auto write_measurements = [&] {
    if (engine.queued() > 0) collect();
    if (writes) {
      writer.submit([output, sweeps = std::move(sweeps), values = std::move(values),
                     spectral_sweeps = std::move(spectral_sweeps),
                     spectral_values = std::move(spectral_values),
                     timeslice_sweeps = std::move(timeslice_sweeps),
                     timeslice_values = std::move(timeslice_values)] {
        output->append_measurements(sweeps, values);
        output->append_structure_factor_series(spectral_sweeps, spectral_values);
        output->append_timeslices(timeslice_sweeps, timeslice_values);
        output->flush();
      });
    }
    sweeps.clear();  // moved from: empty again
    values.clear();
    spectral_sweeps.clear();
    spectral_values.clear();
    timeslice_sweeps.clear();
    timeslice_values.clear();
  };
  const int64_t capacity = config.engine_settings().measurement_capacity;

  Progress progress(show_progress, total);
  const auto start = Clock::now();
  int64_t sweep = 0;
  int64_t last_snapshot = -1;
  if (resume) {
    engine.restore(resume->engine);
    sweep = resume->sweep;
    last_snapshot = resume->last_snapshot;
  } else {
    engine.initialize();
  }
  summary.first_sweep = sweep;

  // Checkpoints: the chain's state after whole steps of the loop below (thermalization steps
  // end on tuning-block boundaries, so a resumed run tunes in the same blocks).
  const std::string checkpoint_file = checkpoint_path(config.output_path);
  const bool checkpointing =
      config.checkpoint_every > 0 || config.checkpoint_minutes > 0 || config.walltime_seconds > 0;
  auto write_results = [&] {
    writer.drain();
    if (!writes) return;
    output->write_histograms(engine.histograms());
    StructureFactorSums structure_factor;
    if (engine.structure_factor(structure_factor)) output->write_structure_factor(structure_factor);
    output->write_step_tuning(engine.step_tuning());
  };
  double checkpoint_seconds = 0;  // how long the last one took
  auto checkpoint = [&] {
    const auto begin = Clock::now();
    write_measurements();
    write_results();
    Checkpoint c;
    c.engine = engine.state();  // collective: rank 0 gathers the configuration
    if (writes) {
      output->flush();
      output->publish();  // a resumed run's copy: the checkpoint counts on its rows
      c.chain_config = config.chain_toml;
      c.sweep = sweep;
      c.last_snapshot = last_snapshot;
      c.output = output->lengths();
      write_checkpoint(checkpoint_file, c);
    }
    ++summary.checkpoints;
    checkpoint_seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  };
  const double deadline = stop_deadline(config, epoch_seconds());
  auto last_checkpoint = Clock::now();
  double slowest_step = 0;  // seconds, of one step of the loop

  while (sweep < total) {
    const auto step_start = Clock::now();
    const int64_t previous = sweep;
    // Advance to the next event: a measurement, a snapshot, the end of thermalization, or a
    // look at the clock and the signals (bounded steps keep the status line live too).
    int64_t next = std::min<int64_t>(total, sweep + kMaxSweepsPerStep);
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
      const uint64_t count = static_cast<uint64_t>(next - sweep);
      if ((next - therm) % config.measure_every == 0) {
        engine.sweep_and_measure(static_cast<uint64_t>(sweep), count);  // queued; no wait
      } else {
        engine.sweep(static_cast<uint64_t>(sweep), count);
      }
    }
    sweep = next;
    if (sweep > therm) {
      const int64_t into = sweep - therm;
      if (into % config.measure_every == 0) {  // measured with the sweeps above
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
    if (sweep == total) break;
    // Stop early for a signal, or while the walltime still leaves room for a few more steps
    // and a checkpoint; otherwise checkpoint when one is due.
    if (deadline > 0) {
      engine.synchronize();  // the step's real duration, not its launch time
      slowest_step = std::max(
          slowest_step, std::chrono::duration<double>(Clock::now() - step_start).count());
    }
    const double reserve =
        std::max(kWalltimeMarginSeconds, 3 * slowest_step + 2 * checkpoint_seconds);
    int64_t signal = stop_signal;
    bool out_of_time = deadline > 0 && epoch_seconds() + reserve >= deadline;
    bool minutes_due = config.checkpoint_minutes > 0 &&
                       std::chrono::duration<double>(Clock::now() - last_checkpoint).count() >=
                           60.0 * config.checkpoint_minutes;
    if (ranks && ranks->size() > 1) {
      // What one rank saw (a signal, its clock) decides for all, so all stop at the same sweep.
      signal = ranks->max(signal);
      const int64_t clock = ranks->max(2 * out_of_time + minutes_due);
      out_of_time = clock >= 2;
      minutes_due = clock % 2 == 1;
    }
    if (signal != 0 || out_of_time) {
      summary.stopped = true;
      summary.stop_reason = signal != 0 ? signal_name(static_cast<int>(signal)) : "walltime";
      break;
    }
    const bool every_due = config.checkpoint_every > 0 &&
                           sweep / config.checkpoint_every != previous / config.checkpoint_every;
    if (every_due || minutes_due) {
      checkpoint();
      last_checkpoint = Clock::now();
    }
  }
  if (summary.stopped) {
    checkpoint();
  } else {
    write_measurements();
    if (last_snapshot != total) take_snapshot(total);  // the final configuration, always
    last_snapshot = total;
    if (checkpointing) {
      checkpoint();  // at the end too, so the run can be extended with more measurements
    } else {
      write_results();
    }
  }
  writer.drain();
  engine.synchronize();
  if (writes) output->flush();
  progress.finish();

  summary.sweeps = sweep;
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  summary.site_updates_per_ns = summary.seconds > 0
                                    ? static_cast<double>(sweep - summary.first_sweep) *
                                          engine.volume() * engine.replicas() *
                                          config.sequence.size() / (summary.seconds * 1e9)
                                    : 0.0;
  return summary;
}

}  // namespace lattica
