#include "tests/support/kaufman.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lattica::test {
namespace {

/// A function of K with its first two derivatives.
struct Jet {
  double value;
  double first;
  double second;
};

/// ln F, (ln F)' and (ln F)'' of a factor F = 2 cosh x or 2 sinh x with x = x(K) > 0.
Jet log_factor(bool sinh_factor, const Jet& x) {
  const double tail = std::exp(-2 * x.value);  // e^{-2x} <= 1
  if (!sinh_factor) {
    const double t = std::tanh(x.value);
    return {x.value + std::log1p(tail), x.first * t,
            x.second * t + x.first * x.first * (1 - t * t)};
  }
  const double coth = 1 / std::tanh(x.value);
  const double csch2 = coth * coth - 1;
  return {x.value + std::log(-std::expm1(-2 * x.value)), x.first * coth,
          x.second * coth - x.first * x.first * csch2};
}

/// One of the four products Z_t as Z_t = e^scale (z, z', z''): scale a log, z bounded.
struct Term {
  double scale;
  Jet z;
};

}  // namespace

double ising_critical_beta() { return 0.5 * std::log1p(std::sqrt(2.0)); }

KaufmanIsing kaufman_ising(int64_t rows, int64_t columns, double beta) {
  if (rows < 2 || columns < 2 || rows % 2 != 0 || columns % 2 != 0)
    throw std::invalid_argument("kaufman_ising: extents must be even and at least 2");
  if (!(beta > 0)) throw std::invalid_argument("kaufman_ising: beta must be positive");
  const double m = static_cast<double>(rows), n = static_cast<double>(columns);
  const double pi = 3.14159265358979323846;
  const double k = beta;
  const double s = std::sinh(2 * k), c = std::cosh(2 * k);
  // A = cosh 2K coth 2K = s + 1/s and its derivatives; A - 2 = (s - 1)^2 / s >= 0.
  const double a_first = 2 * c * (s * s - 1) / (s * s);
  const double a_second = 4 * s - 4 / s + 8 * c * c / (s * s * s);
  const double a_minus_2 = (s - 1) * (s - 1) / s;

  // x_l = m g_l / 2 for l >= 1 with cosh g_l = A - cos(pi l / n): g_l' = A' / sinh g_l,
  // g_l'' = A'' / sinh g_l - g_l'^2 coth g_l. y - 1 is formed without cancellation.
  auto regular_x = [&](int64_t l) {
    const double half_angle = std::sin(pi * static_cast<double>(l) / (2 * n));
    const double y_minus_1 = a_minus_2 + 2 * half_angle * half_angle;
    const double sinh_g = std::sqrt(y_minus_1 * (y_minus_1 + 2));
    const double g = std::log1p(y_minus_1 + sinh_g);
    const double g1 = a_first / sinh_g;
    const double g2 = a_second / sinh_g - g1 * g1 * (1 + y_minus_1) / sinh_g;
    return Jet{m * g / 2, m * g1 / 2, m * g2 / 2};
  };
  // g_0 = 2K + ln tanh K with its sign: g_0' = 2 + 2 / sinh 2K, g_0'' = -4 cosh 2K / sinh^2 2K.
  const Jet x0{m * (2 * k + std::log(std::tanh(k))) / 2, m * (2 + 2 / s) / 2,
               m * (-4 * c / (s * s)) / 2};

  Term terms[4];
  for (int t = 0; t < 4; ++t) {
    const bool odd = t < 2;          // Z1, Z2: g_{2r+1}; Z3, Z4: g_{2r}
    const bool sinh_factor = t % 2;  // Z2, Z4
    // The factors with l >= 1, by their logarithms.
    Jet log_p{0, 0, 0};
    for (int64_t r = 0; r < columns; ++r) {
      const int64_t l = odd ? 2 * r + 1 : 2 * r;
      if (l == 0) continue;
      const Jet f = log_factor(sinh_factor, regular_x(l));
      log_p = {log_p.value + f.value, log_p.first + f.first, log_p.second + f.second};
    }
    // The factor of g_0 (Z3, Z4) directly, F e^{-|x0|} and its derivatives times e^{-|x0|},
    // since 2 sinh x0 passes through zero at the critical coupling.
    Jet f{1, 0, 0};
    double f_scale = 0;
    if (!odd) {
      const double a = std::fabs(x0.value);
      const double e = std::exp(-2 * a);
      const double cosh_scaled = 1 + e;                                          // 2 cosh x0 e^-a
      const double sinh_scaled = -std::expm1(-2 * a) * (x0.value < 0 ? -1 : 1);  // 2 sinh x0 e^-a
      const double v = sinh_factor ? sinh_scaled : cosh_scaled;
      const double w = sinh_factor ? cosh_scaled : sinh_scaled;  // the other one: v' = x0' w
      f = {v, x0.first * w, x0.second * w + x0.first * x0.first * v};
      f_scale = a;
    }
    // Z_t = F P: (F P)' = F' P + F P', (F P)'' = F'' P + 2 F' P' + F P'', with P'/P = p1 and
    // P''/P = p2 + p1^2.
    const double p1 = log_p.first, p2 = log_p.second + log_p.first * log_p.first;
    terms[t] = {log_p.value + f_scale,
                {f.value, f.first + f.value * p1, f.second + 2 * f.first * p1 + f.value * p2}};
  }

  double scale = terms[0].scale;
  for (const Term& t : terms) scale = std::max(scale, t.scale);
  double sum = 0, first = 0, second = 0;  // S, S', S'' over e^scale
  for (const Term& t : terms) {
    const double w = std::exp(t.scale - scale);
    sum += w * t.z.value;
    first += w * t.z.first;
    second += w * t.z.second;
  }
  const double volume = m * n;
  const double log_z = -std::log(2.0) + volume / 2 * std::log(2 * s) + scale + std::log(sum);
  const double d1 = volume * c / s + first / sum;
  const double d2 = -2 * volume / (s * s) + second / sum - (first / sum) * (first / sum);
  return {log_z, -d1 / volume, k * k * d2 / volume};
}

}  // namespace lattica::test
