// Multicanonical runs from the command line: hostile [multicanonical] inputs exit 2 naming the
// key, the value and the reason and write nothing; a run writes /multicanonical.

#include <gtest/gtest.h>
#include <hdf5.h>

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
      {"O(n)",
       muca_input("kind = \"on\"\nn = 3\nbeta = 1.0"),
       {"model.kind", "'on'", "\"ising\" and \"potts\" only"}},
      {"field", muca_input("kind = \"ising\"\nbeta = 0.4\nh = 0.1"), {"model.h", "h = 0"}},
      {"tempering",
       muca_input("kind = \"ising\"", "walkers = 8", "[tempering]\nbeta = [0.3, 0.4]\n"),
       {"tempering.beta", "[multicanonical]"}},
      {"cluster pass",
       muca_input("kind = \"ising\"\nbeta = 0.4", "walkers = 8",
                  "[update]\nalgorithm = \"wolff\"\n"),
       {"update.algorithm", "'wolff'", "only \"metropolis\""}},
      {"checkpoints",
       muca_input("kind = \"ising\"\nbeta = 0.4", "walkers = 8", "checkpoint_every = 100\n"),
       {"run.checkpoint_every", "no checkpoints"}},
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
  };
  expect_bad_inputs(cases);
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
  const std::vector<int64_t> energy = read_int64s(file.get(), "/multicanonical/energy");
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

}  // namespace
}  // namespace lattica
