#pragma once
// Population annealing's resampling (issue 21), keyed like every other random number: before
// annealing step `step`, population `population` draws its uniforms from Philox (seed,
// population_resampling, population, draw, step), so the copies are the same on every backend
// and however the run is cut. The plan is made on the host from each replica's log weight;
// the backend then gathers the configurations (kernels/ensemble/replica_gather.hpp).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/rng/philox.hpp"

namespace lattica {

/// How the new population is drawn from the old one; both keep its size R and give replica r
/// exactly R w_r / sum_s w_s copies on average.
enum class Resampling {
  systematic,   ///< one uniform u: copies at the points (u + i) / R of the cumulative weights
  multinomial,  ///< R independent draws, each replica with probability w_r / sum_s w_s
};

/// Uniform in [0, 1) with 53 random bits: draw `draw` of population `population` before step
/// `step`.
inline double resampling_uniform(uint64_t seed, uint64_t step, uint32_t population, uint64_t draw) {
  const PhiloxBlock b = philox4x32_10_host(
      philox_counter(RngStream::population_resampling, population, draw, step), philox_key(seed));
  const uint64_t bits = (uint64_t(b.x) << 21) ^ (uint64_t(b.y) >> 11);  // 53 bits
  return std::ldexp(static_cast<double>(bits & ((uint64_t(1) << 53) - 1)), -53);
}

/// The population's weights relative to the largest: w_r = exp(log_w_r - max), so no weight
/// overflows and the largest is 1; their sum and the sum of squares in index order.
struct RelativeWeights {
  std::vector<double> w;
  double log_scale = 0.0;  ///< max_r log_w_r
  double sum = 0.0, sum_squares = 0.0;

  /// ln of the mean weight, ln((1/R) sum_r exp(log_w_r)) (a log-sum-exp).
  double log_mean() const { return log_scale + std::log(sum / static_cast<double>(w.size())); }
  /// (sum w)^2 / sum w^2: R when all weights are equal, 1 when one dominates.
  double effective_size() const { return sum * sum / sum_squares; }
};

/// Relative weights of log_w[0 .. n). Precondition: n >= 1, finite log weights.
inline RelativeWeights relative_weights(const double* log_w, int64_t n) {
  RelativeWeights r;
  r.log_scale = *std::max_element(log_w, log_w + n);
  r.w.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    r.w[static_cast<size_t>(i)] = std::exp(log_w[i] - r.log_scale);
    r.sum += r.w[static_cast<size_t>(i)];
    r.sum_squares += r.w[static_cast<size_t>(i)] * r.w[static_cast<size_t>(i)];
  }
  return r;
}

/// Cumulative weights scaled to the population size: c[r] = R (w_0 + ... + w_r) / sum, with
/// c[R - 1] = R exactly (the last prefix sum is the sum itself).
inline std::vector<double> scaled_cumulative(const RelativeWeights& weights) {
  const size_t n = weights.w.size();
  std::vector<double> c(n);
  double prefix = 0.0;
  for (size_t r = 0; r < n; ++r) {
    prefix += weights.w[r];
    c[r] = static_cast<double>(n) * (prefix / weights.sum);
  }
  return c;
}

/// Systematic resampling with the uniform u in [0, 1): new replica i is a copy of the old
/// replica r whose interval [c[r - 1], c[r]) holds u + i. Each replica gets floor or ceil of
/// R w_r / sum copies, and R w_r / sum on average over u.
inline void systematic_sources(const RelativeWeights& weights, double u, int32_t* source) {
  const std::vector<double> c = scaled_cumulative(weights);
  const int64_t n = static_cast<int64_t>(c.size());
  int64_t r = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double point = u + static_cast<double>(i);
    while (r + 1 < n && !(point < c[static_cast<size_t>(r)])) ++r;
    source[i] = static_cast<int32_t>(r);
  }
}

/// Multinomial resampling: new replica i is a copy of the old replica whose interval holds
/// R u_i, u_i = resampling_uniform(seed, step, population, i).
inline void multinomial_sources(const RelativeWeights& weights, uint64_t seed, uint64_t step,
                                uint32_t population, int32_t* source) {
  const std::vector<double> c = scaled_cumulative(weights);
  const int64_t n = static_cast<int64_t>(c.size());
  for (int64_t i = 0; i < n; ++i) {
    const double point = static_cast<double>(n) * resampling_uniform(seed, step, population, i);
    const auto r = std::upper_bound(c.begin(), c.end(), point) - c.begin();
    source[i] = static_cast<int32_t>(std::min<int64_t>(r, n - 1));
  }
}

/// The sources of one population of size n (its log weights log_w[0 .. n)), as indices into
/// the population, before annealing step `step`.
inline void resampling_sources(Resampling method, const RelativeWeights& weights, uint64_t seed,
                               uint64_t step, uint32_t population, int32_t* source) {
  if (method == Resampling::systematic)
    return systematic_sources(weights, resampling_uniform(seed, step, population, 0), source);
  multinomial_sources(weights, seed, step, population, source);
}

}  // namespace lattica
