#pragma once
// Each model's parameters (kernels/models/) from an engine's settings: its couplings, seed and
// tables, built once on the host.

#include <algorithm>

#include "kernels/models/ising.hpp"
#include "kernels/models/on.hpp"
#include "kernels/models/phi4.hpp"
#include "kernels/models/potts.hpp"
#include "sim/engine/memory.hpp"

namespace lattica {

inline IsingParams model_params(IsingModel, const EngineSettings& s, int d) {
  return make_ising_params(d, s.beta, s.field, s.seed);
}
inline PottsParams model_params(PottsModel, const EngineSettings& s, int d) {
  return make_potts_params(d, s.q, s.beta, s.field, s.seed);
}
template <class Real, int N>
OnParams model_params(OnModel<Real, N>, const EngineSettings& s, int d) {
  return {s.seed, s.beta, s.field, s.step, s.hits, d};
}
template <class Real>
Phi4Params model_params(Phi4Model<Real>, const EngineSettings& s, int d) {
  return {s.seed, s.kappa, s.lambda, s.field, s.step, s.hits, d};
}

static_assert(std::max({sizeof(IsingSums), sizeof(PottsSums), sizeof(OnSums), sizeof(Phi4Sums)}) <=
                  kMaxMeasurementBytes,
              "engine_bytes() must count the largest measurement record");

}  // namespace lattica
