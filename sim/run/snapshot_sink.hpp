#pragma once
// The run loop's snapshots on their way from the engine to the output file.

#include <array>
#include <cstdint>
#include <vector>

#include "sim/engine/engine.hpp"

namespace lattica {

class BackgroundWriter;
class Communicator;
class OutputFile;

/// Takes snapshots into the engine's host slots in turn, so that copying a configuration
/// overlaps the sweeps after it, and has the background writer append each to the output
/// (null: a rank that writes nothing but takes part in the engine's collective copy). A
/// decomposed engine's snapshots are written at once: with parallel HDF5 every rank writes its
/// own box into the frame (collectively, over MPI-IO), otherwise (or when the environment of a
/// rank sets LATTICA_SNAPSHOT_WRITES=rank0, or the output file was made before frames were
/// written so) rank 0 writes one box at a time as they reach it.
class SnapshotSink {
 public:
  /// dims: the lattice's extents; ranks: those of a decomposed run (null or one alone).
  /// Collective over the ranks.
  SnapshotSink(Engine& engine, OutputFile* output, BackgroundWriter& writer,
               const std::vector<int64_t>& dims, Communicator* ranks);

  /// Starts copying the configuration after `sweep` sweeps into the next slot, once the
  /// slot's previous frame is written, and queues its write.
  void take(int64_t sweep);

  /// A decomposed run's frames so far: how many, whether every rank wrote its box itself
  /// (parallel HDF5) or rank 0 wrote them a box at a time, and the seconds they took.
  int64_t streamed_frames() const { return streamed_frames_; }
  bool collective() const { return collective_; }
  double stream_seconds() const { return stream_seconds_; }

 private:
  /// A decomposed engine's snapshot (collective), written before take() returns: by every rank
  /// into the frame when the build has parallel HDF5, else box by box as the boxes reach rank 0.
  void stream(int64_t sweep);
  /// Rank 0 appends the frame and closes the file; every rank opens it over MPI-IO and writes
  /// its box; rank 0 opens it again.
  void write_collectively(int64_t sweep);

  Engine& engine_;
  OutputFile* output_;
  BackgroundWriter& writer_;
  std::vector<int64_t> dims_;
  Communicator* ranks_;
  bool collective_ = false;  ///< frames written by every rank (parallel HDF5)
  int64_t streamed_frames_ = 0;
  double stream_seconds_ = 0.0;
  std::array<uint64_t, Engine::kSnapshotSlots> slot_jobs_{};  ///< the job writing each slot
  int next_slot_ = 0;
};

}  // namespace lattica
