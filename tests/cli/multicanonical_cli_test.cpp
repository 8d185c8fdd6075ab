// Multicanonical runs from the command line: hostile [multicanonical] inputs exit 2 naming the
// key, the value and the reason and write nothing; a run writes /multicanonical; a run stopped
// by a signal in any phase, or extended by more measurements, continues with --resume to the
// uninterrupted run's file.

#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/cli/cli_support.hpp"

namespace lattica {
namespace {

using namespace cli;

/// A small multicanonical Potts input: `model` keys, `muca` keys, `extra` further sections.
std::string muca_input(const std::string& model = "kind = \"potts\"\nq = 3\nbeta = 1.0",
                       const std::string& muca = "walkers = 8\nlnf_final = 0.01",
                       const std::string& extra = "") {
  return "[lattice]\ndims = [4, 4]\n[model]\n" + model + "\n[multicanonical]\n" + muca +
         "\n[run]\nthermalization = 10\nmeasurements = 20\nmeasure_every = 2\nseed = 3\n" + extra;
}

TEST_F(Cli, BadMulticanonicalInputExitsTwoAndWritesNothing) {
  const std::vector<BadInput> cases = {
      {"phi^4 without a window",
       muca_input("kind = \"phi4\"\nkappa = 0.3\nlambda = 1.0"),
       {"multicanonical.window is missing", "unbounded"}},
      {"O(n) window beyond the energies",
       muca_input("kind = \"on\"\nn = 3\nbeta = 1.0", "window = [-2.5, 0.0]"),
       {"multicanonical.window", "[-2.0, 2.0]"}},
      {"O(n) field", muca_input("kind = \"on\"\nn = 2\nbeta = 1.0\nh = 0.2"), {"model.h", "h = 0"}},
      {"O(n) tuned step",
       muca_input("kind = \"on\"\nn = 2\nbeta = 1.0", "walkers = 8", "[update]\ntune = true\n"),
       {"update.tune", "update.step as given"}},
      {"O(n) heat bath",
       muca_input("kind = \"on\"\nn = 2\nbeta = 1.0", "walkers = 8",
                  "[update]\nalgorithm = \"heatbath\"\n"),
       {"update.algorithm", "only \"metropolis\""}},
      {"bins for Potts",
       muca_input("kind = \"potts\"\nq = 3\nbeta = 1.0", "bins = 64"),
       {"multicanonical.bins"}},
      {"series beyond the host's memory",
       std::regex_replace(muca_input("kind = \"potts\"\nq = 3\nbeta = 1.0", "walkers = 65536"),
                          std::regex("measurements = 20"), "measurements = 100000000"),
       {"multicanonical.walkers = 65536", "GiB of host memory"}},
      {"too few bins",
       muca_input("kind = \"phi4\"\nkappa = 0.3\nlambda = 1.0", "window = [-3.0, 1.0]\nbins = 2"),
       {"multicanonical.bins", "2"}},
      {"field", muca_input("kind = \"ising\"\nbeta = 0.4\nh = 0.1"), {"model.h", "h = 0"}},
      {"tempering",
       muca_input("kind = \"ising\"", "walkers = 8", "[tempering]\nbeta = [0.3, 0.4]\n"),
       {"tempering.beta", "[multicanonical]"}},
      {"cluster pass",
       muca_input("kind = \"ising\"\nbeta = 0.4", "walkers = 8",
                  "[update]\nalgorithm = \"wolff\"\n"),
       {"update.algorithm", "'wolff'", "only \"metropolis\""}},
      {"replicas",
       muca_input("kind = \"ising\"\nbeta = 0.4", "walkers = 8", "replicas = 4\n"),
       {"run.replicas", "multicanonical.walkers"}},
      {"walkers zero",
       muca_input("kind = \"ising\"\nbeta = 0.4", "walkers = 0"),
       {"multicanonical.walkers", "0"}},
      {"lnf order",
       muca_input("kind = \"ising\"\nbeta = 0.4", "lnf_initial = 0.1\nlnf_final = 0.2"),
       {"multicanonical.lnf_final", "0.2", "below multicanonical.lnf_initial"}},
      {"flatness",
       muca_input("kind = \"ising\"\nbeta = 0.4", "flatness = 1.0"),
       {"multicanonical.flatness", "strictly between 0 and 1"}},
      {"unknown key",
       muca_input("kind = \"ising\"\nbeta = 0.4", "walker = 8"),
       {"multicanonical.walker"}},
      {"window reversed",
       muca_input("kind = \"ising\"\nbeta = 0.4", "window = [0.5, -1.0]"),
       {"multicanonical.window", "e_low < e_high"}},
      {"window beyond the energies",
       muca_input("kind = \"potts\"\nq = 3\nbeta = 1.0", "window = [-2.5, -1.0]"),
       {"multicanonical.window", "[-2.0, 0.0]"}},
      {"window too narrow",
       muca_input("kind = \"ising\"\nbeta = 0.4", "window = [-1.0, -0.5]"),
       {"multicanonical.window", "energy levels"}},
      {"window of three",
       muca_input("kind = \"ising\"\nbeta = 0.4", "window = [-1.0, 0.0, 0.5]"),
       {"multicanonical.window", "array of 2 numbers"}},
      {"initial weights",
       muca_input("kind = \"ising\"\nbeta = 0.4", "initial_weights = \"beta\""),
       {"multicanonical.initial_weights", "'beta'"}},
      {"refinement iterations negative",
       muca_input("kind = \"ising\"\nbeta = 0.4", "refine_iterations = -1"),
       {"multicanonical.refine_iterations", "-1"}},
      {"refinement iterations fractional",
       muca_input("kind = \"ising\"\nbeta = 0.4", "refine_iterations = 2.5"),
       {"multicanonical.refine_iterations", "2.5"}},
      {"refinement sweeps zero",
       muca_input("kind = \"ising\"\nbeta = 0.4", "refine_iterations = 2\nrefine_sweeps = 0"),
       {"multicanonical.refine_sweeps", "0"}},
      {"refinement sweeps beyond 2^31",
       muca_input("kind = \"ising\"\nbeta = 0.4",
                  "refine_iterations = 2\nrefine_sweeps = 4294967296"),
       {"multicanonical.refine_sweeps", "4294967296"}},
      {"refinement sweeps without iterations",
       muca_input("kind = \"ising\"\nbeta = 0.4", "refine_sweeps = 100"),
       {"multicanonical.refine_sweeps", "refine_iterations > 0"}},
  };
  expect_bad_inputs(cases);
}

TEST_F(Cli, ContinuousMulticanonicalRunWritesBinnedEnergies) {
  std::ofstream(path("phi4.toml"))
      << muca_input("kind = \"phi4\"\nkappa = 0.3\nlambda = 1.0\nprecision = \"float\"",
                    "walkers = 8\nlnf_final = 0.05\nwindow = [-3.0, 1.0]\nbins = 16");
  const RunResult r = sim({path("phi4.toml"), "--backend", "cpu", "-o", "phi4.h5", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const H5Id file = open_file(path("phi4.h5"));
  const H5Id group = open_group(file.get(), "multicanonical");
  EXPECT_EQ(string_attribute(group.get(), "model"), "phi4");
  EXPECT_EQ(string_attribute(group.get(), "coupling"), "kappa");
  EXPECT_EQ(double_attribute(group.get(), "coupling_value"), 0.3);
  EXPECT_EQ(double_attribute(group.get(), "bin_low"), -3.0 * 16);
  EXPECT_EQ(double_attribute(group.get(), "bin_width"), 4.0);
  const std::vector<double> energy = read_doubles(file.get(), "/multicanonical/energy");
  ASSERT_EQ(energy.size(), 18u);  // below the window, 16 bins, above it
  EXPECT_TRUE(std::isnan(energy.front()) && std::isnan(energy.back()));
  EXPECT_EQ(energy[1], -46.0);  // the first bin's centre
  // No snapshots, but their empty dataset has the model's type, as readers expect.
  EXPECT_EQ(dataset_info(file.get(), "/snapshots/configuration").type_class, H5T_FLOAT);
  EXPECT_EQ(dataset_info(file.get(), "/snapshots/configuration").shape,
            (std::vector<hsize_t>{0, 4, 4}));
  const std::vector<double> series = read_doubles(file.get(), "/multicanonical/energy_series");
  ASSERT_EQ(series.size(), 20u * 8);
  for (double e : series) {
    EXPECT_GE(e, -48.0);
    EXPECT_LT(e, 16.0);
  }
}

TEST_F(Cli, MulticanonicalRunWritesItsGroup) {
  std::ofstream(path("muca.toml")) << muca_input();
  const RunResult r = sim({path("muca.toml"), "--backend", "cpu", "-o", "muca.h5", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const H5Id file = open_file(path("muca.h5"));
  EXPECT_EQ(int64_attribute(file.get(), "finished"), 1);
  const H5Id group = open_group(file.get(), "multicanonical");
  EXPECT_EQ(string_attribute(group.get(), "model"), "potts");
  EXPECT_EQ(int64_attribute(group.get(), "walkers"), 8);
  EXPECT_EQ(int64_attribute(group.get(), "converged"), 1);
  EXPECT_EQ(dataset_info(file.get(), "/multicanonical/energy_series").shape,
            (std::vector<hsize_t>{20, 8}));
  const std::vector<double> energy = read_doubles(file.get(), "/multicanonical/energy");
  ASSERT_EQ(energy.size(), 33u);  // bins k = 0 .. 2V
  EXPECT_EQ(energy.front(), 0);
  EXPECT_EQ(energy.back(), -32);
  // Every walker is recorded after every measure_every sweeps, and the histogram counts all.
  const std::vector<int64_t> histogram = read_int64s(file.get(), "/multicanonical/histogram");
  int64_t total = 0;
  for (int64_t h : histogram) total += h;
  EXPECT_EQ(total, 20 * 2 * 8);
  const std::vector<int64_t> sweeps = read_int64s(file.get(), "/multicanonical/sweep");
  EXPECT_EQ(sweeps.back() - sweeps.front(), 19 * 2);
}

TEST_F(Cli, RefinedMulticanonicalRunRecordsItsRefinement) {
  std::ofstream(path("muca.toml"))
      << muca_input("kind = \"potts\"\nq = 3\nbeta = 1.0",
                    "walkers = 8\nlnf_final = 0.01\nrefine_iterations = 3\nrefine_sweeps = 50");
  const RunResult r = sim({path("muca.toml"), "--backend", "cpu", "-o", "muca.h5"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.err.find("refinement iteration 3 of 3"), std::string::npos) << r;
  const H5Id file = open_file(path("muca.h5"));
  const H5Id group = open_group(file.get(), "multicanonical");
  EXPECT_EQ(int64_attribute(group.get(), "refine_iterations"), 3);
  EXPECT_EQ(int64_attribute(group.get(), "refine_sweeps"), 50);
  EXPECT_EQ(double_attribute(group.get(), "refine_prior_weight"), 1.0);
  const std::vector<double> pairs = read_doubles(file.get(), "/multicanonical/refine_pair_weight");
  ASSERT_EQ(pairs.size(), 33u);
  double total = 0;
  for (double w : pairs) total += w;
  EXPECT_GT(total, 0);
  // The production follows Wang-Landau and the refinement.
  const int64_t wang_landau = int64_attribute(group.get(), "wang_landau_sweeps");
  EXPECT_EQ(read_int64s(file.get(), "/multicanonical/sweep").front(), wang_landau + 150 + 10 + 2);
  // Without the keys: no refinement recorded.
  std::ofstream(path("plain.toml")) << muca_input();
  ASSERT_EQ(sim({path("plain.toml"), "--backend", "cpu", "-o", "plain.h5", "-q"}).exit_code, 0);
  const H5Id plain = open_file(path("plain.h5"));
  EXPECT_EQ(int64_attribute(open_group(plain.get(), "multicanonical").get(), "refine_iterations"),
            0);
}

/// A 6x6 Potts q = 3 run of 16 walkers, about a second on one core: Wang-Landau to ln f = 1e-3
/// in iterations of 20 sweeps, a checkpoint every 200 sweeps, `measurements` measurements.
std::string resumable_input(int measurements, const std::string& refinement = "") {
  return "[lattice]\ndims = [6, 6]\n[model]\nkind = \"potts\"\nq = 3\nbeta = 1.0\n"
         "[multicanonical]\nwalkers = 16\nlnf_final = 1e-3\nsweeps_per_iteration = 20\n" +
         refinement +
         "[run]\nthermalization = 10\nmeasure_every = 2\nseed = 3\ncheckpoint_every = 200\n"
         "backend = \"cpu\"\nmeasurements = " +
         std::to_string(measurements) + "\n";
}

// SIGTERM soon after the first checkpoint stops the run in Wang-Landau (exit 75, a checkpoint);
// --resume continues it to every dataset of the uninterrupted run, byte for byte.
TEST_F(Cli, MulticanonicalSignalThenResumeIsTheSameRun) {
  std::ofstream(path("in.toml")) << resumable_input(40);
  ASSERT_EQ(sim({path("in.toml"), "-o", "reference.h5", "-q"}).exit_code, 0);
  const pid_t pid = start({path("in.toml"), "-o", "out.h5", "-q"});
  wait_for_file(path("out.h5.checkpoint"));
  kill(pid, SIGTERM);
  const RunResult stopped = finish(pid);
  ASSERT_EQ(stopped.exit_code, 75) << stopped;
  EXPECT_NE(stopped.err.find("--resume"), std::string::npos) << stopped;
  const RunResult resumed = sim({path("in.toml"), "-o", "out.h5", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed;
  EXPECT_NE(resumed.err.find("resuming at sweep"), std::string::npos) << resumed;
  expect_same_datasets(path("reference.h5"), path("out.h5"));
  // A finished run with checkpoints keeps its last one; --resume with as many measurements
  // has nothing to do.
  const RunResult again = sim({path("in.toml"), "-o", "out.h5", "--resume"});
  EXPECT_EQ(again.exit_code, 0) << again;
  EXPECT_NE(again.err.find("finished"), std::string::npos) << again;
}

// A finished run extended with more measurements is the longer run; a changed chain key is
// refused (exit 2) naming the key. With a refinement too: its accumulators go through the
// checkpoint file (the extended run's refine_pair_weight and weights are the longer run's).
TEST_F(Cli, MulticanonicalRunExtendsWithMoreMeasurements) {
  struct Case {
    std::string name, refinement, changed_key, changed_value;
  };
  const Case cases[] = {{"plain", "", "model.beta", "1.1"},
                        {"refined", "refine_iterations = 3\nrefine_sweeps = 40\n",
                         "multicanonical.refine_sweeps", "41"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string reference = c.name + "_reference.h5", out = c.name + "_out.h5";
    std::ofstream(path("long.toml")) << resumable_input(40, c.refinement);
    std::ofstream(path("short.toml")) << resumable_input(16, c.refinement);
    ASSERT_EQ(sim({path("long.toml"), "-o", reference, "-q"}).exit_code, 0);
    ASSERT_EQ(sim({path("short.toml"), "-o", out, "-q"}).exit_code, 0);
    const RunResult longer =
        sim({path("short.toml"), "-o", out, "--resume", "-q", "--set", "run.measurements=40"});
    ASSERT_EQ(longer.exit_code, 0) << longer;
    expect_same_datasets(path(reference), path(out));
    const RunResult other =
        sim({path("long.toml"), "-o", out, "--resume", "--set", "run.measurements=50", "--set",
             c.changed_key + "=" + c.changed_value});
    EXPECT_EQ(other.exit_code, 2) << other;
    EXPECT_NE(other.err.find(c.changed_key), std::string::npos) << other;
  }
}

}  // namespace
}  // namespace lattica
