#include "sim/run/snapshot_sink.hpp"

#include "sim/background_writer.hpp"
#include "sim/output.hpp"

namespace lattica {

SnapshotSink::SnapshotSink(Engine& engine, OutputFile* output, BackgroundWriter& writer)
    : engine_(engine), output_(output), writer_(writer) {}

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
  if (output_) output_->begin_snapshot(sweep);
  engine_.stream_snapshot([output = output_](const std::vector<int64_t>& origin,
                                             const std::vector<int64_t>& extents, const void* box) {
    output->write_snapshot_block(origin, extents, box);  // rank 0 only
  });
}

}  // namespace lattica
