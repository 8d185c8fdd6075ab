#pragma once
// The replica-exchange (parallel tempering) decision, keyed like every other random number: a
// swap of the couplings of neighbouring rungs (pair, pair + 1) of ladder `ladder`, attempted
// before sweep `sweep`, draws the first word of Philox (seed, replica_exchange, ladder, pair,
// sweep). Its threshold comes from exchange_exp, written in + and * alone (no fused multiply-add
// on either side, CMakeLists.txt), so the host and the GPU compute it to the same bits. The
// decision is then the same on every backend and rank count, however sweeps are cut into calls,
// whether the host takes it (exchange_round, sim/engine/tempering_ladder.hpp) or the backend
// (ExchangeSlots, below).

#include <cmath>
#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

/// ln of the Metropolis ratio of a swap: configuration a, at rung i, and b, at rung j, trade
/// couplings; log_weight(x, k) is ln of x's Boltzmann weight under rung k's couplings.
template <class LogWeight>
double exchange_log_ratio(const LogWeight& log_weight, int a, int i, int b, int j) {
  return log_weight(a, j) + log_weight(b, i) - log_weight(a, i) - log_weight(b, j);
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
/// (Model::kTunableStep), set on each slot's Params; nothing for the others.
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

/// One exchange round on the backend, slot by slot, with exchange_round's decisions: slot s, in
/// ladder s / rungs at rung k = before[s], belongs to the pair (k, k + 1) or (k - 1, k) of the
/// round's parity (or to none, at an end), finds the pair's other slot, and takes the pair's
/// decision, which both slots compute alike (the same log ratio, in exchange_log_ratio's order,
/// and the same word). It writes its rung after the round to after[s] and log[s], and its
/// Params, the rung's with the shared step, to table[s]; functor over slots.
template <class Model>
struct ExchangeSlots {
  using Params = typename Model::Params;
  using Sums = typename Model::Sums;
  const Sums* sums;          ///< [slot]
  const Params* rungs;       ///< [rung]
  const int32_t* before;     ///< [slot]
  int32_t* after;            ///< [slot]
  int32_t* log;              ///< [slot]
  Params* table;             ///< [slot]
  SharedStep<Model> shared;  ///< the step every slot takes
  int rung_count;
  int parity;  ///< of the round: its pairs are (k, k + 1) with k % 2 == parity
  double volume;
  uint64_t seed, sweep;

  LATTICA_HD_INLINE void operator()(int64_t s) const {
    const int64_t first = s - s % rung_count;
    const int32_t rung = before[s];
    const int32_t lower_rung = (rung - parity) % 2 == 0 ? rung : rung - 1;
    int32_t next = rung;
    if (lower_rung >= 0 && lower_rung + 1 < rung_count) {
      int64_t lower = first, upper = first;
      for (int64_t t = first; t < first + rung_count; ++t) {
        if (before[t] == lower_rung) lower = t;
        if (before[t] == lower_rung + 1) upper = t;
      }
      const auto log_weight = [&](int64_t slot, int32_t k) {
        return Model::log_weight(rungs[k], sums[slot], volume);
      };
      const double log_ratio = log_weight(lower, lower_rung + 1) + log_weight(upper, lower_rung) -
                               log_weight(lower, lower_rung) - log_weight(upper, lower_rung + 1);
      if (exchange_accepted(seed, sweep, static_cast<uint32_t>(first / rung_count),
                            static_cast<uint32_t>(lower_rung), log_ratio))
        next = rung == lower_rung ? lower_rung + 1 : lower_rung;
    }
    after[s] = next;
    log[s] = next;
    table[s] = rungs[next];
    shared.apply(table[s]);
  }
};

}  // namespace lattica
