#pragma once
// The replica-exchange (parallel tempering) decision, keyed like every other random number: a
// swap of the couplings of neighbouring rungs (pair, pair + 1) of ladder `ladder`, attempted
// before sweep `sweep`, draws the first word of Philox (seed, replica_exchange, ladder, pair,
// sweep). The decision is then the same on every backend and rank count, however sweeps are
// cut into calls.

#include <cmath>
#include <cstdint>

#include "kernels/rng/philox.hpp"

namespace lattica {

/// ln of the Metropolis ratio of a swap: configuration a, at rung i, and b, at rung j, trade
/// couplings; log_weight(x, k) is ln of x's Boltzmann weight under rung k's couplings.
template <class LogWeight>
double exchange_log_ratio(const LogWeight& log_weight, int a, int i, int b, int j) {
  return log_weight(a, j) + log_weight(b, i) - log_weight(a, i) - log_weight(b, j);
}

/// The swap's acceptance min(1, exp(log_ratio)) as a 2^32 fixed-point threshold: a word u is
/// accepted when u < threshold. 2^32 (certain) for log_ratio >= 0, 0 for NaN; the host's exp
/// is the only floating-point step.
inline uint64_t exchange_threshold(double log_ratio) {
  if (log_ratio >= 0) return uint64_t(1) << 32;
  if (!(log_ratio > -64)) return 0;  // below 2^-92; also NaN
  return static_cast<uint64_t>(std::ldexp(std::exp(log_ratio), 32));
}

/// Whether the swap of pair `pair` of ladder `ladder` before sweep `sweep` is accepted; draws
/// nothing when it is certain.
inline bool exchange_accepted(uint64_t seed, uint64_t sweep, uint32_t ladder, uint32_t pair,
                              double log_ratio) {
  const uint64_t threshold = exchange_threshold(log_ratio);
  if (threshold >> 32) return true;
  return philox_u32(seed, RngStream::replica_exchange, ladder, pair, sweep) < threshold;
}

}  // namespace lattica
