#pragma once
// Berg's accumulated multicanonical recursion (B. A. Berg, J. Stat. Phys. 82 (1996) 323; W.
// Janke's reviews): refines Wang-Landau's ln g(E) from runs with frozen weights, using only
// local equilibrium. Host code only: the arithmetic is done once, in a fixed order, so every
// backend gets the same weights.

#include <cstdint>
#include <vector>

#include "sim/engine/multicanonical/wang_landau.hpp"  // MucaWindow

namespace lattica {

/// The weight of Wang-Landau's difference of ln g between two neighbouring bins, against which
/// the runs' estimates are averaged: that of one walker's pair of bins with 2 visits each
/// (H H' / (H + H') = 1). Small, so that a few visits outweigh it (Wang-Landau's differences
/// across a first-order barrier carry the walkers' populations, which the refinement removes),
/// yet it keeps Wang-Landau's difference wherever no walker visited both bins of a pair.
constexpr double kRecursionPriorWeight = 1.0;

/// What the recursion continues from (a checkpoint's).
struct MucaRecursionState {
  int64_t iterations = 0;           ///< iterations added
  std::vector<double> pair_weight;  ///< per bin: sum of w over the pair it starts (no prior)
  std::vector<double> pair_sum;     ///< per bin: sum of w x d over the pair it starts
};

/// The chain of differences d(k) = ln g(k') - ln g(k) between neighbouring bins k < k' of the
/// window that Wang-Landau visited (the bins between them were never visited: impossible
/// energies such as Ising's odd numbers of unsatisfied bonds). Each walker's histogram H of an
/// iteration run with log weights ln W estimates d(k) = ln H(k') - ln H(k) - (ln W(k') -
/// ln W(k)) with the inverse-variance weight w = H(k) H(k') / (H(k) + H(k')) (0 unless the
/// walker visited both bins); the estimates of every walker and iteration are averaged with
/// these weights and Wang-Landau's difference with weight `prior_weight`, and ln g is their
/// cumulative sum. Per walker, not from the histogram of all walkers: walkers confined to
/// different parts of the window (the two phases of a first-order transition) in unequal
/// numbers add histograms whose sum jumps where one population's part ends, and the ratio
/// there carries the populations; each walker's own histogram is in local equilibrium wherever
/// it has visits.
class MucaRecursion {
 public:
  /// wang_landau_log_g and visited: one value per bin (WangLandau::log_g(), visited()).
  MucaRecursion(std::vector<double> wang_landau_log_g, const std::vector<uint8_t>& visited,
                MucaWindow window, double prior_weight = kRecursionPriorWeight);

  /// Continues from `state` (one value per bin in each vector).
  void restore(MucaRecursionState state);

  /// Everything add() and end_iteration() change, to continue from later.
  const MucaRecursionState& state() const { return state_; }

  /// Adds one walker's histogram of an iteration: counts[i] visits of bin window.first + i
  /// (window.last - window.first + 1 values), sampled with log_weight (one value per bin).
  void add(const uint32_t* counts, const std::vector<double>& log_weight);

  /// Counts an iteration as done (after its walkers' add()).
  void end_iteration() { ++state_.iterations; }

  /// The refined ln g per bin: Wang-Landau's at the window's first visited bin, then the
  /// cumulative sum of the averaged differences; a bin of the window between visited ones keeps
  /// Wang-Landau's value shifted as the visited bin below it; bins outside the window keep
  /// Wang-Landau's values.
  std::vector<double> log_g() const;

  /// The bins of the window that Wang-Landau visited, in increasing order.
  const std::vector<int64_t>& nodes() const { return nodes_; }
  double prior_weight() const { return prior_weight_; }

 private:
  std::vector<double> wang_landau_log_g_;
  MucaWindow window_;
  double prior_weight_;
  std::vector<int64_t> nodes_;
  MucaRecursionState state_;
};

}  // namespace lattica
