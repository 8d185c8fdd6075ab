#pragma once
// Snapshots in flight: host frames the configuration is copied into while the chain goes on,
// the copies' completion, and the backend buffer that stages bit-packed frames.

#include <algorithm>
#include <array>
#include <cstdint>

#include "kernels/models/ising_packed.hpp"
#include "sim/engine/engine.hpp"

namespace lattica {

template <class Exec>
class SnapshotFrames {
 public:
  explicit SnapshotFrames(const Exec& exec) : exec_(exec) {}

  /// Host frame `slot` (< Engine::kSnapshotSlots), `bytes` long; reallocated when the size
  /// differs, so only call it once the slot's last copy was waited for.
  unsigned char* frame(int slot, int64_t bytes) {
    auto& frame = frames_.at(static_cast<size_t>(slot));
    if (frame.size() != bytes) frame = typename Exec::template HostFrame<unsigned char>(bytes);
    return frame.data();
  }

  /// Starts copying `n` values of `from` into frame `slot` (overlapping later work).
  template <class T>
  void copy_async(const typename Exec::template Buffer<T>& from, int64_t n, int slot) {
    exec_.copy_to_host_async(from, reinterpret_cast<T*>(frames_[slot].data()), n, copies_[slot]);
  }

  /// Later work on the backend starts once the copies in flight have read their source (no host
  /// wait): call it before overwriting what a snapshot copies from.
  void order_after_copies() {
    for (const auto& copy : copies_) exec_.order_after(copy);
  }

  /// Waits for slot's copy and returns its frame.
  const void* wait(int slot) {
    exec_.wait(copies_.at(static_cast<size_t>(slot)));
    return frames_[slot].data();
  }

  /// The 8-sites-per-byte snapshot that `bits` (PackedSpinBits or LexicographicSpinBits) reads
  /// into frame `slot` of `bytes` bytes: staged whole on the backend and copied while the chain
  /// goes on, or, past kMaxStagedSnapshotBytes, a chunk at a time. Precondition as
  /// copy_async(): order_after_copies() was called since the stage was last read.
  template <class Bits>
  void stage_bits(int slot, int64_t bytes, const Bits& bits) {
    const bool staged = bytes <= static_cast<int64_t>(kMaxStagedSnapshotBytes);
    if (stage_.size() == 0) {
      stage_ = exec_.template allocate<uint8_t>(staged ? bytes
                                                       : static_cast<int64_t>(kPackedChunkBytes));
    }
    unsigned char* frame = frames_.at(static_cast<size_t>(slot)).data();
    for (int64_t first = 0; first < bytes; first += stage_.size()) {
      const int64_t n = std::min(stage_.size(), bytes - first);
      exec_.for_each(n, PackSpinBits<Bits>{bits, stage_.data(), first});
      if (staged) {
        exec_.copy_to_host_async(stage_, frame, n, copies_[slot]);
      } else {
        exec_.copy_to_host(stage_, frame + first, n);
      }
    }
  }

 private:
  const Exec& exec_;
  std::array<typename Exec::template HostFrame<unsigned char>, Engine::kSnapshotSlots> frames_;
  std::array<typename Exec::CopyDone, Engine::kSnapshotSlots> copies_;
  typename Exec::template Buffer<uint8_t> stage_;  ///< bit-packed snapshots on the backend
};

}  // namespace lattica
