// The couplings a run can compute with: none of its numbers may overflow its floating-point type.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/config/internal.hpp"

namespace lattica::config {

namespace {

/// A magnitude for messages: 3 significant digits.
std::string magnitude(long double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3Lg", x);
  return buffer;
}

}  // namespace

/// Refuses couplings for which a number the run computes overflows its floating-point type:
/// the transition tables (beta times an energy change, tabulated on the host), the per-site
/// arithmetic of continuous models in their precision, and the energies summed in double.
/// Sizes are bounds derived from the model (long double holds them without overflowing), and
/// must stay below half the type's largest value, leaving room for rounding. Enormous
/// couplings whose numbers fit are allowed: beta = 1e300 is Ising at zero temperature. Only
/// the first overflow of a point is reported, blamed on the largest coupling involved.
namespace {

/// Where a coupling is given: model.<key>, or its tempering ladder (whose largest entry the
/// checks take); null when neither.
const toml::node* coupling_node(Reader& r, const char* key) {
  const toml::node* node = r.find("model", key);
  return node ? node : r.find("tempering", key);
}
std::string coupling_name(Reader& r, const std::string& key) {
  return (r.find("model", key.c_str()) ? "model." : "tempering.") + key;
}

}  // namespace

void refuse_overflowing_couplings(const Config& c, Reader& r) {
  struct Product {
    std::string what;
    long double size;
    bool per_site;                  ///< in the continuous model's precision; else in double
    std::vector<const char*> keys;  ///< the couplings it grows with
  };
  const long double d = static_cast<long double>(c.dims.size());
  const long double volume = static_cast<long double>(c.volume());
  const long double beta = c.beta, h = std::fabs(c.field);
  const std::string sites = " (V = " + std::to_string(c.volume()) + " sites)";
  const std::string energy = "the energy, up to (d + |h|) V" + sites;
  std::vector<Product> products;
  auto add = [&](const std::string& what, long double size, bool per_site,
                 std::vector<const char*> keys) {
    products.push_back({what, size, per_site, std::move(keys)});
  };
  if (c.model_kind == "ising") {
    add("the largest |beta dE| of a spin flip, 2 beta (2d + |h|)", 2 * beta * (2 * d + h), false,
        {"beta", "h"});
    add(energy, (d + h) * volume, false, {"h"});
  } else if (c.model_kind == "potts") {
    // The tables hold equal-neighbour changes up to 8 whatever d, and heat-bath weights take
    // differences of two such exponents.
    add("the largest |beta dE| the tables hold, 2 beta (8 + |h|)", 2 * beta * (8 + h), false,
        {"beta", "h"});
    add(energy, (d + h) * volume, false, {"h"});
  } else if (c.model_kind == "on") {
    const long double field = 2 * d + h;  // the local field's largest length |F|
    add("the local field squared, up to (2d + |h|)^2", field * field, true, {"h"});
    add("the largest |beta dE| of a move, 2 beta (2d + |h|)", 2 * beta * field, true,
        {"beta", "h"});
    if (c.n == 2 && std::count(c.sequence.begin(), c.sequence.end(), "heatbath") > 0) {
      add("the heat bath's (2 beta |F|)^2, up to (2 beta (2d + |h|))^2",
          4 * beta * beta * field * field, true, {"beta", "h"});
    }
    add(energy, (d + h) * volume, false, {"h"});
    if (c.n == 2) {
      add("the helicity modulus's beta (sum_x sin)^2, up to beta V^2" + sites,
          beta * volume * volume, false, {"beta"});
    }
  } else {
    // phi^4: the field is not bounded; it settles where the uniform action's slope vanishes,
    // 4 lambda phi^3 + (2 - 4 d kappa - 4 lambda) phi = h, so |phi| is about phi0.
    const long double kappa = c.kappa, lambda = c.lambda;
    const long double phi0 =
        lambda > 0 ? std::sqrt(1 + std::max(0.0L, 4 * d * kappa - 2) / (4 * lambda)) +
                         std::cbrt(h / (4 * lambda))
                   : 1 + h / (2 - 4 * d * kappa);  // > 0: a cross-key rule (rules.cpp)
    const long double phi2 = phi0 * phi0;
    const long double action =
        (4 * d * kappa + 1) * phi2 + lambda * (phi2 + 1) * (phi2 + 1) + h * phi0;
    const std::string scale = " at the field's scale |phi| ~ " + magnitude(phi0);
    add("the action of one site" + scale, action, true, {"kappa", "lambda", "h"});
    add("the action" + scale + ", V times that of one site" + sites, action * volume, false,
        {"kappa", "lambda", "h"});
    add("sum_x phi_x^4" + scale + sites, phi2 * phi2 * volume, false, {"kappa", "lambda", "h"});
  }
  const bool single = c.precision == "float";
  for (const Product& p : products) {
    const bool in_float = p.per_site && single;
    const long double largest =
        in_float ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    if (p.size <= largest / 2) continue;
    // Blame the coupling of largest magnitude among those the input gives; name the others.
    std::vector<std::pair<std::string, double>> given;
    for (const char* key : p.keys) {
      if (!coupling_node(r, key)) continue;
      const std::string k = key;
      given.emplace_back(k, k == "beta"     ? c.beta
                            : k == "kappa"  ? c.kappa
                            : k == "lambda" ? c.lambda
                                            : c.field);
    }
    if (given.empty()) return;  // defaults alone never overflow
    const auto blamed = std::max_element(given.begin(), given.end(), [](auto& a, auto& b) {
      return std::fabs(a.second) < std::fabs(b.second);
    });
    std::string others;
    for (const auto& [key, value] : given) {
      if (key != blamed->first)
        others +=
            (others.empty() ? "with " : ", ") + coupling_name(r, key) + " = " + shortest(value);
    }
    r.fail(*coupling_node(r, blamed->first.c_str()), coupling_name(r, blamed->first),
           others + (others.empty() ? "" : ", ") + p.what + " is " + magnitude(p.size) +
               ", which overflows a " + (in_float ? "float" : "double") + " (largest " +
               magnitude(largest) +
               "): probabilities and energies would be infinite or NaN; choose smaller couplings");
    return;
  }
}

}  // namespace lattica::config
