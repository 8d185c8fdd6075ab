#include "sim/run/run_loop.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "sim/checkpoint_parts.hpp"
#include "sim/config.hpp"
#include "sim/decomposition.hpp"

namespace lattica {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

RunLoop::RunLoop(const Config& config, Engine& engine, OutputFile* output, ProgressStyle progress,
                 Communicator* ranks)
    : config_(config),
      engine_(engine),
      output_(output),
      schedule_(config),
      measurements_(config, engine, output, writer_, ranks),
      snapshots_(engine, output, writer_, config.dims, ranks),
      stop_(config, ranks),
      progress_(progress, schedule_.total(), config.progress_minutes),
      ranks_(ranks) {}

RunSummary RunLoop::run(const Checkpoint* resume) {
  const auto start = Clock::now();
  begin(resume);
  stop_.start();
  progress_.start(sweep_);
  while (sweep_ < schedule_.total()) {
    const auto step_start = Clock::now();
    const int64_t previous = sweep_;
    advance();
    record_events();
    if (progress_.due()) {
      engine_.synchronize();
      progress_.show(sweep_, schedule_.phase(sweep_), last_checkpoint_);
    }
    if (sweep_ == schedule_.total()) break;
    if (stop_.times_steps()) {
      engine_.synchronize();  // the step's real duration, not its launch time
      stop_.step_took(seconds_since(step_start));
    }
    const StopDecision decision = stop_.decide(previous, sweep_);
    if (!decision.stop_reason.empty()) {
      summary_.stopped = true;
      summary_.stop_reason = decision.stop_reason;
      break;
    }
    if (decision.checkpoint) checkpoint();
  }
  finish();

  summary_.sweeps = sweep_;
  summary_.streamed_snapshots = snapshots_.streamed_frames();
  summary_.collective_snapshots = snapshots_.collective();
  summary_.snapshot_seconds = snapshots_.stream_seconds();
  summary_.seconds = seconds_since(start);
  summary_.site_updates_per_ns = summary_.seconds > 0
                                     ? static_cast<double>(sweep_ - summary_.first_sweep) *
                                           engine_.volume() * engine_.replicas() *
                                           config_.sequence.size() / (summary_.seconds * 1e9)
                                     : 0.0;
  return summary_;
}

void RunLoop::begin(const Checkpoint* resume) {
  if (resume) {
    engine_.restore(resume->engine);
    sweep_ = resume->sweep;
    last_snapshot_ = resume->last_snapshot;
    last_checkpoint_ = resume->sweep;
  } else {
    engine_.initialize();
  }
  summary_.first_sweep = sweep_;
}

void RunLoop::advance() {
  const int64_t next = schedule_.next_stop(sweep_);
  const auto first = static_cast<uint64_t>(sweep_);
  const auto count = static_cast<uint64_t>(next - sweep_);
  if (schedule_.thermalizing(sweep_)) {
    // Blocks that measure the Metropolis acceptance and tune the step.
    engine_.thermalization_sweep(first, count);
  } else if (schedule_.measures_at(next)) {
    engine_.sweep_and_measure(first, count);  // queued; no wait
  } else {
    engine_.sweep(first, count);
  }
  sweep_ = next;
}

void RunLoop::record_events() {
  if (schedule_.measures_at(sweep_)) {  // measured with the sweeps of advance()
    ++summary_.measurements;
    measurements_.record(sweep_);
  }
  if (schedule_.snapshot_at(sweep_)) snapshot(sweep_);
}

void RunLoop::snapshot(int64_t sweep) {
  snapshots_.take(sweep);
  ++summary_.snapshots;
  last_snapshot_ = sweep;
}

void RunLoop::checkpoint() {
  const auto begin = Clock::now();
  measurements_.write();
  measurements_.write_results();
  Checkpoint c;
  c.engine = engine_.state();  // decomposed: each rank's box
  c.chain_config = config_.chain_toml;
  c.sweep = sweep_;
  c.last_snapshot = last_snapshot_;
  if (output_) {
    output_->flush();
    output_->publish();  // a resumed run's copy: the checkpoint counts on its rows
    c.output = output_->lengths();
  }
  const std::string path = checkpoint_path(config_.output_path);
  if (ranks_ && ranks_->size() > 1) {
    const Decomposition boxes(config_.dims, config_.parallel_grid, ranks_->size());
    write_decomposed_checkpoint(path, std::move(c), boxes, engine_.replicas(), *ranks_);
  } else if (output_) {
    write_checkpoint(path, c);
    remove_checkpoint_parts(path);  // those of a decomposed run this one resumed
  }
  last_checkpoint_ = sweep_;
  ++summary_.checkpoints;
  stop_.checkpoint_took(seconds_since(begin));
}

void RunLoop::finish() {
  if (summary_.stopped) {
    checkpoint();
  } else {
    measurements_.write();
    if (last_snapshot_ != schedule_.total()) snapshot(schedule_.total());  // the final one
    if (stop_.checkpoints()) {
      checkpoint();  // at the end too, so the run can be extended with more measurements
    } else {
      measurements_.write_results();
    }
  }
  writer_.drain();
  engine_.synchronize();
  if (output_) output_->flush();
  progress_.finish();
}

RunSummary run_chain(const Config& config, Engine& engine, OutputFile* output,
                     ProgressStyle progress, const Checkpoint* resume, Communicator* ranks) {
  return RunLoop(config, engine, output, progress, ranks).run(resume);
}

}  // namespace lattica
