#include "sim/run/snapshot_sink.hpp"

#include "sim/background_writer.hpp"
#include "sim/output.hpp"

namespace lattica {

SnapshotSink::SnapshotSink(Engine& engine, OutputFile* output, BackgroundWriter& writer)
    : engine_(engine), output_(output), writer_(writer) {}

void SnapshotSink::take(int64_t sweep) {
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

}  // namespace lattica
