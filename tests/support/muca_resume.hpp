#pragma once
// Multicanonical runs stopped at a chosen sweep and continued from their checkpoint, for the
// tests that a continued run is the uninterrupted one (on one backend, or across backends).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "sim/run/multicanonical_run.hpp"

namespace lattica::test {

/// Runs c on `walkers` until the first point where it may stop at or after `sweep`, and returns
/// that point's checkpoint (its phase tells which part of the run it stopped in).
inline MulticanonicalCheckpoint stop_at(const Config& c, WalkerEnsemble& walkers, uint64_t sweep) {
  MulticanonicalCheckpoint at;
  const MulticanonicalStep step = [&](uint64_t, uint64_t done, bool,
                                      const std::function<MulticanonicalCheckpoint()>& state) {
    if (done < sweep) return false;
    at = state();
    return true;
  };
  bool stopped = false;
  run_multicanonical(c, walkers, true, nullptr, step, &stopped);
  EXPECT_TRUE(stopped) << "the run ended before sweep " << sweep;
  return at;
}

/// Whether two vectors of doubles hold the same bits (NaN included).
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

/// Expects the two records of one chain to agree bit for bit.
inline void expect_same_record(const MulticanonicalRecord& a, const MulticanonicalRecord& b) {
  EXPECT_EQ(a.wang_landau_sweeps, b.wang_landau_sweeps);
  EXPECT_EQ(a.stages, b.stages);
  EXPECT_EQ(a.lnf_reached, b.lnf_reached);
  EXPECT_EQ(a.wang_landau_log_g, b.wang_landau_log_g);
  EXPECT_EQ(a.visited, b.visited);
  EXPECT_EQ(a.refine_iterations, b.refine_iterations);
  EXPECT_EQ(a.refine_pair_weight, b.refine_pair_weight);
  EXPECT_TRUE(same_bits(a.log_weight, b.log_weight));  // NaN outside the window
  EXPECT_EQ(a.histogram, b.histogram);
  EXPECT_EQ(a.sweeps, b.sweeps);
  EXPECT_EQ(a.energy_series, b.energy_series);
  EXPECT_EQ(a.order_series, b.order_series);
}

}  // namespace lattica::test
