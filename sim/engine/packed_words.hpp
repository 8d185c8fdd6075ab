#pragma once
// How a backend runs one colour's multi-spin-coded Ising update (PackedIsingUpdate) over words:
// one word per index of Exec::for_each (the GPU's threads), or on the CPU vectors of words
// (PackedIsingLanes, kernels/models/ising_packed_lanes.hpp). Both give the same chain.

#include <cstdint>
#include <type_traits>

#include "kernels/common/fast_divisor.hpp"

#include "kernels/lattice/row_block.hpp"
#include "kernels/models/ising_packed.hpp"

#if !defined(__CUDACC__)
#include "kernels/backend/cpu_exec.hpp"
#include "kernels/models/ising_packed_lanes.hpp"
#endif

namespace lattica {

/// Calls f(update of replica r) for r = 0 .. replicas - 1 (update: replica 0's; replicas stored
/// one after another).
template <int D, int kSlots, class F>
void for_each_replica(const PackedIsingUpdate<D, kSlots>& update, int replicas, const F& f) {
  for (int r = 0; r < replicas; ++r) f(update.of_replica(static_cast<uint32_t>(r)));
}

/// The words a GPU thread updates in one run (PackedIsingUpdate::update_run): the longest of 4,
/// 2 and 1 that divides a row's words and keeps every run of the replicas' storage aligned for
/// vector loads. Runs share their index arithmetic and load whole lines per warp: on an H200
/// 1446, 1513 and 1556 site updates per ns at 65536^2 for runs of 1, 2 and 4 (8: slower).
template <int D, int kSlots, bool kBoxed>
int packed_run_length(const PackedIsingUpdate<D, kSlots, kBoxed>& update) {
  const bool aligned = reinterpret_cast<uintptr_t>(update.spins) % 16 == 0;
  int run = 4;
  while (run > 1 && (update.geometry.row_words % run != 0 || (run % 4 == 0 && !aligned))) {
    run /= 2;
  }
  return run;
}

/// f(std::integral_constant<int, run>{}) for run = 1, 2 or 4.
template <class F>
void with_run_length(int run, const F& f) {
  switch (run) {
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    default:
      return f(std::integral_constant<int, 1>{});
  }
}

/// Runs a pass over one colour's words.
template <class Exec>
struct PackedWordRunner {
  /// Updates every word of update's colour; with `sums`, adds the sums of the words after the
  /// move to *sums (update_run).
  template <int D, int kSlots, bool kBoxed>
  static void run(const Exec& exec, const PackedIsingUpdate<D, kSlots, kBoxed>& update,
                  IsingSums* sums) {
    with_run_length(packed_run_length(update), [&](auto run) {
      constexpr int kRun = decltype(run)::value;
      const int64_t runs = update.geometry.words / kRun;
      if (sums) {
        return exec.template accumulate_exact_into<IsingSums>(
            runs, PackedIsingUpdateSums<D, kSlots, kBoxed, kRun>{update}, sums);
      }
      exec.for_each(runs, PackedIsingRunUpdate<D, kSlots, kRun, kBoxed>{update});
    });
  }

  /// Updates every word of update's colour in each of `replicas` replicas stored one after
  /// another (update: replica 0's), in one launch while the words number below 2^32.
  template <int D, int kSlots>
  static void run_replicas(const Exec& exec, const PackedIsingUpdate<D, kSlots>& update,
                           int replicas) {
    const int64_t words = update.geometry.words;
    if (replicas == 1 || replicas * words > int64_t(UINT32_MAX)) {
      return for_each_replica(update, replicas, [&](const auto& u) { run(exec, u, nullptr); });
    }
    with_run_length(packed_run_length(update), [&](auto run) {
      constexpr int kRun = decltype(run)::value;
      const int64_t runs = words / kRun;
      exec.for_each(replicas * runs, PackedIsingUpdateReplicas<D, kSlots, kRun>{
                                         update, FastDivisor::make(static_cast<uint32_t>(runs))});
    });
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

  /// Replica by replica: the CPU's threads share the rows of one.
  template <int D, int kSlots>
  static void run_replicas(const CpuExec& exec, const PackedIsingUpdate<D, kSlots>& update,
                           int replicas) {
    for_each_replica(update, replicas, [&](const auto& u) { run(exec, u, nullptr); });
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
