#pragma once
// How a backend runs one colour's multi-spin-coded Ising update (PackedIsingUpdate) over words:
// one word per index of Exec::for_each (the GPU's threads), or on the CPU vectors of words
// (PackedIsingLanes, kernels/models/ising_packed_lanes.hpp). Both give the same chain.

#include <cstdint>

#include "kernels/lattice/row_block.hpp"
#include "kernels/models/ising_packed.hpp"

#if !defined(__CUDACC__)
#include "kernels/backend/cpu_exec.hpp"
#include "kernels/models/ising_packed_lanes.hpp"
#endif

namespace lattica {

/// Runs a pass over one colour's words.
template <class Exec>
struct PackedWordRunner {
  /// Updates every word of update's colour; with `sums`, adds the sums of the words after the
  /// move to *sums (update_and_sum).
  template <int D, int kSlots, bool kBoxed>
  static void run(const Exec& exec, const PackedIsingUpdate<D, kSlots, kBoxed>& update,
                  IsingSums* sums) {
    if (sums) {
      return exec.template accumulate_exact_into<IsingSums>(
          update.geometry.words, PackedIsingUpdateSums<D, kSlots, kBoxed>{update}, sums);
    }
    exec.for_each(update.geometry.words, update);
  }

  /// The same over the words of a block of rows.
  template <int D, int kSlots, bool kBoxed>
  static void run(const Exec& exec, const PackedIsingUpdate<D, kSlots, kBoxed>& update,
                  const RowBlock<D>& block, IsingSums* sums) {
    if (sums) {
      return over_row_block(block, update.geometry.row_words, 0,
                            PackedIsingUpdateSums<D, kSlots, kBoxed>{update},
                            [&](int64_t n, const auto& g) {
                              exec.template accumulate_exact_into<IsingSums>(n, g, sums);
                            });
    }
    over_row_block(block, update.geometry.row_words, 0, update,
                   [&](int64_t n, const auto& g) { exec.for_each(n, g); });
  }
};

#if !defined(__CUDACC__)
/// The CPU: vectors of words, a row at a time.
template <>
struct PackedWordRunner<CpuExec> {
  template <int D, int kSlots, bool kBoxed>
  static void run(const CpuExec& exec, const PackedIsingUpdate<D, kSlots, kBoxed>& update,
                  IsingSums* sums) {
    const int64_t first[D] = {};
    run(exec, update,
        RowBlock<D>::make(update.geometry.lattice, first, update.geometry.lattice.extent), sums);
  }

  template <int D, int kSlots, bool kBoxed>
  static void run(const CpuExec& exec, const PackedIsingUpdate<D, kSlots, kBoxed>& update,
                  const RowBlock<D>& block, IsingSums* sums) {
    if (sums) {
      const auto lanes = PackedIsingLanes<D, kSlots, kBoxed, true>::make(update, block);
      return exec.accumulate_exact_into<IsingSums>(lanes.chunks(), lanes, sums);
    }
    const auto lanes = PackedIsingLanes<D, kSlots, kBoxed, false>::make(update, block);
    exec.for_each(lanes.chunks(), lanes);
  }
};
#endif

}  // namespace lattica
