// The sim command line end to end: runs the executable as a subprocess in a fresh temporary
// directory and reads the HDF5 file it writes with the HDF5 C API (helpers and the Cli
// fixture in cli_support.hpp).

#include <gtest/gtest.h>
#include <hdf5.h>

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <random>
#include <regex>
#include <sstream>

#include "sim/config.hpp"
#include "sim/engine/engine.hpp"
#include "sim/output.hpp"
#include "tests/cli/cli_support.hpp"
#include "tests/support/gpu.hpp"
#include "tests/support/mutate.hpp"

namespace lattica {
namespace {

using namespace cli;

/// Per-site energy (h = 0) and magnetization of a periodic 2D frame in lexicographic order:
/// E/V = -sum_x s_x (s_{x+e0} + s_{x+e1}) / V, M/V = sum_x s_x / V. Exact integer sums.
void energy_magnetization_2d(const int8_t* s, int64_t l0, int64_t l1, double& energy,
                             double& magnetization) {
  int64_t bonds = 0, sum = 0;
  for (int64_t i = 0; i < l0; ++i) {
    for (int64_t j = 0; j < l1; ++j) {
      const int64_t x = s[i * l1 + j];
      bonds += x * (s[((i + 1) % l0) * l1 + j] + s[i * l1 + (j + 1) % l1]);
      sum += x;
    }
  }
  const double volume = static_cast<double>(l0 * l1);
  energy = -static_cast<double>(bonds) / volume;
  magnetization = static_cast<double>(sum) / volume;
}

// (a) The default input with small overrides, read back in full.
TEST_F(Cli, DefaultInputWritesTheSchema) {
  const RunResult r = sim(small_run({"--backend", "cpu", "--output", "out.h5"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  ASSERT_TRUE(fs::exists(path("out.h5")));
  const Config input = load_config(default_input());

  const H5Id file = open_file(path("out.h5"));
  const hid_t root = file.get();
  EXPECT_EQ(string_attribute(root, "schema"), "lattica/1");
  EXPECT_EQ(numeric_attribute<uint64_t>(root, "seed", H5T_NATIVE_UINT64),
            std::vector<uint64_t>{input.seed});
  EXPECT_EQ(numeric_attribute<int64_t>(root, "lattice_dims", H5T_NATIVE_INT64),
            (std::vector<int64_t>{16, 16}));
  EXPECT_EQ(string_attribute(root, "input_toml"), read_bytes(default_input()));
  EXPECT_EQ(string_attribute(root, "backend"), "cpu");
  EXPECT_EQ(string_attribute(root, "model"), "ising");
  EXPECT_EQ(numeric_attribute<double>(root, "beta", H5T_NATIVE_DOUBLE),
            std::vector<double>{input.beta});
  EXPECT_EQ(numeric_attribute<double>(root, "h", H5T_NATIVE_DOUBLE), std::vector<double>{0.0});
  EXPECT_FALSE(string_attribute(root, "program_version").empty());
  EXPECT_FALSE(string_attribute(root, "git_commit").empty());
  EXPECT_FALSE(string_attribute(root, "device").empty());
  EXPECT_EQ(string_attribute(root, "created_utc").size(), 20u);  // 2026-11-21T10:00:00Z

  // The resolved configuration holds the overrides and reads back as a valid input.
  const Config resolved =
      parse_config(string_attribute(root, "resolved_config"), "resolved_config");
  EXPECT_EQ(resolved.dims, (std::vector<int64_t>{16, 16}));
  EXPECT_EQ(resolved.thermalization, 10);
  EXPECT_EQ(resolved.measurements, 40);
  EXPECT_EQ(resolved.measure_every, 3);
  EXPECT_EQ(resolved.snapshot_every, 30);
  EXPECT_EQ(resolved.backend, "cpu");
  EXPECT_EQ(resolved.output_path, "out.h5");
  EXPECT_EQ(resolved.seed, input.seed);

  // Observables: 40 measurements at sweeps 13, 16, ..., 130.
  for (const char* name : {"/observables/energy", "/observables/magnetization"}) {
    SCOPED_TRACE(name);
    const DatasetInfo info = dataset_info(root, name);
    EXPECT_EQ(info.type_class, H5T_FLOAT);
    EXPECT_EQ(info.type_size, 8u);
    EXPECT_EQ(info.shape, std::vector<hsize_t>{40});
  }
  const DatasetInfo sweep_info = dataset_info(root, "/observables/sweep");
  EXPECT_EQ(sweep_info.type_class, H5T_INTEGER);
  EXPECT_EQ(sweep_info.type_size, 8u);
  EXPECT_EQ(sweep_info.sign, H5T_SGN_2);
  EXPECT_EQ(sweep_info.shape, std::vector<hsize_t>{40});
  const std::vector<double> energy = read_doubles(root, "/observables/energy");
  const std::vector<double> magnetization = read_doubles(root, "/observables/magnetization");
  const std::vector<int64_t> sweeps = read_int64s(root, "/observables/sweep");
  std::vector<int64_t> expected_sweeps;
  for (int64_t k = 1; k <= 40; ++k) expected_sweeps.push_back(10 + 3 * k);
  EXPECT_EQ(sweeps, expected_sweeps);
  for (size_t k = 0; k < energy.size(); ++k) {
    EXPECT_GE(energy[k], -2.0);
    EXPECT_LE(energy[k], 2.0);
    EXPECT_LE(std::abs(magnetization[k]), 1.0);
  }
  EXPECT_EQ(int64_attribute(open_group(root, "/observables").get(), "committed_length"), 40);

  // Snapshots: int8 frames of +-1, the last one the final configuration at sweep 130.
  const DatasetInfo frames_info = dataset_info(root, "/snapshots/configuration");
  EXPECT_EQ(frames_info.type_class, H5T_INTEGER);
  EXPECT_EQ(frames_info.type_size, 1u);
  EXPECT_EQ(frames_info.sign, H5T_SGN_2);
  ASSERT_EQ(frames_info.shape.size(), 3u);
  EXPECT_EQ(frames_info.shape[1], 16u);
  EXPECT_EQ(frames_info.shape[2], 16u);
  const size_t n_frames = frames_info.shape[0];
  const std::vector<int64_t> frame_sweeps = read_int64s(root, "/snapshots/sweep");
  ASSERT_EQ(frame_sweeps.size(), n_frames);
  ASSERT_GE(n_frames, 1u);
  EXPECT_EQ(frame_sweeps.back(), 130);
  EXPECT_EQ(int64_attribute(open_group(root, "/snapshots").get(), "committed_length"),
            static_cast<int64_t>(n_frames));
  const std::vector<int8_t> frames =
      read_dataset<int8_t>(root, "/snapshots/configuration", H5T_NATIVE_INT8);
  ASSERT_EQ(frames.size(), n_frames * 256);
  for (int8_t s : frames) {
    if (s != 1 && s != -1) {
      ADD_FAILURE() << "spin value " << int(s) << " in a snapshot";
      break;
    }
  }

  // The energy and magnetization recomputed from each frame taken at a measured sweep equal the
  // stored measurement exactly; the last frame and the last measurement are both at sweep 130.
  ASSERT_EQ(sweeps.back(), 130);
  int compared = 0;
  for (size_t f = 0; f < n_frames; ++f) {
    for (size_t k = 0; k < sweeps.size(); ++k) {
      if (sweeps[k] != frame_sweeps[f]) continue;
      SCOPED_TRACE("frame at sweep " + std::to_string(frame_sweeps[f]));
      double e = 0, m = 0;
      energy_magnetization_2d(&frames[f * 256], 16, 16, e, m);
      EXPECT_EQ(energy[k], e);
      EXPECT_EQ(magnetization[k], m);
      ++compared;
    }
  }
  EXPECT_GE(compared, 1);
  double e_last = 0, m_last = 0;
  energy_magnetization_2d(&frames[(n_frames - 1) * 256], 16, 16, e_last, m_last);
  EXPECT_EQ(energy.back(), e_last);
  EXPECT_EQ(magnetization.back(), m_last);
}

// The snapshot schedule as specified for this test: every output.snapshot_every sweeps counted
// from sweep 0 (30, 60, 90, 120), plus the final configuration (130).
//
// Snapshots are counted from the end of thermalization, like measurements: with
// thermalization = 10 and snapshot_every = 30 the frames are after sweeps 40, 70, 100 and 130,
// and the final configuration (sweep 130) is not stored twice.
TEST_F(Cli, SnapshotsAtMultiplesOfSnapshotEvery) {
  const RunResult r = sim(small_run({"--backend", "cpu", "--output", "out.h5"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  const H5Id file = open_file(path("out.h5"));
  EXPECT_EQ(read_int64s(file.get(), "/snapshots/sweep"), (std::vector<int64_t>{40, 70, 100, 130}));
  EXPECT_EQ(dataset_info(file.get(), "/snapshots/configuration").shape,
            (std::vector<hsize_t>{4, 16, 16}));
}

// output.snapshot_packing = "bits": the same frames as bytes, 8 spins per byte, on a lattice
// that packs 32 spins per word (64 x 64) and one that does not (16 x 24); bad uses exit 2.
TEST_F(Cli, BitPackedSnapshotsHoldTheSameSpins) {
  for (const char* dims : {"lattice.dims=[16,24]", "lattice.dims=[8,64]"}) {
    SCOPED_TRACE(dims);
    for (const char* packing : {"bytes", "bits"}) {
      const RunResult r = sim(small_run({"--backend", "cpu", "--set", dims, "--set",
                                         std::string("output.snapshot_packing=") + packing,
                                         "--output", std::string(packing) + ".h5"}));
      ASSERT_EQ(r.exit_code, 0) << r;
    }
    const H5Id bytes = open_file(path("bytes.h5")), bits = open_file(path("bits.h5"));
    const DatasetInfo info = dataset_info(bytes.get(), "/snapshots/configuration");
    std::vector<hsize_t> packed_shape = info.shape;
    packed_shape.back() /= 8;
    EXPECT_EQ(dataset_info(bits.get(), "/snapshots/configuration").shape, packed_shape);
    const H5Id set(checked(H5Dopen2(bits.get(), "/snapshots/configuration", H5P_DEFAULT),
                           "open configuration"),
                   H5Dclose);
    EXPECT_EQ(string_attribute(set.get(), "packing"), "bits");
    const auto spins =
        read_dataset<int8_t>(bytes.get(), "/snapshots/configuration", H5T_NATIVE_INT8);
    const auto packed =
        read_dataset<uint8_t>(bits.get(), "/snapshots/configuration", H5T_NATIVE_UINT8);
    ASSERT_EQ(packed.size() * 8, spins.size());
    size_t up = 0;
    for (size_t i = 0; i < spins.size(); ++i) {
      const bool bit = (packed[i / 8] >> (i % 8)) & 1;
      ASSERT_EQ(bit ? 1 : -1, spins[i]) << "site " << i;
      up += bit;
    }
    EXPECT_GT(up, 0u);
    EXPECT_LT(up, spins.size());
    EXPECT_EQ(read_doubles(bits.get(), "/observables/energy"),
              read_doubles(bytes.get(), "/observables/energy"));
    fs::remove(path("bytes.h5"));
    fs::remove(path("bits.h5"));
  }
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--set", "output.snapshot_packing=bits", "--set", "model.kind=potts", "--set",
            "model.q=3"},
           {"--set", "output.snapshot_packing=bits", "--set", "lattice.dims=[16,20]"},
           {"--set", "output.snapshot_packing=nibbles"}}) {
    std::vector<std::string> args{default_input(), "-o", "x.h5"};
    args.insert(args.end(), bad.begin(), bad.end());
    const RunResult r = sim(args);
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find("output.snapshot_packing"), std::string::npos) << r;
    EXPECT_FALSE(fs::exists(path("x.h5")));
  }
}

// Without --output the file is named after the input's stem, in the working directory.
TEST_F(Cli, DefaultOutputPathIsTheInputStem) {
  const RunResult r =
      sim(small_run({"--backend", "cpu", "--set", "output.path=lattice.h5", "--quiet"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(fs::exists(path("lattice.h5")));
}

// (b) An existing file is kept unless --force is given.
TEST_F(Cli, ExistingOutputNeedsForce) {
  const std::string existing = "not an HDF5 file, and must survive\n";
  {
    std::ofstream f(path("out.h5"), std::ios::binary);
    f << existing;
  }
  const RunResult refused = sim(small_run({"--backend", "cpu", "--output", "out.h5"}));
  EXPECT_EQ(refused.exit_code, 2) << refused;
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused;
  EXPECT_NE(refused.err.find("out.h5"), std::string::npos) << refused;
  EXPECT_EQ(read_bytes(path("out.h5")), existing);

  const RunResult forced = sim(small_run({"--backend", "cpu", "--output", "out.h5", "--force"}));
  EXPECT_EQ(forced.exit_code, 0) << forced;
  EXPECT_GT(H5Fis_hdf5(path("out.h5").c_str()), 0);
  const H5Id file = open_file(path("out.h5"));
  EXPECT_EQ(string_attribute(file.get(), "schema"), "lattica/1");
}

// (c) Bad input: exit 2, a message naming the key and the reason, and no file.
TEST_F(Cli, BadInputExitsTwoAndWritesNothing) {
  const RunResult r =
      sim(small_run({"--backend", "cpu", "--output", "out.h5", "--set", "lattice.dims=[15,16]"}));
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("lattice.dims"), std::string::npos) << r;
  EXPECT_NE(r.err.find("even"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(path("out.h5")));
}

// parallel.grid (issue 8) must fit the lattice and the ranks, also for a single process; a
// grid of one box per axis is the single process's run.
TEST_F(Cli, ParallelGridMustFitTheRanks) {
  for (const char* grid :
       {"parallel.grid=[2,1]", "parallel.grid=[1,2]", "parallel.grid=[2]", "parallel.grid=[0,1]"}) {
    const RunResult r = sim(small_run({"--backend", "cpu", "--output", "out.h5", "--set", grid}));
    EXPECT_EQ(r.exit_code, 2) << grid << "\n" << r;
    EXPECT_NE(r.err.find("parallel.grid"), std::string::npos) << r;
    EXPECT_FALSE(fs::exists(path("out.h5"))) << grid;
  }
  const RunResult one =
      sim(small_run({"--backend", "cpu", "--output", "out.h5", "--set", "parallel.grid=[1,1]"}));
  EXPECT_EQ(one.exit_code, 0) << one;
}

TEST_F(Cli, SeveralInputErrorsAreAllPrinted) {
  const RunResult r = sim(small_run(
      {"--output", "out.h5", "--set", "model.beta=-1", "--backend", "gpu", "--seed", "x"}));
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("model.beta"), std::string::npos) << r;
  EXPECT_NE(r.err.find("--backend gpu"), std::string::npos) << r;
  EXPECT_NE(r.err.find("--seed x"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(path("out.h5")));
}

TEST_F(Cli, MissingInputFileExitsTwo) {
  const RunResult r = sim({path("no-such-input.toml"), "--output", "out.h5"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("no-such-input.toml"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(path("out.h5")));
}

// (d) --help and --version.
TEST_F(Cli, HelpAndVersion) {
  const RunResult help = sim({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help;
  EXPECT_NE(help.all().find("--set"), std::string::npos) << help;
  EXPECT_NE(help.all().find("--backend"), std::string::npos) << help;

  const RunResult version = sim({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version;
  EXPECT_NE(version.all().find("Lattica"), std::string::npos) << version;
}

// (e) Usage errors.
TEST_F(Cli, UnknownOptionExitsTwo) {
  const RunResult r = sim({default_input(), "--no-such-option"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_FALSE(r.err.empty()) << r;
  const RunResult no_input = sim({});
  EXPECT_EQ(no_input.exit_code, 2) << no_input;
}

// (f) A runtime failure of HDF5: exit 3.
TEST_F(Cli, UnwritableOutputExitsThree) {
  const std::string target = path("missing-dir/out.h5");
  const RunResult r = sim(small_run({"--backend", "cpu", "--output", target}));
  EXPECT_EQ(r.exit_code, 3) << r;
  EXPECT_TRUE(r.err.find("HDF5") != std::string::npos || r.err.find(target) != std::string::npos)
      << r;
  EXPECT_FALSE(fs::exists(target));
}

// (g) --backend cuda: exit 2 on a build without CUDA, 3 on a CUDA build without a usable GPU,
// and a normal run (the same chain as the CPU's) when a GPU is there.
TEST_F(Cli, CudaBackendMatchesTheMachine) {
  std::string reason;
  const int devices = cuda_device_count(reason);
  const RunResult r = sim(small_run({"--backend", "cuda", "--output", "gpu.h5"}));
#ifdef LATTICA_HAVE_CUDA
  const bool cuda_build = true;
#else
  const bool cuda_build = false;
#endif
  if (!cuda_build) {
    EXPECT_EQ(devices, 0);
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find("CUDA"), std::string::npos) << r;
    EXPECT_FALSE(fs::exists(path("gpu.h5")));
  } else if (devices == 0) {
    EXPECT_EQ(r.exit_code, 3) << "no GPU (" << reason << ")\n" << r;
    EXPECT_FALSE(fs::exists(path("gpu.h5")));
  } else {
    ASSERT_EQ(r.exit_code, 0) << r;
    const RunResult cpu = sim(small_run({"--backend", "cpu", "--output", "cpu.h5"}));
    ASSERT_EQ(cpu.exit_code, 0) << cpu;
    const H5Id gpu_file = open_file(path("gpu.h5")), cpu_file = open_file(path("cpu.h5"));
    EXPECT_EQ(string_attribute(gpu_file.get(), "backend"), "cuda");
    // Ising chains are bit-identical on every backend.
    EXPECT_EQ(read_doubles(gpu_file.get(), "/observables/energy"),
              read_doubles(cpu_file.get(), "/observables/energy"));
    EXPECT_EQ(read_doubles(gpu_file.get(), "/observables/magnetization"),
              read_doubles(cpu_file.get(), "/observables/magnetization"));
    EXPECT_EQ(read_dataset<int8_t>(gpu_file.get(), "/snapshots/configuration", H5T_NATIVE_INT8),
              read_dataset<int8_t>(cpu_file.get(), "/snapshots/configuration", H5T_NATIVE_INT8));
  }
}

// "auto" runs on whatever the machine has.
TEST_F(Cli, AutoBackendRuns) {
  std::string reason;
  const bool gpu = cuda_device_count(reason) > 0;
  const RunResult r = sim(small_run({"--backend", "auto", "--output", "out.h5"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  const H5Id file = open_file(path("out.h5"));
  EXPECT_EQ(string_attribute(file.get(), "backend"), gpu ? "cuda" : "cpu");
}

// (h) The seed is recorded, and the chain depends on it alone.
TEST_F(Cli, SeedDeterminesTheChain) {
  const auto run = [&](const std::string& seed, const std::string& output) {
    const RunResult r = sim(small_run({"--backend", "cpu", "--seed", seed, "--output", output}));
    EXPECT_EQ(r.exit_code, 0) << r;
  };
  run("7", "a.h5");
  run("7", "b.h5");
  run("8", "c.h5");
  const H5Id a = open_file(path("a.h5")), b = open_file(path("b.h5")), c = open_file(path("c.h5"));
  EXPECT_EQ(numeric_attribute<uint64_t>(a.get(), "seed", H5T_NATIVE_UINT64),
            std::vector<uint64_t>{7});
  EXPECT_EQ(numeric_attribute<uint64_t>(c.get(), "seed", H5T_NATIVE_UINT64),
            std::vector<uint64_t>{8});
  for (const char* name : {"/observables/energy", "/observables/magnetization"}) {
    SCOPED_TRACE(name);
    const std::vector<double> va = read_doubles(a.get(), name);
    EXPECT_EQ(va.size(), 40u);
    EXPECT_EQ(va, read_doubles(b.get(), name));
    EXPECT_NE(va, read_doubles(c.get(), name));
  }
  EXPECT_EQ(read_int64s(a.get(), "/observables/sweep"), read_int64s(c.get(), "/observables/sweep"));
  EXPECT_EQ(read_dataset<int8_t>(a.get(), "/snapshots/configuration", H5T_NATIVE_INT8),
            read_dataset<int8_t>(b.get(), "/snapshots/configuration", H5T_NATIVE_INT8));
}

// (i) --quiet prints nothing on success; without it sim reports what it wrote.
TEST_F(Cli, QuietPrintsNothing) {
  const RunResult quiet = sim(small_run({"--backend", "cpu", "--output", "q.h5", "--quiet"}));
  EXPECT_EQ(quiet.exit_code, 0) << quiet;
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err, "");
  EXPECT_TRUE(fs::exists(path("q.h5")));

  const RunResult chatty = sim(small_run({"--backend", "cpu", "--output", "c.h5"}));
  EXPECT_EQ(chatty.exit_code, 0) << chatty;
  EXPECT_NE(chatty.all().find("c.h5"), std::string::npos) << chatty;
}

TEST_F(Cli, SweepWritesOneFilePerPointAndAnIndex) {
  const RunResult r = sim(sweep_run({"--quiet"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::string index = read_bytes(path("sweep.index.json"));
  EXPECT_NE(index.find("\"schema\": \"lattica-index/1\""), std::string::npos) << index;
  EXPECT_NE(index.find("\"swept\": [\"model.beta\"]"), std::string::npos) << index;
  std::set<int64_t> seeds;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "sweep." + std::to_string(i) + ".h5";
    ASSERT_TRUE(fs::exists(path(name))) << name;
    EXPECT_NE(index.find("\"file\": \"" + name + "\""), std::string::npos);
    const H5Id file = open_file(path(name));
    EXPECT_EQ(int64_attribute(file.get(), "point_index"), i);
    EXPECT_DOUBLE_EQ(numeric_attribute<double>(file.get(), "beta", H5T_NATIVE_DOUBLE)[0],
                     0.40 + 0.02 * i);
    const auto seed = numeric_attribute<uint64_t>(file.get(), "seed", H5T_NATIVE_UINT64)[0];
    EXPECT_NE(index.find("\"seed\": " + std::to_string(seed)), std::string::npos)
        << "seed of " << name;
    seeds.insert(static_cast<int64_t>(seed));
    EXPECT_EQ(dataset_info(file.get(), "/observables/energy").shape, (std::vector<hsize_t>{20}));
  }
  EXPECT_EQ(seeds.size(), 3u);
  EXPECT_FALSE(fs::exists(path("sweep.3.h5")));
}

TEST_F(Cli, TaskIdRunsExactlyOnePointWithTheSweepsSeed) {
  ASSERT_EQ(sim(sweep_run({"--quiet"})).exit_code, 0);
  const std::string full = read_bytes(path("sweep.1.h5"));
  fs::create_directory(path("alone"));
  const RunResult r = sim(sweep_run({"--task-id", "1"}, "alone/sweep.h5"));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(fs::exists(path("alone/sweep.1.h5")));
  EXPECT_TRUE(fs::exists(path("alone/sweep.index.json")));
  EXPECT_FALSE(fs::exists(path("alone/sweep.0.h5")));
  EXPECT_FALSE(fs::exists(path("alone/sweep.2.h5")));
  // The same chain as in the full sweep.
  const H5Id a = open_file(path("sweep.1.h5"));
  const H5Id b = open_file(path("alone/sweep.1.h5"));
  EXPECT_EQ(read_doubles(a.get(), "/observables/energy"),
            read_doubles(b.get(), "/observables/energy"));
  EXPECT_EQ(read_doubles(a.get(), "/observables/magnetization"),
            read_doubles(b.get(), "/observables/magnetization"));
}

TEST_F(Cli, TaskIdOutOfRangeExitsTwo) {
  const RunResult r = sim(sweep_run({"--task-id", "3"}));
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("--task-id 3"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(path("sweep.index.json")));
}

TEST_F(Cli, SweepRefusesToStartWhenAnyPointOutputExists) {
  { std::ofstream(path("sweep.2.h5")) << "keep"; }
  const RunResult r = sim(sweep_run({}));
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_FALSE(fs::exists(path("sweep.0.h5")));
  EXPECT_EQ(read_bytes(path("sweep.2.h5")), "keep");
}

TEST_F(Cli, ReplicasAndHistogramsInTheFile) {
  const RunResult r = sim(small_run({"--set", "run.replicas=3", "--backend", "cpu", "-o", "r.h5"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  const H5Id file = open_file(path("r.h5"));
  EXPECT_EQ(int64_attribute(file.get(), "replicas"), 3);
  EXPECT_EQ(dataset_info(file.get(), "/observables/energy").shape, (std::vector<hsize_t>{40, 3}));
  EXPECT_EQ(dataset_info(file.get(), "/observables/sweep").shape, (std::vector<hsize_t>{40}));
  EXPECT_EQ(dataset_info(file.get(), "/snapshots/configuration").shape,
            (std::vector<hsize_t>{4, 3, 16, 16}));
  const auto m = read_doubles(file.get(), "/observables/magnetization");
  const auto values = read_int64s(file.get(), "/histograms/magnetization/values");
  const auto counts = read_int64s(file.get(), "/histograms/magnetization/counts");
  std::map<int64_t, int64_t> want;
  for (double x : m) want[std::llround(x * 256)] += 1;
  std::map<int64_t, int64_t> got;
  for (size_t i = 0; i < values.size(); ++i) got[values[i]] = counts[i];
  EXPECT_EQ(got, want);
  const H5Id group = open_group(file.get(), "/histograms/magnetization");
  EXPECT_EQ(int64_attribute(group.get(), "committed_length"), 120);
}

// --- checkpoints, resume, signals ------------------------------------------------------------

/// A run that measures everything a checkpoint must carry: exact histograms (Ising), the
/// structure factor's sums, series and time-slice correlators, snapshots, and output blocks
/// that do not line up with the checkpoints. About 2 s on one core.
const char* const kCheckpointedIsing =
    "[lattice]\ndims = [48, 48]\n[model]\nkind = \"ising\"\nbeta = 0.44\n"
    "[run]\nthermalization = 1000\nmeasurements = 3000\nmeasure_every = 2\nseed = 9\n"
    "checkpoint_every = 500\n"
    "[measure]\nstructure_factor = true\ntimeslice = true\n"
    "[output]\nsnapshot_every = 700\nflush_every = 230\n";

/// The same for phi^4 with a tuned Metropolis step and a MALA pass (its step and the kernel's
/// shift are tuned during thermalization, where the checkpoints also fall).
const char* const kCheckpointedPhi4 =
    "[lattice]\ndims = [16, 12]\n[model]\nkind = \"phi4\"\nkappa = 0.25\nlambda = 0.5\n"
    "[update]\nsequence = [\"metropolis\", \"mala\"]\nlangevin_step = 0.3\n"
    "[run]\nthermalization = 1500\nmeasurements = 1500\nseed = 4\nreplicas = 2\n"
    "checkpoint_every = 300\n"
    "[measure]\nstructure_factor = true\n";

/// Cluster moves (issue 19): Swendsen-Wang's improved estimator, Wolff passes of two clusters
/// and a local pass; a cluster pass keeps no state between sweeps, so the checkpoint needs none.
const char* const kCheckpointedClusters =
    "[lattice]\ndims = [32, 64]\n[model]\nkind = \"ising\"\nbeta = 0.44\n"
    "[update]\nsequence = [\"metropolis\", \"swendsen_wang\", \"wolff\"]\nwolff_clusters = 2\n"
    "[run]\nthermalization = 500\nmeasurements = 3000\nseed = 19\nreplicas = 2\n"
    "checkpoint_every = 200\n"
    "[measure]\nstructure_factor = true\n[output]\nsnapshot_every = 900\n";

/// Parallel tempering (issue 21): two ladders of local and cluster passes, the ladder tuned
/// before sweeps 166 and 332 (tempering.feedback); the checkpoint carries the permutation, the
/// exchange statistics and the ladder, and the first one (sweep 300) falls between the steps.
const char* const kCheckpointedTempering =
    "[lattice]\ndims = [16, 16]\n[model]\nkind = \"ising\"\n"
    "[update]\nsequence = [\"metropolis\", \"swendsen_wang\"]\n"
    "[tempering]\nbeta = [0.38, 0.41, 0.44, 0.47, 0.5]\nexchange_every = 2\nfeedback = 2\n"
    "[run]\nthermalization = 500\nmeasurements = 3000\nseed = 21\nreplicas = 2\n"
    "checkpoint_every = 300\n[output]\nsnapshot_every = 900\n";

class CheckpointCli : public Cli, public testing::WithParamInterface<std::string> {
 protected:
  /// The backend of this instance; false (and skipped) when it is "cuda" without a GPU.
  bool backend_available() {
    std::string reason;
    if (GetParam() != "cuda" || cuda_device_count(reason) > 0) return true;
    if (test::gpu_required()) ADD_FAILURE() << "SIM_REQUIRE_GPU=1 but " << reason;
    return false;
  }

  /// Runs `input` to the end as the reference, once per test.
  void reference(const std::string& input, const std::string& output) {
    const RunResult r = sim({path(input), "--backend", GetParam(), "-o", output, "--force", "-q"});
    ASSERT_EQ(r.exit_code, 0) << r;
  }

  /// Starts `input`, waits until its first checkpoint exists, waits `delay` more, sends
  /// `signal`, and returns how the run ended.
  RunResult interrupt(const std::string& input, const std::string& output, int signal,
                      std::chrono::milliseconds delay) {
    const std::string checkpoint = path(output + ".checkpoint");
    fs::remove(checkpoint);  // the last resume's
    const pid_t pid = start({path(input), "--backend", GetParam(), "-o", output, "--force", "-q"});
    wait_for_file(checkpoint);
    std::this_thread::sleep_for(delay);
    kill(pid, signal);
    return finish(pid);
  }

  RunResult resume(const std::string& input, const std::string& output,
                   const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{path(input), "--backend", GetParam(), "-o", output, "--resume"};
    args.insert(args.end(), extra.begin(), extra.end());
    return sim(args);
  }
};

// SIGTERM, SIGINT and SIGUSR1 finish the current sweeps, write a checkpoint and exit 75;
// resuming gives a file whose every dataset equals the uninterrupted run's byte for byte.
TEST_P(CheckpointCli, SignalThenResumeIsByteIdentical) {
  if (!backend_available()) GTEST_SKIP() << "no GPU";
  for (const char* input :
       {kCheckpointedIsing, kCheckpointedPhi4, kCheckpointedClusters, kCheckpointedTempering}) {
    std::ofstream(path("in.toml")) << input;
    reference("in.toml", "reference.h5");
    const std::vector<int> signals = input == kCheckpointedIsing
                                         ? std::vector<int>{SIGTERM, SIGINT, SIGUSR1}
                                         : std::vector<int>{SIGTERM};
    for (int signal : signals) {
      const RunResult stopped =
          interrupt("in.toml", "out.h5", signal, std::chrono::milliseconds(0));
      ASSERT_EQ(stopped.exit_code, 75) << "signal " << signal << "\n" << stopped;
      EXPECT_NE(stopped.err.find("--resume"), std::string::npos) << stopped;
      EXPECT_TRUE(fs::exists(path("out.h5.checkpoint")));
      const RunResult resumed = resume("in.toml", "out.h5");
      ASSERT_EQ(resumed.exit_code, 0) << resumed;
      EXPECT_NE(resumed.err.find("resuming at sweep"), std::string::npos) << resumed;
      expect_same_datasets(path("reference.h5"), path("out.h5"));
    }
  }
}

// kill -9 at random moments: resuming from the last checkpoint still gives the same file.
TEST_P(CheckpointCli, KillNineAtRandomMomentsThenResume) {
  if (!backend_available()) GTEST_SKIP() << "no GPU";
  std::ofstream(path("in.toml")) << kCheckpointedIsing;
  reference("in.toml", "reference.h5");
  std::mt19937 random(20261121);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const auto delay = std::chrono::milliseconds(random() % 400);
    const RunResult killed = interrupt("in.toml", "out.h5", SIGKILL, delay);
    if (killed.exit_code == 0) continue;  // it finished first: nothing to resume
    ASSERT_EQ(killed.exit_code, -SIGKILL) << killed;
    const RunResult resumed = resume("in.toml", "out.h5");
    ASSERT_EQ(resumed.exit_code, 0) << "after kill -9 at " << delay.count() << " ms\n" << resumed;
    expect_same_datasets(path("reference.h5"), path("out.h5"));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CheckpointCli, testing::Values("cpu", "cuda"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// run.walltime stops the run (checkpoint, exit 75) while there is still time for a checkpoint
// (at least 30 s before it; a shorter walltime is refused, see input_limits_test.cpp):
// with 31 s, a run far too long to finish stops after about a second. Resuming without the
// walltime, with as many measurements as reach past the stop, finishes the same chain as a
// straight run of that length.
TEST_F(Cli, WalltimeStopsWithACheckpoint) {
  std::ofstream(path("in.toml")) << kCheckpointedIsing;
  const RunResult stopped = sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--set",
                                 "run.walltime=00:00:31", "--set", "run.measurements=1000000000"});
  ASSERT_EQ(stopped.exit_code, 75) << stopped;
  EXPECT_NE(stopped.err.find("walltime"), std::string::npos) << stopped;
  const size_t at = stopped.err.find("after sweep ");
  ASSERT_NE(at, std::string::npos) << stopped;
  const long long stop = std::stoll(stopped.err.substr(at + 12));
  // kCheckpointedIsing: 1000 thermalization sweeps, a measurement every 2.
  const std::string measurements =
      "run.measurements=" + std::to_string(std::max(0LL, (stop - 1000 + 1) / 2) + 50);
  const RunResult resumed =
      sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume", "--set", measurements});
  ASSERT_EQ(resumed.exit_code, 0) << resumed;
  ASSERT_EQ(
      sim({path("in.toml"), "--backend", "cpu", "-o", "reference.h5", "-q", "--set", measurements})
          .exit_code,
      0);
  expect_same_datasets(path("reference.h5"), path("out.h5"));
}

/// The progress lines ("sim: progress ...") in what a run printed on stderr.
std::vector<std::string> progress_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("sim: progress ", 0) == 0) lines.push_back(line);
  }
  return lines;
}

// A batch job's log (stderr not a terminal) gets a whole progress line every
// run.progress_minutes: the time, the phase, sweeps done of the total, rate, ETA and the last
// checkpoint. --quiet prints none.
TEST_F(Cli, BatchLogShowsProgressLines) {
  std::ofstream(path("in.toml")) << kCheckpointedIsing;
  const RunResult r = sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--set",
                           "run.progress_minutes=0.0003"});  // 18 ms
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::vector<std::string> lines = progress_lines(r.err);
  ASSERT_GE(lines.size(), 2u) << r;
  const std::regex format(
      R"(sim: progress \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (thermalizing|measuring) \d+/7000 )"
      R"(sweeps \(\d+\.\d %\), [0-9.e+]+ sweeps/s, ETA \d+:\d\d:\d\d, )"
      R"((no checkpoint yet|last checkpoint at sweep \d+))");
  for (const std::string& line : lines) EXPECT_TRUE(std::regex_match(line, format)) << line;
  EXPECT_NE(lines.back().find("last checkpoint at sweep"), std::string::npos) << r;
  const RunResult quiet =
      sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--force", "-q", "--set",
           "run.progress_minutes=0.0003", "--set", "run.measurements=200"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet;
  EXPECT_TRUE(progress_lines(quiet.err).empty()) << quiet;
}

// SIGUSR2 asks for a progress line at once, even with run.progress_minutes = 0, and does not
// stop the run.
TEST_F(Cli, SigUsr2PrintsAProgressLine) {
  std::ofstream(path("in.toml")) << kCheckpointedIsing;
  const pid_t pid = start({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--set",
                           "run.progress_minutes=0", "--set", "run.measurements=6000"});
  wait_for_file(path("out.h5.checkpoint"));
  kill(pid, SIGUSR2);
  const RunResult r = finish(pid);
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::vector<std::string> lines = progress_lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r;
  EXPECT_NE(lines[0].find("/13000 sweeps"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("last checkpoint at sweep"), std::string::npos) << lines[0];
}

// Slurm's job end time counts as a walltime, and run.checkpoint_minutes checkpoints by the
// clock: killed after such a checkpoint, the run resumes to the same file.
TEST_F(Cli, SlurmEndTimeAndCheckpointMinutes) {
  std::ofstream(path("in.toml")) << kCheckpointedIsing;
  ASSERT_EQ(sim({path("in.toml"), "--backend", "cpu", "-o", "reference.h5", "-q"}).exit_code, 0);
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  setenv("SLURM_JOB_END_TIME", std::to_string(now + 25).c_str(), 1);
  const RunResult stopped = sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5"});
  unsetenv("SLURM_JOB_END_TIME");
  ASSERT_EQ(stopped.exit_code, 75) << stopped;
  EXPECT_NE(stopped.err.find("walltime"), std::string::npos) << stopped;

  // Checkpoints every 3 ms of wall-clock time only (no run.checkpoint_every): kill -9 after
  // the first, then resume.
  fs::remove(path("out.h5.checkpoint"));
  const pid_t pid =
      start({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--force", "-q", "--set",
             "run.checkpoint_every=0", "--set", "run.checkpoint_minutes=0.00005"});
  wait_for_file(path("out.h5.checkpoint"));
  kill(pid, SIGKILL);
  const RunResult killed = finish(pid);
  ASSERT_EQ(killed.exit_code, -SIGKILL) << killed;
  const RunResult resumed =
      sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume", "--set",
           "run.checkpoint_every=0", "--set", "run.checkpoint_minutes=0.00005"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed;
  expect_same_datasets(path("reference.h5"), path("out.h5"));
}

// A resume that would change the chain is refused (exit 2, the differing keys named, the
// output untouched); more measurements are allowed and continue the same chain.
TEST_F(Cli, ResumeRefusesAnotherChainAndAllowsMoreMeasurements) {
  const std::string input =
      "[lattice]\ndims = [16, 16]\n[model]\nkind = \"ising\"\nbeta = 0.4\n"
      "[run]\nthermalization = 100\nmeasurements = 200\nseed = 3\ncheckpoint_every = 50\n";
  std::ofstream(path("in.toml")) << input;
  const RunResult none = sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume"});
  EXPECT_EQ(none.exit_code, 2) << none;
  EXPECT_NE(none.err.find("checkpoint"), std::string::npos) << none;
  ASSERT_EQ(sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "-q"}).exit_code, 0);
  const auto before = dataset_bytes(path("out.h5"));
  for (const auto& [change, key] : std::vector<std::pair<std::string, std::string>>{
           {"model.beta=0.41", "model.beta"},
           {"run.seed=4", "run.seed"},
           {"lattice.dims=[16,18]", "lattice.dims"},
           {"run.thermalization=120", "run.thermalization"}}) {
    const RunResult r =
        sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume", "--set", change});
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find(key), std::string::npos) << r;
  }
  const RunResult fewer = sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume",
                               "--set", "run.measurements=100"});
  EXPECT_EQ(fewer.exit_code, 2) << fewer;
  EXPECT_NE(fewer.err.find("run.measurements"), std::string::npos) << fewer;
  EXPECT_EQ(dataset_bytes(path("out.h5")), before);

  // 200 more measurements continue the chain: the same as a run of 400 from the start.
  const RunResult more = sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume",
                              "--set", "run.measurements=400"});
  ASSERT_EQ(more.exit_code, 0) << more;
  ASSERT_EQ(sim({path("in.toml"), "--backend", "cpu", "-o", "long.h5", "--set",
                 "run.measurements=400", "-q"})
                .exit_code,
            0);
  const H5Id extended = open_file(path("out.h5")), straight = open_file(path("long.h5"));
  for (const char* name : {"/observables/energy", "/observables/magnetization"})
    EXPECT_EQ(read_doubles(extended.get(), name), read_doubles(straight.get(), name)) << name;
  EXPECT_EQ(read_int64s(extended.get(), "/observables/sweep"),
            read_int64s(straight.get(), "/observables/sweep"));
  EXPECT_NE(string_attribute(extended.get(), "resumed").find("resumed on cpu"), std::string::npos);
}

// A full disk (here a file-size limit, ulimit -f) while writing: exit 3 with the cause, the
// last checkpoint intact; sim --recover makes the output readable up to its committed
// measurements, and --resume (once there is room) still finishes the same chain.
TEST_F(Cli, DiskFullKeepsTheCheckpointAndRecovers) {
  std::ofstream(path("in.toml")) << kCheckpointedIsing;
  ASSERT_EQ(sim({path("in.toml"), "--backend", "cpu", "-o", "reference.h5", "-q"}).exit_code, 0);
  const RunResult full = finish(start({"-c", "ulimit -f 600 && exec \"$0\" \"$@\"", sim_exe(),
                                       path("in.toml"), "--backend", "cpu", "-o", "out.h5", "-q"},
                                      "/bin/sh"));
  ASSERT_EQ(full.exit_code, 3) << full;
  EXPECT_NE(full.err.find("File too large"), std::string::npos) << full;
  const std::string checkpoint = read_bytes(path("out.h5.checkpoint"));
  EXPECT_FALSE(checkpoint.empty());  // the one before the failure; --resume reads it below

  fs::copy_file(path("out.h5"), path("recovered.h5"));
  const RunResult recovered = sim({"--recover", path("recovered.h5")});
  ASSERT_EQ(recovered.exit_code, 0) << recovered;
  EXPECT_NE(recovered.err.find("repaired"), std::string::npos) << recovered;
  {
    const H5Id file = open_file(path("recovered.h5"));
    const int64_t committed =
        int64_attribute(open_group(file.get(), "observables").get(), "committed_length");
    const std::vector<double> energy = read_doubles(file.get(), "/observables/energy");
    EXPECT_EQ(static_cast<int64_t>(energy.size()), committed);
    const H5Id reference = open_file(path("reference.h5"));
    const std::vector<double> all = read_doubles(reference.get(), "/observables/energy");
    EXPECT_EQ(energy, std::vector<double>(all.begin(), all.begin() + committed));
  }
  const RunResult resumed = sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed;
  expect_same_datasets(path("reference.h5"), path("out.h5"));
}

// Hostile input files end to end: every mutant either runs (kept tiny by the overrides) or
// exits 2 with "sim: error:" and writes no output file; never a crash or another code.
TEST_F(Cli, HostileInputFilesExitTwoWithoutOutput) {
  const std::vector<std::string> seeds = test::input_corpus(source_dir());
  std::mt19937_64 random(0xBAD);
  int refused = 0;
  for (int i = 0; i < 150; ++i) {
    std::string text = seeds[random() % seeds.size()];
    for (int m = 0, n = 1 + static_cast<int>(random() % 3); m < n; ++m)
      text = test::mutate(text, random);
    std::ofstream(path("mutant.toml"), std::ios::binary) << text;
    const RunResult r =
        sim({path("mutant.toml"), "--backend", "cpu", "-o", "mutant.h5", "--force", "-q", "--set",
             "run.measurements=0", "--set", "run.thermalization=0", "--set", "run.replicas=1"});
    if (r.exit_code == 2) {
      ++refused;
      EXPECT_NE(r.err.find("sim: error:"), std::string::npos) << "mutant " << i << "\n" << r;
      EXPECT_FALSE(fs::exists(path("mutant.h5"))) << "mutant " << i;
    } else {
      EXPECT_EQ(r.exit_code, 0) << "mutant " << i << "\n" << r << "\n--- input ---\n" << text;
    }
    fs::remove(path("mutant.h5"));
  }
  EXPECT_GT(refused, 75);
}

// sim bench: without a GPU it says so (exit 2); with one, a small run prints the table and
// writes every kernel's figures as JSON.
TEST_F(Cli, BenchTimesEveryKernelOrSaysThereIsNoGpu) {
  std::string reason;
  const bool gpu = cuda_device_count(reason) > 0;
  // A kernel the model does not have is bad input on any machine.
  const RunResult unknown = sim({"bench", "--model", "potts", "--kernel", "overrelaxation"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown;
  EXPECT_NE(unknown.err.find("--kernel \"overrelaxation\""), std::string::npos) << unknown;
  EXPECT_NE(unknown.err.find("\"metropolis\", \"heatbath\""), std::string::npos) << unknown;
  const RunResult r = sim({"bench", "--model", "phi4", "--dims", "32", "32", "16", "--cpu-dims",
                           "8", "8", "8", "--repeats", "2", "--json", "bench.json"});
  if (gpu) {  // one kernel in one precision
    const RunResult one = sim({"bench", "--model", "phi4", "--kernel", "overrelaxation",
                               "--precision", "float", "--dims", "16", "16", "16", "--cpu-dims",
                               "8", "8", "8", "--repeats", "1", "--json", "one.json"});
    ASSERT_EQ(one.exit_code, 0) << one;
    const std::string json = read_bytes(path("one.json"));
    EXPECT_NE(json.find("\"kernel\": \"overrelaxation\""), std::string::npos) << json;
    EXPECT_EQ(json.find("\"kernel\": \"metropolis\""), std::string::npos) << json;
    EXPECT_EQ(json.find("double"), std::string::npos) << json;
  }
  if (!gpu) {
    if (test::gpu_required()) FAIL() << "SIM_REQUIRE_GPU=1 but " << reason;
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find("GPU"), std::string::npos) << r;
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.out.find("copy bandwidth"), std::string::npos) << r;
  const std::string json = read_bytes(path("bench.json"));
  for (const char* kernel : {"metropolis", "overrelaxation", "langevin", "mala"})
    EXPECT_NE(json.find(std::string("\"kernel\": \"") + kernel), std::string::npos) << json;
  EXPECT_NE(json.find("\"site_updates_per_ns\""), std::string::npos);
  const RunResult bad = sim({"bench", "--dims", "33", "32"});
  EXPECT_EQ(bad.exit_code, 2) << bad;
}

// A damaged checkpoint is refused with the cause, never half-read.
TEST_F(Cli, DamagedCheckpointIsRefused) {
  std::ofstream(path("in.toml"))
      << "[lattice]\ndims = [16, 16]\n[model]\nkind = \"ising\"\nbeta = 0.4\n"
         "[run]\nthermalization = 10\nmeasurements = 20\nseed = 3\ncheckpoint_every = 5\n";
  ASSERT_EQ(sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "-q"}).exit_code, 0);
  const std::string checkpoint = path("out.h5.checkpoint");
  std::string bytes = read_bytes(checkpoint);
  ASSERT_GT(bytes.size(), 100u);
  bytes[bytes.size() / 2] ^= 0x5A;
  std::ofstream(checkpoint, std::ios::binary) << bytes;
  RunResult r = sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("checksum"), std::string::npos) << r;
  std::ofstream(checkpoint, std::ios::binary) << bytes.substr(0, bytes.size() / 3);
  r = sim({path("in.toml"), "--backend", "cpu", "-o", "out.h5", "--resume"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r;
}

}  // namespace
TEST_F(Cli, PottsSnapshotsHoldEveryStateAsUnsignedBytes) {
  const RunResult r = sim({default_input(),
                           "--set",
                           "model.kind=potts",
                           "--set",
                           "model.q=200",
                           "--set",
                           "model.beta=0.1",
                           "--set",
                           "lattice.dims=[32,32]",
                           "--set",
                           "run.thermalization=5",
                           "--set",
                           "run.measurements=3",
                           "--set",
                           "output.snapshot_every=0",
                           "--backend",
                           "cpu",
                           "-o",
                           "potts.h5",
                           "-q"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const H5Id file = open_file(path("potts.h5"));
  EXPECT_EQ(int64_attribute(file.get(), "q"), 200);
  EXPECT_EQ(dataset_info(file.get(), "/snapshots/configuration").sign, H5T_SGN_NONE);
  const auto states =
      read_dataset<uint8_t>(file.get(), "/snapshots/configuration", H5T_NATIVE_UINT8);
  ASSERT_EQ(states.size(), 32u * 32u);
  int high = 0;
  for (uint8_t s : states) {
    EXPECT_LT(s, 200);
    high += s >= 128;
  }
  EXPECT_GT(high, 100);  // near-uniform states at beta = 0.1: about 36 % are >= 128
}

// Continuous models: vector or scalar float snapshots, model attributes, the tuned step.
TEST_F(Cli, XyRunWritesUnitVectorSnapshotsHelicityAndTunedStep) {
  std::ofstream(path("xy.toml")) << "[lattice]\ndims = [16, 12]\n"
                                    "[model]\nkind = \"on\"\nn = 2\nbeta = 1.0\n"
                                    "precision = \"float\"\n"
                                    "[update]\nsequence = [\"metropolis\", \"overrelaxation\"]\n"
                                    "[run]\nthermalization = 100\nmeasurements = 20\nseed = 5\n";
  const RunResult r = sim({path("xy.toml"), "--backend", "cpu", "-o", "xy.h5"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.err.find("Metropolis step"), std::string::npos) << r;
  const H5Id file = open_file(path("xy.h5"));
  EXPECT_EQ(string_attribute(file.get(), "model"), "on");
  EXPECT_EQ(int64_attribute(file.get(), "n"), 2);
  EXPECT_EQ(string_attribute(file.get(), "precision"), "float");
  EXPECT_EQ(string_attribute(file.get(), "algorithm"), "metropolis, overrelaxation");
  const double step =
      numeric_attribute<double>(file.get(), "metropolis_step", H5T_NATIVE_DOUBLE).at(0);
  const double acceptance =
      numeric_attribute<double>(file.get(), "metropolis_acceptance", H5T_NATIVE_DOUBLE).at(0);
  EXPECT_GT(step, 0.0);
  EXPECT_NEAR(acceptance, 0.5, 0.2);  // tuned towards the default target
  const DatasetInfo info = dataset_info(file.get(), "/snapshots/configuration");
  EXPECT_EQ(info.type_class, H5T_FLOAT);
  EXPECT_EQ(info.type_size, 4u);
  EXPECT_EQ(info.shape, (std::vector<hsize_t>{1, 16, 12, 2}));
  const auto spins = read_dataset<float>(file.get(), "/snapshots/configuration", H5T_NATIVE_FLOAT);
  double mx = 0, my = 0;
  for (size_t i = 0; i < spins.size(); i += 2) {
    EXPECT_NEAR(std::hypot(spins[i], spins[i + 1]), 1.0, 1e-6) << "site " << i / 2;
    mx += spins[i];
    my += spins[i + 1];
  }
  // The final frame is the configuration of the last measurement.
  const auto m0 = read_doubles(file.get(), "/observables/magnetization_0");
  const auto m1 = read_doubles(file.get(), "/observables/magnetization_1");
  ASSERT_EQ(m0.size(), 20u);
  EXPECT_NEAR(m0.back(), mx / 192, 1e-6);
  EXPECT_NEAR(m1.back(), my / 192, 1e-6);
  EXPECT_EQ(dataset_info(file.get(), "/observables/helicity_1").shape, (std::vector<hsize_t>{20}));
}

TEST_F(Cli, Phi4RunWritesKappaLambdaAndScalarSnapshots) {
  const RunResult r =
      sim({default_input(), "--set", "model.kind=phi4", "--set", "model.kappa=0.2", "--set",
           "model.lambda=0.5", "--set", "model.h=0.1", "--backend", "cpu", "-o", "bad.h5", "-q"});
  EXPECT_EQ(r.exit_code, 2) << r;  // phi^4 has no beta
  EXPECT_NE(r.err.find("model.beta"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(path("bad.h5")));

  std::ofstream(path("phi4.toml")) << "[lattice]\ndims = [8, 6, 4]\n"
                                      "[model]\nkind = \"phi4\"\nkappa = 0.15\nlambda = 0.5\n"
                                      "h = 0.1\n[update]\nalgorithm = \"metropolis\"\nhits = 3\n"
                                      "[run]\nthermalization = 30\nmeasurements = 10\n"
                                      "seed = 4\nbackend = \"cpu\"\n";
  const RunResult ok = sim({path("phi4.toml"), "-o", "phi4.h5", "-q"});
  ASSERT_EQ(ok.exit_code, 0) << ok;
  const H5Id file = open_file(path("phi4.h5"));
  EXPECT_EQ(numeric_attribute<double>(file.get(), "kappa", H5T_NATIVE_DOUBLE).at(0), 0.15);
  EXPECT_EQ(numeric_attribute<double>(file.get(), "lambda", H5T_NATIVE_DOUBLE).at(0), 0.5);
  EXPECT_EQ(int64_attribute(file.get(), "hits"), 3);
  EXPECT_EQ(H5Aexists(file.get(), "beta"), 0);
  const DatasetInfo info = dataset_info(file.get(), "/snapshots/configuration");
  EXPECT_EQ(info.type_class, H5T_FLOAT);
  EXPECT_EQ(info.type_size, 8u);
  EXPECT_EQ(info.shape, (std::vector<hsize_t>{1, 8, 6, 4}));
  const auto phi = read_doubles(file.get(), "/snapshots/configuration");
  double sum = 0;
  for (double x : phi) sum += x;
  EXPECT_NEAR(read_doubles(file.get(), "/observables/phi").back(), sum / 192, 1e-12);
}

// Fourier-accelerated Langevin end to end: the step, shift and MALA acceptance in the file and
// the summary line; a diverging unadjusted run fails with the cause instead of writing NaNs.
TEST_F(Cli, Phi4MalaRunRecordsLangevinParameters) {
  std::ofstream(path("mala.toml")) << "[lattice]\ndims = [8, 8]\n"
                                      "[model]\nkind = \"phi4\"\nkappa = 0.25\nlambda = 0.5\n"
                                      "[update]\nsequence = [\"mala\", \"overrelaxation\"]\n"
                                      "langevin_step = 0.3\n"
                                      "[run]\nthermalization = 200\nmeasurements = 50\n"
                                      "seed = 4\nbackend = \"cpu\"\n";
  const RunResult ok = sim({path("mala.toml"), "-o", "mala.h5"});
  ASSERT_EQ(ok.exit_code, 0) << ok;
  EXPECT_NE(ok.err.find("MALA acceptance"), std::string::npos) << ok;
  const H5Id file = open_file(path("mala.h5"));
  EXPECT_EQ(string_attribute(file.get(), "algorithm"), "mala, overrelaxation");
  const double step =
      numeric_attribute<double>(file.get(), "langevin_step", H5T_NATIVE_DOUBLE).at(0);
  const double shift =
      numeric_attribute<double>(file.get(), "langevin_shift", H5T_NATIVE_DOUBLE).at(0);
  const double acceptance =
      numeric_attribute<double>(file.get(), "mala_acceptance", H5T_NATIVE_DOUBLE).at(0);
  EXPECT_GT(step, 0.0);
  EXPECT_NE(step, 0.3);   // tuned (update.tune defaults to true)
  EXPECT_GT(shift, 0.0);  // lambda (12 <phi^2> - 4) > 0 at these couplings
  EXPECT_NEAR(acceptance, 0.5, 0.25);
  EXPECT_EQ(H5Aexists(file.get(), "metropolis_step"), 0);  // no Metropolis pass

  std::ofstream(path("ula.toml")) << "[lattice]\ndims = [8, 8]\n"
                                     "[model]\nkind = \"phi4\"\nkappa = 0.25\nlambda = 0.5\n"
                                     "[update]\nalgorithm = \"langevin\"\nlangevin_step = 5.0\n"
                                     "[run]\nthermalization = 20\nmeasurements = 100\n"
                                     "seed = 4\nbackend = \"cpu\"\n";
  const RunResult diverged = sim({path("ula.toml"), "-o", "ula.h5"});
  EXPECT_NE(diverged.exit_code, 0) << diverged;
  EXPECT_NE(diverged.exit_code, 2) << diverged;  // not an input error: a runtime failure
  EXPECT_NE(diverged.err.find("diverged"), std::string::npos) << diverged;
}

TEST_F(Cli, ContinuousModelInputErrorsExitTwo) {
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--set", "model.kind=on"},  // model.n missing
           {"--set", "model.kind=on", "--set", "model.n=3", "--set",
            "update.algorithm=overrelaxation"},
           {"--set", "update.hits=4"},  // Ising has no continuous Metropolis
           {"--set", "model.kind=on", "--set", "model.n=5"}}) {
    std::vector<std::string> args{default_input(), "-o", "x.h5"};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = sim(args);
    EXPECT_EQ(r.exit_code, 2) << r;
    EXPECT_NE(r.err.find("sim: error:"), std::string::npos) << r;
    EXPECT_FALSE(fs::exists(path("x.h5")));
  }
}

TEST_F(Cli, StructureFactorIsWrittenToCorrelators) {
  const RunResult r = sim(small_run({"--set", "measure.structure_factor=true", "--set",
                                     "measure.structure_factor_every=4", "--set", "run.replicas=2",
                                     "--backend", "cpu", "-o", "sk.h5"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  const H5Id file = open_file(path("sk.h5"));
  EXPECT_EQ(dataset_info(file.get(), "/correlators/structure_factor/S").shape,
            (std::vector<hsize_t>{16, 9}));
  EXPECT_EQ(dataset_info(file.get(), "/correlators/structure_factor/G").shape,
            (std::vector<hsize_t>{16, 16}));
  // 40 measurements, every 4th: 10 rows of 2 replicas, at the sweeps of those measurements.
  EXPECT_EQ(dataset_info(file.get(), "/correlators/structure_factor/series/xi2").shape,
            (std::vector<hsize_t>{10, 2}));
  const auto sweeps = read_int64s(file.get(), "/correlators/structure_factor/series/sweep");
  const auto all = read_int64s(file.get(), "/observables/sweep");
  ASSERT_EQ(sweeps.size(), 10u);
  for (size_t j = 0; j < sweeps.size(); ++j) EXPECT_EQ(sweeps[j], all[4 * j]);
  const H5Id group = open_group(file.get(), "/correlators/structure_factor");
  EXPECT_EQ(int64_attribute(group.get(), "samples"), 20);
  // G(0) = <s^2> = 1 for Ising spins.
  EXPECT_NEAR(read_doubles(file.get(), "/correlators/structure_factor/G").at(0), 1.0, 1e-12);

  const RunResult slices =
      sim(small_run({"--set", "measure.timeslice=true", "--set", "measure.timeslice_momenta=3",
                     "--set", "lattice.dims=[8,8,12]", "--backend", "cpu", "-o", "ts.h5", "-q"}));
  ASSERT_EQ(slices.exit_code, 0) << slices;
  const H5Id ts = open_file(path("ts.h5"));
  // 1 + 3 momenta along each of the 2 spatial axes; T = 12.
  EXPECT_EQ(dataset_info(ts.get(), "/correlators/timeslice/C").shape,
            (std::vector<hsize_t>{40, 12, 7}));
  EXPECT_EQ(read_int64s(ts.get(), "/correlators/timeslice/momenta"),
            (std::vector<int64_t>{0, 0, 1, 0, 2, 0, 3, 0, 0, 1, 0, 2, 0, 3}));
  EXPECT_EQ(H5Lexists(ts.get(), "/correlators/structure_factor", H5P_DEFAULT), 0);

  const RunResult off = sim(small_run({"--backend", "cpu", "-o", "plain.h5", "-q"}));
  ASSERT_EQ(off.exit_code, 0) << off;
  EXPECT_EQ(H5Lexists(open_file(path("plain.h5")).get(), "correlators", H5P_DEFAULT), 0);
}

}  // namespace lattica
