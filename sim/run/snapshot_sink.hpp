#pragma once
// The run loop's snapshots on their way from the engine to the output file.

#include <array>
#include <cstdint>

#include "sim/engine/engine.hpp"

namespace lattica {

class BackgroundWriter;
class OutputFile;

/// Takes snapshots into the engine's host slots in turn, so that copying a configuration
/// overlaps the sweeps after it, and has the background writer append each to the output
/// (null: a rank that writes nothing but takes part in the engine's collective copy).
class SnapshotSink {
 public:
  SnapshotSink(Engine& engine, OutputFile* output, BackgroundWriter& writer);

  /// Starts copying the configuration after `sweep` sweeps into the next slot, once the
  /// slot's previous frame is written, and queues its write.
  void take(int64_t sweep);

 private:
  Engine& engine_;
  OutputFile* output_;
  BackgroundWriter& writer_;
  std::array<uint64_t, Engine::kSnapshotSlots> slot_jobs_{};  ///< the job writing each slot
  int next_slot_ = 0;
};

}  // namespace lattica
