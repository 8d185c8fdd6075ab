#pragma once
// The replica-exchange (parallel tempering) decision, keyed like every other random number: a
// swap of the couplings of neighbouring rungs (pair, pair + 1) of ladder `ladder`, attempted
// before sweep `sweep`, draws the first word of Philox (seed, replica_exchange, ladder, pair,
// sweep). Its threshold comes from exchange_exp, written in + and * alone (no fused multiply-add
// on either side, CMakeLists.txt), so the host and the GPU compute it to the same bits. The
// decision is then the same on every backend and rank count, however sweeps are cut into calls,
// whether the host takes it (exchange_round, sim/engine/tempering_ladder.hpp) or the backend
// (ExchangePairs, below).

#include <cmath>
#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

/// ln of the Metropolis ratio of a swap from the four log weights, in the one order of additions
/// that the host and the backends share: configuration a, at rung i, and b, at rung j, trade
/// couplings; a_at_j is ln of a's Boltzmann weight under rung j's couplings, and so on.
LATTICA_HD_INLINE double exchange_log_ratio_of(double a_at_j, double b_at_i, double a_at_i,
                                               double b_at_j) {
  return a_at_j + b_at_i - a_at_i - b_at_j;
}

/// The same from log_weight(x, k), ln of configuration x's Boltzmann weight under rung k's.
template <class LogWeight>
double exchange_log_ratio(const LogWeight& log_weight, int a, int i, int b, int j) {
  return exchange_log_ratio_of(log_weight(a, j), log_weight(b, i), log_weight(a, i),
                               log_weight(b, j));
}

/// exp(x) for -64 < x <= 0 to a few ulp, in correctly rounded +, * and / only (with floor and
/// ldexp, both exact): the same bits on the host and on the GPU, whose exp libraries may differ
/// in the last one. exp(x) = 2^n exp(r) with n = round(x / ln 2) and r = x - n ln 2 (ln 2 in two
/// parts, the first exact in n times it), |r| <= 0.35, and exp(r) the series to r^13 / 13! in
/// nested form, 1 + r (1 + r/2 (1 + r/3 (...))), whose rest is below 2^-55 of it.
LATTICA_HD_INLINE double exchange_exp(double x) {
  const double n = floor(x * 1.4426950408889634 + 0.5);
  const double r = (x - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
  double p = 1.0;
  for (int k = 13; k >= 1; --k) p = 1.0 + p * r / static_cast<double>(k);
  return ldexp(p, static_cast<int>(n));
}

/// The swap's acceptance min(1, exp(log_ratio)) as a 2^32 fixed-point threshold: a word u is
/// accepted when u < threshold. 2^32 (certain) for log_ratio >= 0, 0 for NaN.
LATTICA_HD_INLINE uint64_t exchange_threshold(double log_ratio) {
  if (log_ratio >= 0) return uint64_t(1) << 32;
  if (!(log_ratio > -64)) return 0;  // below 2^-92; also NaN
  return static_cast<uint64_t>(exchange_exp(log_ratio) * 4294967296.0);
}

/// Whether the swap of pair `pair` of ladder `ladder` before sweep `sweep` is accepted; draws
/// nothing when it is certain.
LATTICA_HD_INLINE bool exchange_accepted(uint64_t seed, uint64_t sweep, uint32_t ladder,
                                         uint32_t pair, double log_ratio) {
  const uint64_t threshold = exchange_threshold(log_ratio);
  if (threshold >> 32) return true;
  return philox_u32(seed, RngStream::replica_exchange, ladder, pair, sweep) < threshold;
}

/// What every rung shares that a pass may tune: the Metropolis step of the models that have one
/// (Model::kTunableStep), set on each rung's Params that the slots read; nothing for the others.
template <class Model, bool = Model::kTunableStep>
struct SharedStep {
  explicit SharedStep(const typename Model::Params&) {}
  LATTICA_HD_INLINE void apply(typename Model::Params&) const {}
};
template <class Model>
struct SharedStep<Model, true> {
  explicit SharedStep(const typename Model::Params& shared) : step(shared.step) {}
  LATTICA_HD_INLINE void apply(typename Model::Params& p) const { p.step = step; }
  decltype(Model::Params::step) step;
};

/// One exchange round on the backend with exchange_round's decisions, a thread per pair: thread
/// l * rung_count + k, where k is the lower rung of a pair (k, k + 1) of the round's parity,
/// takes ladder l's pair from the slots at its two rungs (slot_of_rung, the inverse
/// permutation, so no thread searches the ladder) and, when it is accepted, swaps them in both
/// permutations. Pairs are disjoint, so both are updated in place. Every slot's rung after the
/// round goes to log[slot]: a pair's thread writes its two slots', an end rung left out of the
/// round's pairs its own. Functor over ladders * rung_count; the passes read the slots' Params
/// through rung_of_slot (kernels/models/replica_params.hpp), so nothing else moves.
template <class Model>
struct ExchangePairs {
  using Params = typename Model::Params;
  using Sums = typename Model::Sums;
  const Sums* sums;       ///< [slot]
  const Params* rungs;    ///< [rung]
  int32_t* rung_of_slot;  ///< [slot]: 0 .. rung_count - 1
  int32_t* slot_of_rung;  ///< [ladder * rung_count + rung]: the slot there (a global slot index)
  int32_t* log;           ///< [slot]
  int rung_count;
  int parity;  ///< of the round: its pairs are (k, k + 1) with k % 2 == parity
  double volume;
  uint64_t seed, sweep;

  LATTICA_HD_INLINE void operator()(int64_t i) const {
    const int64_t ladder = i / rung_count;
    const int k = static_cast<int>(i - ladder * rung_count);
    const bool lower = (k - parity) % 2 == 0 && k + 1 < rung_count;
    const bool upper = k >= 1 && (k - 1 - parity) % 2 == 0;
    if (!lower) {
      if (!upper) log[slot_of_rung[i]] = k;  // an end rung without a pair this round
      return;
    }
    const int32_t a = slot_of_rung[i], b = slot_of_rung[i + 1];  // at rungs k and k + 1
    const auto log_weight = [&](int32_t slot, int rung) {
      return Model::log_weight(rungs[rung], sums[slot], volume);
    };
    const double log_ratio = exchange_log_ratio_of(log_weight(a, k + 1), log_weight(b, k),
                                                   log_weight(a, k), log_weight(b, k + 1));
    const bool swap = exchange_accepted(seed, sweep, static_cast<uint32_t>(ladder),
                                        static_cast<uint32_t>(k), log_ratio);
    if (swap) {
      rung_of_slot[a] = k + 1;
      rung_of_slot[b] = k;
      slot_of_rung[i] = b;
      slot_of_rung[i + 1] = a;
    }
    log[a] = swap ? k + 1 : k;
    log[b] = swap ? k : k + 1;
  }
};

}  // namespace lattica
