// UpdateColour in runs of sites along a row against site by site: the same chain bit for bit,
// since every site keeps its own random numbers and physics (the CPU runs the same runs as the
// GPU, whose vector loads gpu_test's CPU-against-GPU chains cover).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/lattice_model.hpp"
#include "kernels/models/on.hpp"
#include "kernels/models/phi4.hpp"

namespace lattica {
namespace {

/// Spins and accepted counts of `replicas` hot-started replicas after `sweeps` sweeps of the
/// sequence, each colour updated by UpdateColour in runs of kRun sites.
template <int kRun, int D, class Model>
std::vector<typename Model::Spin> chain(const int64_t (&dims)[D], const typename Model::Params& p,
                                        const std::vector<UpdateAlgorithm>& sequence, int replicas,
                                        int sweeps, std::vector<uint8_t>& accepted) {
  const auto lattice = Checkerboard<D>::make(dims);
  std::vector<typename Model::Spin> spins(static_cast<size_t>(replicas * lattice.volume()));
  for (int r = 0; r < replicas; ++r) {
    for (int64_t i = 0; i < lattice.volume(); ++i) {
      spins[static_cast<size_t>(r * lattice.volume() + lattice.storage_index(i))] =
          Model::initial(p, true, static_cast<uint32_t>(r), i);
    }
  }
  accepted.assign(static_cast<size_t>(replicas * lattice.half_volume), 0);
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    for (size_t pass = 0; pass < sequence.size(); ++pass) {
      for (int colour = 0; colour < 2; ++colour) {
        const UpdateColour<D, Model, false, SharedParams<typename Model::Params>, kRun> update{
            lattice,
            {p},
            spins.data(),
            accepted.data(),
            colour,
            sequence[pass],
            static_cast<uint32_t>(pass),
            static_cast<uint64_t>(sweep)};
        for (int64_t i = 0; i < replicas * lattice.half_volume / kRun; ++i) update(i);
      }
    }
  }
  return spins;
}

/// The chain of a 4 x 6 x 32 lattice (rows of 16 sites of a colour) in runs of each of kRuns
/// sites against site by site, bit for bit.
template <class Model, int... kRuns>
void check_runs(const typename Model::Params& p) {
  using Spin = typename Model::Spin;
  const int64_t dims[3] = {4, 6, 32};
  const std::vector<UpdateAlgorithm> sequence = {UpdateAlgorithm::metropolis,
                                                 UpdateAlgorithm::overrelaxation};
  std::vector<uint8_t> by_site;
  const auto sites = chain<1, 3, Model>(dims, p, sequence, 2, 3, by_site);
  const auto expect_runs = [&](auto run) {
    constexpr int kRun = decltype(run)::value;
    SCOPED_TRACE(::testing::Message() << "runs of " << kRun);
    std::vector<uint8_t> by_run;
    const auto runs = chain<kRun, 3, Model>(dims, p, sequence, 2, 3, by_run);
    ASSERT_EQ(sites.size(), runs.size());
    EXPECT_EQ(0, std::memcmp(sites.data(), runs.data(), sites.size() * sizeof(Spin)));
    EXPECT_EQ(by_site, by_run);
  };
  (expect_runs(std::integral_constant<int, kRuns>{}), ...);
}

const Phi4Params kPhi4{2026, 0.19, 1.1, 0.05, 1.3, 2, 3};
const OnParams kOn{2027, 0.8, 0.2, 1.5, 2, 3};

TEST(UpdateRuns, Phi4FloatSameChainAsSiteBySite) { check_runs<Phi4Model<float>, 2, 4, 8>(kPhi4); }
TEST(UpdateRuns, Phi4DoubleSameChainAsSiteBySite) { check_runs<Phi4Model<double>, 2, 4, 8>(kPhi4); }
// O(2) and O(3) floats run in pairs (UpdateRun in on.hpp); pairs of O(3) doubles use the 8-byte
// words' other path (24 bytes a pair) and runs of 4 the 16-byte words.
TEST(UpdateRuns, OnSameChainAsSiteBySite) {
  check_runs<OnModel<float, 2>, 2, 4>(kOn);
  check_runs<OnModel<float, 3>, 2, 4>(kOn);
  check_runs<OnModel<double, 3>, 2>(kOn);
}

}  // namespace
}  // namespace lattica
