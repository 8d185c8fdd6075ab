// Population annealing from the command line: the [annealing] section's hostile inputs exit 2
// with the key, the value and the reason, and write nothing; a run writes /annealing, one row
// per step of the schedule, with every replica's data only when asked for.

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/cli/cli_support.hpp"

namespace lattica {
namespace {

using namespace cli;

/// A small annealed Ising input; `extra` is appended (further sections or keys).
std::string annealed_input(const std::string& annealing, const std::string& extra = "") {
  return "[lattice]\ndims = [8, 8]\n[model]\nkind = \"ising\"\n[annealing]\n" + annealing +
         "\n[run]\nseed = 3\nreplicas = 8\n" + extra;
}

TEST_F(Cli, BadAnnealingInputExitsTwoAndWritesNothing) {
  const std::string plain =
      "[lattice]\ndims = [8, 8]\n[model]\nkind = \"ising\"\nbeta = 0.4\n"
      "[run]\nthermalization = 20\nmeasurements = 50\nseed = 3\n";
  const std::vector<BadInput> cases = {
      {"not from zero",
       annealed_input("beta = [0.1, 0.5]"),
       {"annealing.beta", "[0.1, 0.5]", "must start at 0"}},
      {"decreasing", annealed_input("beta = [0, 0.5, 0.3]"), {"annealing.beta", "strictly"}},
      {"linear needs two ends",
       annealed_input("beta = [0, 0.2, 0.5]\nsteps = 10"),
       {"annealing.beta", "two ends"}},
      {"populations do not divide",
       annealed_input("beta = [0, 0.5]\npopulations = 3"),
       {"annealing.populations", "multiple"}},
      {"unknown resampling",
       annealed_input("beta = [0, 0.5]\nresampling = \"residual\""),
       {"annealing.resampling", "residual", "systematic"}},
      {"sweeps zero", annealed_input("beta = [0, 0.5]\nsweeps = 0"), {"annealing.sweeps"}},
      {"keys without a schedule", plain + "[annealing]\nsweeps = 5\n", {"annealing.sweeps"}},
      {"model.beta beside it",
       "[lattice]\ndims = [8, 8]\n[model]\nkind = \"ising\"\nbeta = 0.4\n[annealing]\n"
       "beta = [0, 0.5]\n[run]\nseed = 3\n",
       {"model.beta", "annealing.beta gives"}},
      {"run keys beside it",
       annealed_input("beta = [0, 0.5]", "thermalization = 10\n"),
       {"run.thermalization", "population annealing"}},
      {"cold start", annealed_input("beta = [0, 0.5]", "start = \"cold\"\n"), {"run.start", "hot"}},
      {"phi4",
       "[lattice]\ndims = [8, 8]\n[model]\nkind = \"phi4\"\nkappa = 0.1\nlambda = 0.5\n"
       "[annealing]\nbeta = [0, 0.5]\n[run]\nseed = 3\n",
       {"annealing.beta", "phi^4"}},
  };
  expect_bad_inputs(cases);
}

TEST_F(Cli, AnnealedRunWritesOneRowPerStep) {
  std::ofstream(path("pa.toml")) << annealed_input(
      "beta = [0, 0.5]\nsteps = 5\nsweeps = 3\npopulations = 2\nreplica_output = true");
  const RunResult r = sim({path("pa.toml"), "--backend", "cpu", "-o", "pa.h5"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.err.find("replica-site updates/ns"), std::string::npos) << r;
  const H5Id file = open_file(path("pa.h5"));
  EXPECT_EQ(read_doubles(file.get(), "/annealing/beta"),
            (std::vector<double>{0.0, 0.1, 0.2, 0.3, 0.4, 0.5}));
  EXPECT_EQ(read_int64s(file.get(), "/annealing/sweeps"),
            (std::vector<int64_t>{3, 6, 9, 12, 15, 18}));
  EXPECT_EQ(dataset_info(file.get(), "/annealing/log_z").shape, (std::vector<hsize_t>{6, 2}));
  EXPECT_EQ(dataset_info(file.get(), "/annealing/energy").shape, (std::vector<hsize_t>{6, 3}));
  EXPECT_EQ(dataset_info(file.get(), "/annealing/replica_energy").shape,
            (std::vector<hsize_t>{6, 8}));
  EXPECT_EQ(dataset_info(file.get(), "/annealing/family").shape, (std::vector<hsize_t>{6, 8}));
  const H5Id group = open_group(file.get(), "annealing");
  EXPECT_EQ(int64_attribute(group.get(), "replicas"), 8);
  EXPECT_EQ(int64_attribute(group.get(), "populations"), 2);
  EXPECT_EQ(string_attribute(group.get(), "resampling"), "systematic");
  // ln Z at beta = 0 is V ln 2 for every population; beta F per site follows from ln Z.
  const std::vector<double> log_z = read_doubles(file.get(), "/annealing/log_z");
  const std::vector<double> f = read_doubles(file.get(), "/annealing/beta_free_energy");
  EXPECT_EQ(log_z[0], 64 * std::log(2.0));
  for (size_t k = 0; k < 6; ++k)
    EXPECT_DOUBLE_EQ(f[k], -(log_z[2 * k] + log_z[2 * k + 1]) / 2 / 64);
  // Without replica_output only the population averages are written.
  std::ofstream(path("small.toml")) << annealed_input("beta = [0, 0.5]\nsteps = 5\nsweeps = 3");
  ASSERT_EQ(sim({path("small.toml"), "--backend", "cpu", "-o", "small.h5", "-q"}).exit_code, 0);
  const H5Id small = open_file(path("small.h5"));
  EXPECT_LT(H5Lexists(small.get(), "/annealing/family", H5P_DEFAULT), 1);
  // Annealed runs write no checkpoint: --resume refuses an unfinished one, skips a finished one.
  const RunResult resumed =
      sim({path("small.toml"), "--backend", "cpu", "-o", "small.h5", "--resume"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed;
  EXPECT_NE(resumed.err.find("finished"), std::string::npos) << resumed;
}

}  // namespace
}  // namespace lattica
