#pragma once
// Engine settings of the models the physics tests build often.

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/engine/engine.hpp"

namespace lattica::test {

/// phi^4 with the given couplings and update sequence, one CPU thread, a fixed seed.
inline EngineSettings phi4_settings(std::vector<int64_t> dims, double kappa, double lambda,
                                    double h, std::vector<UpdateAlgorithm> sequence, int hits = 1,
                                    Precision precision = Precision::float64) {
  EngineSettings s;
  s.model = ModelKind::phi4;
  s.dims = std::move(dims);
  s.kappa = kappa;
  s.lambda = lambda;
  s.field = h;
  s.sequence = std::move(sequence);
  s.hits = hits;
  s.precision = precision;
  s.seed = 31415;
  s.cpu_threads = 1;
  return s;
}

/// 2D Ising on an L x L lattice at inverse temperature beta, updated by one cluster move
/// (wolff_clusters per "wolff" pass).
inline EngineSettings ising2d_cluster_settings(int64_t length, double beta,
                                               UpdateAlgorithm algorithm, int wolff_clusters) {
  EngineSettings s;
  s.dims = {length, length};
  s.beta = beta;
  s.sequence = {algorithm};
  s.wolff_clusters = wolff_clusters;
  return s;
}

}  // namespace lattica::test
