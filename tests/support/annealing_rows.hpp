#pragma once
// A population annealing run as the numbers comparisons of runs need: per step, every
// population's ln Z, the population moments, every replica's measurement and family, rho_t,
// the families and the effective population (the timings left out).

#include <vector>

#include "sim/run/annealing.hpp"

namespace lattica::test {

/// Runs `a` on `engine` and returns one row of numbers per step.
inline std::vector<std::vector<double>> annealing_rows(Engine& engine, const AnnealingSettings& a) {
  std::vector<std::vector<double>> rows;
  run_population_annealing(engine, a, [&](const AnnealingStep& s) {
    std::vector<double> row = s.log_z;
    row.insert(row.end(), s.mean.begin(), s.mean.end());
    row.insert(row.end(), s.spread.begin(), s.spread.end());
    row.insert(row.end(), s.values->begin(), s.values->end());
    for (int32_t f : *s.family) row.push_back(f);
    row.push_back(s.rho_t);
    row.push_back(static_cast<double>(s.families));
    row.push_back(s.effective_population);
    rows.push_back(row);
  });
  return rows;
}

}  // namespace lattica::test
