#pragma once
// The run loop's snapshots on their way from the engine to the output file.

#include <array>
#include <cstdint>
#include <vector>

#include "sim/engine/engine.hpp"

namespace lattica {

class BackgroundWriter;
class OutputFile;

/// Takes snapshots into the engine's host slots in turn, so that copying a configuration
/// overlaps the sweeps after it, and has the background writer append each to the output
/// (null: a rank that writes nothing but takes part in the engine's collective copy). A
/// decomposed engine's snapshots are written at once, one box at a time.
class SnapshotSink {
 public:
  SnapshotSink(Engine& engine, OutputFile* output, BackgroundWriter& writer);

  /// Starts copying the configuration after `sweep` sweeps into the next slot, once the
  /// slot's previous frame is written, and queues its write.
  void take(int64_t sweep);

 private:
  /// A decomposed engine's snapshot: written box by box as the boxes reach rank 0 (collective),
  /// before take() returns.
  void stream(int64_t sweep);

  Engine& engine_;
  OutputFile* output_;
  BackgroundWriter& writer_;
  std::array<uint64_t, Engine::kSnapshotSlots> slot_jobs_{};  ///< the job writing each slot
  int next_slot_ = 0;
};

}  // namespace lattica
