#pragma once
// Real-valued random numbers from Philox words, for the continuous models.

#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/common/real_math.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

/// Uniform in the open interval (0, 1), exactly representable, never 0 or 1 (so log() is safe):
/// (u + 1/2) / 2^32 in double; (2 floor(u / 2^9) + 1) / 2^24 in float (24 bits are all a float
/// holds).
template <class Real>
LATTICA_HD_INLINE Real uniform_open(uint32_t u);
template <>
LATTICA_HD_INLINE double uniform_open<double>(uint32_t u) {
  return (static_cast<double>(u) + 0.5) * 2.3283064365386962890625e-10;  // 2^-32
}
template <>
LATTICA_HD_INLINE float uniform_open<float>(uint32_t u) {
  return static_cast<float>(((u >> 9) << 1) | 1u) * 5.9604644775390625e-8f;  // 2^-24
}

/// Two independent standard normal deviates (Box-Muller) from the next two words.
template <class Real>
LATTICA_HD_INLINE void gaussian_pair(SiteRandom& random, Real& g0, Real& g1) {
  const Real radius = real_math::sqrt(Real(-2) * real_math::log(uniform_open<Real>(random.next())));
  const Real angle = Real(2) * real_math::kPi<Real> * uniform_open<Real>(random.next());
  Real sine, cosine;  // one argument reduction for both (it was two: 1/5 of an O(3) update)
  real_math::sincos(angle, &sine, &cosine);
  g0 = radius * cosine;
  g1 = radius * sine;
}

/// n independent standard normal deviates.
template <class Real, int N>
LATTICA_HD_INLINE void gaussian_vector(SiteRandom& random, Real (&g)[N]) {
  for (int a = 0; a + 1 < N; a += 2) gaussian_pair(random, g[a], g[a + 1]);
  if (N % 2 == 1) {
    Real unused;
    gaussian_pair(random, g[N - 1], unused);
  }
}

/// Metropolis acceptance of an action change dS: accept when dS <= 0, else with probability
/// exp(-dS). Always draws one word, so the stream position does not depend on dS.
template <class Real>
LATTICA_HD_INLINE bool metropolis_accept(SiteRandom& random, Real action_change) {
  const Real u = uniform_open<Real>(random.next());
  return action_change <= Real(0) || u < real_math::exp(-action_change);
}

}  // namespace lattica
