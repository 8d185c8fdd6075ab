#include "tests/support/exact_ising.hpp"

#include <cmath>
#include <stdexcept>

namespace lattica::test {

std::vector<std::vector<int>> periodic_forward_neighbours(const std::vector<int64_t>& dims) {
  int64_t volume = 1;
  for (int64_t l : dims) volume *= l;
  const int d = static_cast<int>(dims.size());
  std::vector<std::vector<int>> forward(static_cast<size_t>(volume), std::vector<int>(d));
  for (int64_t i = 0; i < volume; ++i) {
    std::vector<int64_t> x(d);
    int64_t rest = i;
    for (int a = d - 1; a >= 0; --a) {
      x[a] = rest % dims[a];
      rest /= dims[a];
    }
    for (int mu = 0; mu < d; ++mu) {
      std::vector<int64_t> y = x;
      y[mu] = (y[mu] + 1) % dims[mu];
      int64_t j = 0;
      for (int a = 0; a < d; ++a) j = j * dims[a] + y[a];
      forward[i][mu] = static_cast<int>(j);
    }
  }
  return forward;
}

ExactIsing exact_ising(const std::vector<int64_t>& dims, double beta, double h) {
  int64_t volume = 1;
  for (int64_t l : dims) volume *= l;
  if (volume > 24) throw std::invalid_argument("exact_ising: lattice too large to enumerate");
  const int d = static_cast<int>(dims.size());
  const std::vector<std::vector<int>> forward = periodic_forward_neighbours(dims);
  // First pass finds the largest exponent so the Boltzmann weights never overflow.
  const uint64_t states = uint64_t(1) << volume;
  std::vector<int> bonds(states), magnet(states);
  double max_exponent = -1e300;
  for (uint64_t state = 0; state < states; ++state) {
    int b = 0, m = 0;
    for (int64_t i = 0; i < volume; ++i) {
      const int si = (state >> i) & 1 ? 1 : -1;
      m += si;
      for (int mu = 0; mu < d; ++mu) b += si * (((state >> forward[i][mu]) & 1) ? 1 : -1);
    }
    bonds[state] = b;
    magnet[state] = m;
    max_exponent = std::max(max_exponent, beta * (b + h * m));
  }
  double z = 0, e = 0, e2 = 0, mag = 0, amag = 0, m2 = 0;
  std::map<int, double> dist;
  const double v = static_cast<double>(volume);
  for (uint64_t state = 0; state < states; ++state) {
    const double w = std::exp(beta * (bonds[state] + h * magnet[state]) - max_exponent);
    const double energy = (-bonds[state] - h * magnet[state]) / v;
    const double m = magnet[state] / v;
    z += w;
    e += w * energy;
    e2 += w * energy * energy;
    mag += w * m;
    amag += w * std::fabs(m);
    m2 += w * m * m;
    dist[bonds[state]] += w;
  }
  for (auto& [b, p] : dist) p /= z;
  return {e / z, e2 / z, mag / z, amag / z, m2 / z, dist};
}

}  // namespace lattica::test
