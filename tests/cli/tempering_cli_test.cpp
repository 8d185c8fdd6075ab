// Parallel tempering from the command line: the [tempering] section's hostile inputs exit 2
// with the key, the value and the reason, and write nothing; a tempered run writes /tempering
// (the rung of every replica slot, log weights, exchange statistics) beside observables in
// rung order.

#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/cli/cli_support.hpp"

namespace lattica {
namespace {

using namespace cli;

/// A small tempered Ising input; `extra` is appended (further sections or keys).
std::string tempered_input(const std::string& tempering, const std::string& extra = "") {
  return "[lattice]\ndims = [8, 8]\n[model]\nkind = \"ising\"\n[tempering]\n" + tempering +
         "\n[run]\nthermalization = 20\nmeasurements = 50\nseed = 3\n" + extra;
}

TEST_F(Cli, BadTemperingInputExitsTwoAndWritesNothing) {
  const std::string phi4 =
      "[lattice]\ndims = [8, 8]\n[model]\nkind = \"phi4\"\nlambda = 0.5\n"
      "[run]\nthermalization = 20\nmeasurements = 50\nseed = 3\n";
  const std::vector<BadInput> cases = {
      {"not monotone",
       tempered_input("beta = [0.3, 0.5, 0.4]"),
       {"tempering.beta", "[0.3, 0.5, 0.4]", "strictly increasing or strictly decreasing"}},
      {"repeated rung", tempered_input("beta = [0.3, 0.3]"), {"tempering.beta", "strictly"}},
      {"one rung", tempered_input("beta = [0.3]"), {"tempering.beta", "2 to 65536"}},
      {"not numbers",
       tempered_input("beta = [0.3, \"hot\"]"),
       {"tempering.beta", "'hot'", "not a finite number"}},
      {"negative beta", tempered_input("beta = [-0.1, 0.3]"), {"tempering.beta", ">= 0"}},
      {"not finite", tempered_input("beta = [0.1, inf]"), {"tempering.beta", "finite"}},
      {"lengths differ",
       tempered_input("beta = [0.3, 0.4, 0.5]\nh = [0.1, 0.2]"),
       {"tempering.h", "[0.1, 0.2]", "one value per rung"}},
      {"key the model lacks", tempered_input("kappa = [0.1, 0.2]"), {"tempering.kappa", "phi^4"}},
      {"beta for phi4",
       phi4 + "[tempering]\nbeta = [0.1, 0.2]\n",
       {"tempering.beta", "no inverse temperature"}},
      {"exchange without ladder",
       tempered_input("exchange_every = 3"),
       {"tempering.exchange_every", "needs a ladder"}},
      {"exchange_every zero",
       tempered_input("beta = [0.3, 0.4]\nexchange_every = 0"),
       {"tempering.exchange_every", "between 1"}},
      {"structure factor",
       tempered_input("beta = [0.3, 0.4]", "[measure]\nstructure_factor = true\n"),
       {"measure.structure_factor", "parallel tempering"}},
      {"feedback without ladder",
       tempered_input("feedback = 2"),
       {"tempering.feedback", "needs a ladder"}},
      {"feedback negative",
       tempered_input("beta = [0.3, 0.4, 0.5]\nfeedback = -1"),
       {"tempering.feedback", "-1", "between 0"}},
      {"feedback of two ladders",
       tempered_input("beta = [0.3, 0.4, 0.5]\nh = [0.0, 0.1, 0.2]\nfeedback = 1"),
       {"tempering.feedback = 1", "tempering.beta, tempering.h", "one ladder"}},
      {"feedback without interior rungs",
       tempered_input("beta = [0.3, 0.4]\nfeedback = 1"),
       {"tempering.feedback = 1", "at least 3 rungs"}},
      {"feedback of too short a thermalization",
       tempered_input("beta = [0.3, 0.4, 0.5]\nfeedback = 2"),
       {"tempering.feedback = 2", "run.thermalization = 20", "parts of 6 sweeps",
        "at least 10 exchange rounds"}},
      {"too many replicas",
       tempered_input("beta = [0.3, 0.4, 0.5, 0.6]", "replicas = 20000\n"),
       {"tempering.beta", "65536"}},
  };
  expect_bad_inputs(cases);
  // A model coupling given beside its ladder, and Langevin passes with a ladder.
  std::ofstream(path("both.toml")) << "[lattice]\ndims = [8, 8]\n[model]\nkind = \"ising\"\n"
                                      "beta = 0.4\n[tempering]\nbeta = [0.3, 0.4]\n"
                                      "[run]\nthermalization = 20\nmeasurements = 50\nseed = 3\n";
  const RunResult both = sim({path("both.toml"), "--backend", "cpu", "-o", "x.h5"});
  EXPECT_EQ(both.exit_code, 2) << both;
  EXPECT_NE(both.err.find("model.beta = 0.4: give either model.beta or the ladder"),
            std::string::npos)
      << both;
  std::ofstream(path("langevin.toml"))
      << "[lattice]\ndims = [8, 8]\n[model]\nkind = \"phi4\"\nlambda = 0.5\n"
         "[update]\nsequence = [\"metropolis\", \"mala\"]\n[tempering]\nkappa = [0.1, 0.2]\n"
         "[run]\nthermalization = 20\nmeasurements = 50\nseed = 3\n";
  const RunResult langevin = sim({path("langevin.toml"), "--backend", "cpu", "-o", "x.h5"});
  EXPECT_EQ(langevin.exit_code, 2) << langevin;
  EXPECT_NE(langevin.err.find("update.sequence"), std::string::npos) << langevin;
  EXPECT_NE(langevin.err.find("parallel tempering"), std::string::npos) << langevin;
  EXPECT_FALSE(fs::exists(path("x.h5")));
}

TEST_F(Cli, TemperedRunWritesRungsAndStatistics) {
  std::ofstream(path("pt.toml")) << tempered_input(
      "beta = [0.3, 0.35, 0.4, 0.45]\nh = [0.0, 0.005, 0.01, 0.02]\nexchange_every = 2",
      "replicas = 2\n");
  const RunResult r = sim({path("pt.toml"), "--backend", "cpu", "-o", "pt.h5", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const H5Id file = open_file(path("pt.h5"));
  EXPECT_EQ(int64_attribute(file.get(), "replicas"), 8);
  EXPECT_EQ(dataset_info(file.get(), "/observables/energy").shape, (std::vector<hsize_t>{50, 8}));
  EXPECT_EQ(dataset_info(file.get(), "/tempering/replica_rung").shape,
            (std::vector<hsize_t>{50, 8}));
  EXPECT_EQ(dataset_info(file.get(), "/tempering/log_weight").shape,
            (std::vector<hsize_t>{50, 8, 4}));
  EXPECT_EQ(read_doubles(file.get(), "/tempering/beta"),
            (std::vector<double>{0.3, 0.35, 0.4, 0.45}));
  EXPECT_EQ(read_doubles(file.get(), "/tempering/h"),
            (std::vector<double>{0.0, 0.005, 0.01, 0.02}));
  const H5Id group = open_group(file.get(), "tempering");
  EXPECT_EQ(string_attribute(group.get(), "tempered"), "beta,h");
  EXPECT_EQ(int64_attribute(group.get(), "rungs"), 4);
  EXPECT_EQ(int64_attribute(group.get(), "ladders"), 2);
  // Every measurement's slots hold each rung of each ladder once.
  const std::vector<int64_t> rungs = read_int64s(file.get(), "/tempering/replica_rung");
  for (size_t k = 0; k < 50; ++k) {
    for (size_t l = 0; l < 2; ++l) {
      std::vector<int64_t> ladder(rungs.begin() + k * 8 + l * 4, rungs.begin() + k * 8 + l * 4 + 4);
      std::sort(ladder.begin(), ladder.end());
      EXPECT_EQ(ladder, (std::vector<int64_t>{0, 1, 2, 3})) << "measurement " << k;
    }
  }
  const std::vector<int64_t> attempts =
      read_int64s(file.get(), "/tempering/statistics/pair_attempts");
  EXPECT_EQ(attempts.size(), 3u);
  // 69 sweeps after the first: 34 rounds alternating between pair 1 and pairs 0, 2; 2 ladders.
  EXPECT_EQ(attempts, (std::vector<int64_t>{34, 34, 34}));
  // The log weight of a configuration at its own rung: beta (B + h M) = -beta V e at h = 0.
  const std::vector<double> energy = read_doubles(file.get(), "/observables/energy");
  const std::vector<double> weights = read_doubles(file.get(), "/tempering/log_weight");
  for (size_t k = 0; k < 50; ++k)
    EXPECT_NEAR(weights[(k * 8 + 0) * 4 + 0], -0.3 * 64 * energy[k * 8], 1e-9);
}

/// Sum over the rungs of (f(k) - (1 - k / (R - 1)))^2: 0 for the profile of an optimal ladder.
double distance_from_linear(const std::vector<double>& f) {
  double sum = 0;
  for (size_t k = 0; k < f.size(); ++k) {
    const double d = f[k] - (1.0 - static_cast<double>(k) / static_cast<double>(f.size() - 1));
    sum += d * d;
  }
  return sum;
}

// tempering.feedback on a bad ladder of the 8 x 8 Ising model (rungs crowded on the hot side
// of beta_c, one wide gap to the cold end): f(k) after tuning is far closer to linear than the
// input ladder's (by 3 orders of magnitude in trials; a no-op tuning would repeat the untuned
// chain exactly). The ladder the measurements used is /tempering/beta, the input's
// /tempering/ladder_input, each step's f(k) and ladder are under /tempering/feedback, and the
// exchange weights are those of the tuned rungs.
TEST_F(Cli, FeedbackFlattensTheProfileAndRecordsTheTunedLadder) {
  const std::vector<double> input{0.3, 0.31, 0.32, 0.33, 0.34, 0.35, 0.36, 0.5};
  const auto run = [&](int feedback) {
    const std::string name = "fb" + std::to_string(feedback);
    std::ofstream(path(name + ".toml"))
        << "[lattice]\ndims = [8, 8]\n[model]\nkind = \"ising\"\n"
           "[tempering]\nbeta = [0.3, 0.31, 0.32, 0.33, 0.34, 0.35, 0.36, 0.5]\nfeedback = "
        << feedback
        << "\n[run]\nthermalization = 2000\nmeasurements = 2000\nseed = 5\nreplicas = 2\n";
    const RunResult r = sim({path(name + ".toml"), "--backend", "cpu", "-o", name + ".h5", "-q"});
    EXPECT_EQ(r.exit_code, 0) << r;
    return open_file(path(name + ".h5"));
  };
  const H5Id untuned = run(0), file = run(3);
  const double before =
      distance_from_linear(read_doubles(untuned.get(), "/tempering/statistics/up_fraction"));
  const double after =
      distance_from_linear(read_doubles(file.get(), "/tempering/statistics/up_fraction"));
  std::printf("[ feedback ] sum (f(k) - linear)^2: %.4f as given, %.4f tuned\n", before, after);
  EXPECT_GT(before, 1.0);
  EXPECT_LT(after, 0.05 * before);

  EXPECT_EQ(read_doubles(file.get(), "/tempering/ladder_input"), input);
  const std::vector<double> tuned = read_doubles(file.get(), "/tempering/beta");
  ASSERT_EQ(tuned.size(), 8u);
  EXPECT_EQ(tuned.front(), 0.3);
  EXPECT_EQ(tuned.back(), 0.5);
  for (size_t k = 0; k + 1 < tuned.size(); ++k) EXPECT_LT(tuned[k], tuned[k + 1]);
  EXPECT_EQ(dataset_info(file.get(), "/tempering/feedback/up_fraction").shape,
            (std::vector<hsize_t>{3, 8}));
  const std::vector<double> ladders = read_doubles(file.get(), "/tempering/feedback/ladders");
  EXPECT_EQ(std::vector<double>(ladders.end() - 8, ladders.end()), tuned);
  EXPECT_EQ(int64_attribute(open_group(file.get(), "tempering").get(), "feedback"), 3);
  // The log weight of rung k's configuration at rung k is -beta_k V e with the tuned beta_k.
  const std::vector<double> energy = read_doubles(file.get(), "/observables/energy");
  const std::vector<double> weights = read_doubles(file.get(), "/tempering/log_weight");
  for (size_t m = 0; m < 2000; m += 100) {
    for (size_t i = 0; i < 16; ++i)
      EXPECT_NEAR(weights[(m * 16 + i) * 8 + i % 8], -tuned[i % 8] * 64 * energy[m * 16 + i], 1e-9);
  }
}

}  // namespace
}  // namespace lattica
