#include "sim/run/snapshot_sink.hpp"

#include <chrono>
#include <cstdlib>
#include <string>

#include "sim/background_writer.hpp"
#include "sim/communicator.hpp"
#include "sim/output.hpp"
#include "sim/output/snapshot_box.hpp"

namespace lattica {

SnapshotSink::SnapshotSink(Engine& engine, OutputFile* output, BackgroundWriter& writer,
                           const std::vector<int64_t>& dims, Communicator* ranks)
    : engine_(engine), output_(output), writer_(writer), dims_(dims), ranks_(ranks) {
  collective_ = collective_snapshots_built() && ranks_ && ranks_->size() > 1 && ranks_->mpi_comm();
  if (collective_) {  // every rank decides alike, whatever its environment
    const char* writes = std::getenv("LATTICA_SNAPSHOT_WRITES");
    const bool rank0 = (writes && std::string(writes) == "rank0") ||
                       (output_ && !output_->snapshot_chunks_placed_early());  // an older file
    collective_ = ranks_->max(rank0 ? 1 : 0) == 0;
  }
}

void SnapshotSink::take(int64_t sweep) {
  if (engine_.streams_snapshots()) return stream(sweep);
  const int slot = next_slot_;
  next_slot_ = (next_slot_ + 1) % Engine::kSnapshotSlots;
  writer_.wait_for(slot_jobs_[slot]);  // the slot's previous frame is written
  engine_.start_snapshot(slot);
  if (output_) {
    slot_jobs_[slot] = writer_.submit([output = output_, &engine = engine_, slot, sweep] {
      output->append_snapshot(sweep, engine.snapshot_data(slot));
    });
  }
}

void SnapshotSink::stream(int64_t sweep) {
  writer_.drain();  // this thread writes the file now: no job may write beside it
  const auto start = std::chrono::steady_clock::now();
  if (collective_) {
    write_collectively(sweep);
  } else {
    if (output_) output_->begin_snapshot(sweep);
    engine_.stream_snapshot([output = output_](const std::vector<int64_t>& origin,
                                               const std::vector<int64_t>& extents,
                                               const void* box) {
      output->write_snapshot_block(origin, extents, box);  // rank 0 only
    });
  }
  ++streamed_frames_;
  stream_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void SnapshotSink::write_collectively(int64_t sweep) {
  std::string path;
  int64_t row = 0;
  if (output_) {  // rank 0
    row = output_->lengths().snapshots;
    path = output_->close_for_frame(sweep);
  }
  int64_t bytes = static_cast<int64_t>(path.size());
  ranks_->broadcast(&row, sizeof row, 0);
  ranks_->broadcast(&bytes, sizeof bytes, 0);
  path.resize(static_cast<size_t>(bytes));
  ranks_->broadcast(path.data(), path.size(), 0);
  engine_.own_snapshot_box([&](const std::vector<int64_t>& origin,
                               const std::vector<int64_t>& extents, const void* box) {
    write_snapshot_frame_collectively(path, row, dims_, engine_.replicas(), origin, extents, box,
                                      *ranks_);
  });
  if (output_) output_->reopen_after_frame();
}

}  // namespace lattica
