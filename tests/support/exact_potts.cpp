#include "tests/support/exact_potts.hpp"

#include "tests/support/exact_ising.hpp"

#include <cmath>
#include <stdexcept>

namespace lattica::test {

ExactPotts exact_potts(const std::vector<int64_t>& dims, int q, double beta, double h) {
  int64_t volume = 1;
  for (int64_t l : dims) volume *= l;
  const double states = std::pow(static_cast<double>(q), static_cast<double>(volume));
  if (states > 2e7) throw std::invalid_argument("exact_potts: too many states to enumerate");
  const int d = static_cast<int>(dims.size());
  const std::vector<std::vector<int>> forward = periodic_forward_neighbours(dims);
  const double two_pi = 6.283185307179586476925286766559;
  std::vector<int> s(static_cast<size_t>(volume), 0);
  // Weights relative to the ground state's exponent, beta (d V + V max(h, 0)), never overflow.
  const double top = beta * (d * volume + volume * std::max(h, 0.0));
  double z = 0, e = 0, m2 = 0, re_sum = 0;
  std::map<int, double> dist;
  const double v = static_cast<double>(volume);
  for (int64_t n = 0; n < static_cast<int64_t>(states); ++n) {
    int64_t code = n;
    for (int64_t i = 0; i < volume; ++i) {
      s[i] = static_cast<int>(code % q);
      code /= q;
    }
    int bonds = 0, zeros = 0;
    double re = 0, im = 0;
    for (int64_t i = 0; i < volume; ++i) {
      for (int mu = 0; mu < d; ++mu) bonds += s[i] == s[forward[i][mu]];
      zeros += s[i] == 0;
      re += std::cos(two_pi * s[i] / q);
      im += std::sin(two_pi * s[i] / q);
    }
    const double w = std::exp(beta * (bonds + h * zeros) - top);
    z += w;
    e += w * (-bonds - h * zeros) / v;
    m2 += w * (re * re + im * im) / (v * v);
    re_sum += w * re / v;
    dist[bonds] += w;
  }
  for (auto& [b, p] : dist) p /= z;
  return {e / z, m2 / z, re_sum / z, dist};
}

}  // namespace lattica::test
