// Input parsing and validation: every rejection path of sim/config/ with its message,
// command-line overrides, defaults, the resolved configuration written to the output, and the
// README's input reference against the schema.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/engine/memory.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace lattica {
namespace {

// A minimal valid input. Line numbers matter: messages are checked for "in.toml:LINE:".
//   1 [lattice]   2 dims   4 [model]   5 kind   6 beta   8 [run]   9 thermalization
//   10 measurements   11 seed
const std::string kMinimal =
    "[lattice]\n"
    "dims = [8, 8]\n"
    "\n"
    "[model]\n"
    "kind = \"ising\"\n"
    "beta = 0.4\n"
    "\n"
    "[run]\n"
    "thermalization = 10\n"
    "measurements = 20\n"
    "seed = 1\n";

/// kMinimal with the line that sets `key` (e.g. "beta") replaced by `line` ("" deletes it,
/// keeping the line count so later line numbers stay put).
std::string with_line(const std::string& key, const std::string& line) {
  std::string text = kMinimal;
  const size_t at = text.find("\n" + key + " = ");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no key " << key << " in the minimal input";
    return text;
  }
  const size_t end = text.find('\n', at + 1);
  text.replace(at + 1, end - at - 1, line);
  return text;
}

/// kMinimal with `line` inserted right after the header `[section]` (which must be in it).
std::string with_key_in(const std::string& section, const std::string& line) {
  std::string text = kMinimal;
  const std::string header = "[" + section + "]\n";
  const size_t at = text.find(header);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no section " << section << " in the minimal input";
    return text;
  }
  text.insert(at + header.size(), line + "\n");
  return text;
}

/// kMinimal followed by a new section holding one line (at lines 13 and 14).
std::string with_section(const std::string& section, const std::string& line) {
  return kMinimal + "\n[" + section + "]\n" + line + "\n";
}

/// The messages of the ConfigError that parsing `text` must throw.
std::vector<std::string> errors_of(const std::string& text, const ConfigOverrides& overrides = {}) {
  try {
    parse_config(text, "in.toml", overrides);
  } catch (const ConfigError& e) {
    if (e.messages().empty()) ADD_FAILURE() << "ConfigError with no messages";
    return e.messages();
  }
  ADD_FAILURE() << "input accepted, expected a ConfigError:\n" << text;
  return {};
}

std::string without_spaces(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch != ' ') out += ch;
  }
  return out;
}

/// Passes when one message contains every part. Spaces are ignored on both sides, so a part
/// "lattice.dims = [63, 64]" matches toml++'s rendering "lattice.dims = [ 63, 64 ]".
testing::AssertionResult has_message(const std::vector<std::string>& messages,
                                     std::initializer_list<std::string> parts) {
  for (const auto& m : messages) {
    bool all = true;
    for (const auto& p : parts)
      all = all && without_spaces(m).find(without_spaces(p)) != std::string::npos;
    if (all) return testing::AssertionSuccess();
  }
  testing::AssertionResult result = testing::AssertionFailure() << "no message contains all of:";
  for (const auto& p : parts) result << " [" << p << "]";
  result << "\nmessages (" << messages.size() << "):";
  for (const auto& m : messages) result << "\n  " << m;
  return result;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// --- accepted input and defaults ------------------------------------------------------------

TEST(Config, MinimalInputGetsDefaults) {
  const Config c = parse_config(kMinimal, "runs/critical.toml");
  EXPECT_EQ(c.dims, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(c.volume(), 64);
  EXPECT_EQ(c.model_kind, "ising");
  EXPECT_EQ(c.beta, 0.4);
  EXPECT_EQ(c.thermalization, 10);
  EXPECT_EQ(c.measurements, 20);
  EXPECT_EQ(c.seed, 1u);
  // Defaults.
  EXPECT_EQ(c.field, 0.0);
  EXPECT_EQ(c.algorithm, "metropolis");
  EXPECT_EQ(c.measure_every, 1);
  EXPECT_EQ(c.backend, "auto");
  EXPECT_EQ(c.start, "hot");
  EXPECT_EQ(c.threads, 0);
  EXPECT_EQ(c.device, 0);
  EXPECT_EQ(c.snapshot_every, 0);
  EXPECT_EQ(c.flush_every, 1000);
  EXPECT_EQ(c.output_path, "critical.h5");  // the input's stem, in the working directory
  EXPECT_EQ(c.input_path, "runs/critical.toml");
  EXPECT_EQ(c.input_text, kMinimal);
}

TEST(Config, DefaultOutputPathFromSourceName) {
  EXPECT_EQ(parse_config(kMinimal, "lattice.toml").output_path, "lattice.h5");
  EXPECT_EQ(parse_config(kMinimal, "a.b/run.v2.toml").output_path, "run.v2.h5");
  EXPECT_EQ(parse_config(kMinimal, "noext").output_path, "noext.h5");
}

TEST(Config, EveryKeyIsRead) {
  const std::string text =
      "[lattice]\ndims = [4, 6, 8]\n"
      "[model]\nkind = \"ising\"\nbeta = 0.25\nh = -0.5\n"
      "[update]\nalgorithm = \"heatbath\"\n"
      "[run]\nthermalization = 0\nmeasurements = 3\nmeasure_every = 4\nseed = 99\n"
      "backend = \"cpu\"\nstart = \"cold\"\nthreads = 2\ndevice = 1\n"
      "[output]\npath = \"out dir/x.h5\"\nsnapshot_every = 6\nflush_every = 7\n";
  const Config c = parse_config(text, "in.toml");
  EXPECT_EQ(c.dims, (std::vector<int64_t>{4, 6, 8}));
  EXPECT_EQ(c.volume(), 192);
  EXPECT_EQ(c.beta, 0.25);
  EXPECT_EQ(c.field, -0.5);
  EXPECT_EQ(c.algorithm, "heatbath");
  EXPECT_EQ(c.thermalization, 0);
  EXPECT_EQ(c.measurements, 3);
  EXPECT_EQ(c.measure_every, 4);
  EXPECT_EQ(c.seed, 99u);
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_EQ(c.start, "cold");
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.device, 1);
  EXPECT_EQ(c.output_path, "out dir/x.h5");
  EXPECT_EQ(c.snapshot_every, 6);
  EXPECT_EQ(c.flush_every, 7);
}

TEST(Config, IntegerBetaAndBoundaryValuesAreAccepted) {
  EXPECT_EQ(parse_config(with_line("beta", "beta = 0"), "in.toml").beta, 0.0);
  EXPECT_EQ(parse_config(with_line("beta", "beta = 1"), "in.toml").beta, 1.0);
  EXPECT_EQ(parse_config(with_line("dims", "dims = [2, 2, 2, 2]"), "in.toml").volume(), 16);
  EXPECT_EQ(parse_config(with_line("seed", "seed = 0"), "in.toml").seed, 0u);
  EXPECT_EQ(parse_config(with_line("seed", "seed = 9223372036854775807"), "in.toml").seed,
            9223372036854775807u);
  EXPECT_EQ(parse_config(with_line("measurements", "measurements = 0"), "in.toml").measurements, 0);
  EXPECT_EQ(parse_config(with_key_in("run", "threads = 4096"), "in.toml").threads, 4096);
}

// --- syntax, sections and keys --------------------------------------------------------------

TEST(Config, InvalidTomlNamesFileAndLine) {
  const auto e = errors_of("[lattice]\ndims = [8, 8]\n[model]\nkind = ising\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(has_message(e, {"in.toml:4:", "invalid TOML"}));
}

TEST(Config, UnknownSectionIsRejectedWithPosition) {
  const auto e = errors_of(with_section("solver", "tolerance = 1"));
  EXPECT_TRUE(has_message(e, {"in.toml:13:", "unknown section 'solver'",
                              "known sections: lattice, model, update, run, measure, output"}));
}

TEST(Config, UnknownKeyIsRejectedWithPositionAndKnownKeys) {
  const auto e = errors_of(with_key_in("model", "temperature = 2.0"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(
      has_message(e, {"in.toml:5:1:", "unknown key 'model.temperature'",
                      "known keys in [model]: kind, q, n, beta, kappa, lambda, h, precision"}));
  EXPECT_TRUE(
      has_message(errors_of(with_key_in("run", "sweeps = 5")),
                  {"in.toml:9:1:", "'run.sweeps'", "thermalization", "measure_every", "device"}));
}

TEST(Config, SectionThatIsNotATableIsRejected) {
  const auto e = errors_of("run = 3\n" + kMinimal.substr(0, kMinimal.find("[run]")));
  EXPECT_TRUE(has_message(e, {"in.toml:1:", "'run' must be a table"}));
  // Its keys are then missing too, and every problem is reported.
  EXPECT_TRUE(has_message(e, {"run.seed is missing"}));
}

TEST(Config, EachRequiredKeyIsReported) {
  const struct {
    const char* line_key;
    const char* name;
  } required[] = {{"dims", "lattice.dims"},
                  {"kind", "model.kind"},
                  {"beta", "model.beta"},
                  {"thermalization", "run.thermalization"},
                  {"measurements", "run.measurements"},
                  {"seed", "run.seed"}};
  for (const auto& r : required) {
    SCOPED_TRACE(r.name);
    const auto e = errors_of(with_line(r.line_key, ""));
    ASSERT_EQ(e.size(), 1u);
    EXPECT_TRUE(has_message(e, {"in.toml: ", std::string(r.name) + " is missing", "required"}));
  }
}

TEST(Config, EmptyInputReportsEveryRequiredKey) {
  const auto e = errors_of("");
  EXPECT_EQ(e.size(), 6u);
  for (const char* name : {"lattice.dims", "model.kind", "model.beta", "run.thermalization",
                           "run.measurements", "run.seed"}) {
    EXPECT_TRUE(has_message(e, {std::string(name) + " is missing"}));
  }
}

// --- lattice.dims ---------------------------------------------------------------------------

TEST(Config, DimsWrongTypeIsRejected) {
  EXPECT_TRUE(
      has_message(errors_of(with_line("dims", "dims = 64")),
                  {"in.toml:2:8:", "lattice.dims = 64", "expected an array of 1 to 4 even"}));
  EXPECT_TRUE(has_message(errors_of(with_line("dims", "dims = \"64x64\"")),
                          {"in.toml:2:", "lattice.dims", "64x64", "expected an array"}));
}

TEST(Config, DimsWrongLengthIsRejected) {
  EXPECT_TRUE(
      has_message(errors_of(with_line("dims", "dims = [2, 2, 2, 2, 2]")),
                  {"in.toml:2:", "lattice.dims = [2, 2, 2, 2, 2]", "expected an array of 1 to 4"}));
  EXPECT_TRUE(
      has_message(errors_of(with_line("dims", "dims = []")), {"lattice.dims = []", "1 to 4"}));
  EXPECT_EQ(parse_config(with_line("dims", "dims = [64]"), "in.toml").dims,
            std::vector<int64_t>{64});  // a ring
}

TEST(Config, DimsNonIntegerElementIsRejected) {
  EXPECT_TRUE(
      has_message(errors_of(with_line("dims", "dims = [8, 8.0]")),
                  {"in.toml:2:", "lattice.dims = [8, 8.0]", "every size must be an integer"}));
  EXPECT_TRUE(has_message(errors_of(with_line("dims", "dims = [8, \"8\"]")),
                          {"lattice.dims", "every size must be an integer"}));
}

TEST(Config, DimsOddSizeIsRejected) {
  const auto e = errors_of(with_line("dims", "dims = [63, 64]"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(
      has_message(e, {"in.toml:2:8:", "lattice.dims = [63, 64]", "every size must be even"}));
}

TEST(Config, DimsTooSmallIsRejected) {
  for (const char* dims : {"[0, 8]", "[8, -2]", "[1, 8]"}) {
    SCOPED_TRACE(dims);
    EXPECT_TRUE(has_message(errors_of(with_line("dims", std::string("dims = ") + dims)),
                            {std::string("lattice.dims = ") + dims, "every size must be >= 2"}));
  }
}

TEST(Config, DimsBeyondTheRngSiteCountAreRejected) {
  // 2^20 * (2^20 + 2) sites: more than the 2^40 the Philox counter can name.
  const auto e = errors_of(with_line("dims", "dims = [1048576, 1048578]"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(has_message(e, {"lattice.dims = [1048576, 1048578]", "more than 2^40 sites"}));
}

// Exactly 2^40 sites is within the counter's range (sites 0 .. 2^40 - 1); such a lattice is
// still refused here, for host memory.
TEST(Config, DimsOfExactly2To40SitesAreWithinTheRngLimit) {
  const auto e = errors_of(with_line("dims", "dims = [1048576, 1048576]"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(has_message(e, {"lattice.dims = [1048576, 1048576]", "GiB of host memory"}));
}

// The memory estimate counts what each feature allocates: phi^4 with a Langevin pass and the
// structure factor needs its buffers on top of the plain Metropolis engine's.
TEST(Config, EngineMemoryEstimateCountsLangevinAndSpectralBuffers) {
  EngineSettings s;
  s.model = ModelKind::phi4;
  s.dims = {64, 64, 64};
  s.replicas = 2;
  const size_t sites = 64 * 64 * 64 * 2;
  const size_t plain = engine_bytes(s);
  EXPECT_GE(plain, sites * (2 * 8 + 1));
  s.sequence = {UpdateAlgorithm::metropolis, UpdateAlgorithm::mala};
  // The proposal, the force and the work field, their half spectra (8 bytes a site each).
  const size_t langevin = engine_bytes(s);
  EXPECT_GE(langevin, plain + sites * (8 + 16 + 16));
  s.structure_factor_every = 1;
  // The field, its half spectrum and the power sums (one component for phi^4).
  EXPECT_GE(engine_bytes(s), langevin + sites * (8 + 8 + 8));
  // A decomposed rank adds the distributed FFT's packed pieces (a half spectrum: 8 bytes a
  // site), a buffer for the columns where they do not fit the spectrum's, and where the boxes
  // are not slabs the slab and the moves' buffers; O(n) counts its components.
  EngineSettings one = s;
  one.replicas = 1;
  EXPECT_EQ(decomposed_fourier_bytes(one, 1000, true, true), size_t(1000 * 8));
  EXPECT_EQ(decomposed_fourier_bytes(one, 1000, true, false), size_t(1000 * 16));
  EXPECT_GT(decomposed_fourier_bytes(one, 1000, false, true),
            decomposed_fourier_bytes(one, 1000, true, true));
  // Several replicas are never one block of the lexicographic copy, and receive their pieces
  // in a buffer of their own.
  EXPECT_EQ(decomposed_fourier_bytes(s, 1000, true, true),
            decomposed_fourier_bytes(s, 1000, false, true));
  EXPECT_GE(decomposed_fourier_bytes(s, 1000, true, true), size_t(2000 * 16));
  // Even splits always fit; 9 rows over 2 ranks leave rank 1 four rows for half the modes.
  EXPECT_TRUE(slab_columns_fit({8, 8, 8}, 0, 2) && slab_columns_fit({8, 8, 8}, 1, 2));
  EXPECT_TRUE(slab_columns_fit({9, 8, 8}, 0, 2));
  EXPECT_FALSE(slab_columns_fit({9, 8, 8}, 1, 2));
  s.model = ModelKind::on;
  s.n = 3;
  EXPECT_GE(spectral_bytes(s), size_t(sites) * (3 * 8 + 3 * 8 + 8));
}

TEST(Config, DimsBeyondHostMemoryAreRejected) {
  // 2^38 sites need 2^39 bytes (512 GiB): more than any test machine has, less than 2^40 sites.
  const auto e = errors_of(with_line("dims", "dims = [524288, 524288]"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(has_message(e, {"lattice.dims = [524288, 524288]", "GiB of host memory"}));
}

// A decomposed run's ranks each hold their share: 4096 ranks of that lattice need about 128 MiB
// each. Launched 4096 to a machine (the launcher's local size), they need it all again there.
TEST(Config, DecomposedRunsNeedTheirShareOfHostMemoryPerRank) {
  const std::string input =
      with_line("dims", "dims = [524288, 524288]") + "[parallel]\ngrid = [4096, 1]\n";
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  EXPECT_EQ(parse_config(input, "in.toml").parallel_grid, (std::vector<int>{4096, 1}));
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4096", 1);
  const auto e = errors_of(input);
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(has_message(e, {"GiB of host memory",
                              "for each of 4096 of its 4096 ranks on this "
                              "machine"}));
}

// --- model ----------------------------------------------------------------------------------

TEST(Config, BetaNegativeIsRejected) {
  const auto e = errors_of(with_line("beta", "beta = -0.1"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(has_message(e, {"in.toml:6:8:", "model.beta = -0.1", "must be >= 0"}));
}

TEST(Config, BetaNotANumberIsRejected) {
  EXPECT_TRUE(has_message(errors_of(with_line("beta", "beta = \"hot\"")),
                          {"in.toml:6:", "model.beta", "hot", "expected a number"}));
  EXPECT_TRUE(has_message(errors_of(with_line("beta", "beta = true")),
                          {"model.beta", "expected a number"}));
}

TEST(Config, BetaNotFiniteIsRejected) {
  const struct {
    const char* written;
    const char* shown;
  } values[] = {{"nan", "nan"}, {"inf", "inf"}, {"+inf", "inf"}, {"-inf", "-inf"}};
  for (const auto& v : values) {
    SCOPED_TRACE(v.written);
    EXPECT_TRUE(has_message(
        errors_of(with_line("beta", std::string("beta = ") + v.written)),
        {"in.toml:6:", std::string("model.beta = ") + v.shown, "must be a finite number"}));
  }
}

TEST(Config, FieldMustBeANumber) {
  EXPECT_TRUE(has_message(errors_of(with_key_in("model", "h = \"up\"")),
                          {"in.toml:5:", "model.h", "up", "expected a number", "external field"}));
  EXPECT_TRUE(has_message(errors_of(with_key_in("model", "h = nan")), {"model.h = nan", "finite"}));
  EXPECT_EQ(parse_config(with_key_in("model", "h = -2.5"), "in.toml").field, -2.5);
}

TEST(Config, PottsNeedsQInRangeAndIsingRefusesIt) {
  const std::string potts = with_line("kind", "kind = \"potts\"");
  EXPECT_TRUE(has_message(errors_of(potts), {"model.q is missing", "number of Potts states"}));
  auto with_q = [&](const std::string& q) {
    std::string text = potts;
    text.insert(text.find("[model]\n") + 8, "q = " + q + "\n");
    return text;
  };
  const Config c = parse_config(with_q("3"), "in.toml");
  EXPECT_EQ(c.q, 3);
  EXPECT_NE(c.resolved_toml.find("q = 3"), std::string::npos);
  EXPECT_TRUE(has_message(errors_of(with_q("1")), {"model.q = 1", "between 2 and 256"}));
  EXPECT_TRUE(has_message(errors_of(with_q("257")), {"model.q = 257", "between 2 and 256"}));
  EXPECT_TRUE(
      has_message(errors_of(with_key_in("model", "q = 3")), {"model.q = 3", "only Potts models"}));
}

TEST(Config, OneDimensionalZeroFieldMetropolisIsAccepted) {
  // Refused while Metropolis accepted dE = 0 moves for certain (then not ergodic in 1D at h = 0:
  // tests/physics/ergodicity_test.cpp); accepted with probability 15/16 now.
  EXPECT_EQ(parse_config(with_line("dims", "dims = [64]"), "in.toml").sequence,
            std::vector<std::string>{"metropolis"});
}

TEST(Config, UnknownModelKindIsRejected) {
  const auto e = errors_of(with_line("kind", "kind = \"xy\""));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(
      has_message(e, {"in.toml:5:8:", "model.kind", "xy", "must be one of \"ising\", \"potts\""}));
  EXPECT_TRUE(has_message(errors_of(with_line("kind", "kind = 1")),
                          {"model.kind = 1", "expected a string"}));
}

// --- update, run, output --------------------------------------------------------------------

TEST(Config, UnknownAlgorithmIsRejected) {
  EXPECT_TRUE(has_message(
      errors_of(with_section("update", "algorithm = \"ising_wolf\"")),
      {"in.toml:14:", "update.algorithm", "ising_wolf", "\"metropolis\", \"heatbath\""}));
  // Pass names of other models are refused with the models that take them.
  EXPECT_TRUE(has_message(errors_of(with_section("update", "algorithm = \"overrelaxation\"")),
                          {"update.algorithm", "overrelaxation"}));
}

TEST(Config, ClusterPassesAndTheirKey) {
  const Config c = parse_config(
      with_section("update",
                   "sequence = [\"metropolis\", \"swendsen_wang\", \"wolff\"]\nwolff_clusters = 4"),
      "in.toml");
  const EngineSettings s = c.engine_settings();
  EXPECT_EQ(s.wolff_clusters, 4);
  ASSERT_EQ(s.sequence.size(), 3u);
  EXPECT_EQ(s.sequence[1], UpdateAlgorithm::swendsen_wang);
  EXPECT_EQ(s.sequence[2], UpdateAlgorithm::wolff);
  EXPECT_TRUE(has_message(
      errors_of(with_section("update", "sequence = [\"swendsen_wang\"]\nwolff_clusters = 4")),
      {"update.wolff_clusters", "only \"wolff\" passes take this key"}));
  EXPECT_TRUE(
      has_message(errors_of(with_section("update", "algorithm = \"wolff\"\nwolff_clusters = 0")),
                  {"update.wolff_clusters = 0"}));
  // Potts fields enter cluster moves by bonds to a ghost spin in state 0: h >= 0 only.
  const std::string potts =
      with_line("kind", "kind = \"potts\"\nq = 3\nh = -0.1") + "[update]\nalgorithm = \"wolff\"\n";
  EXPECT_TRUE(has_message(errors_of(potts), {"model.h", "-0.1", "h >= 0"}));
}

TEST(Config, UnknownBackendIsRejected) {
  EXPECT_TRUE(
      has_message(errors_of(with_key_in("run", "backend = \"gpu\"")),
                  {"in.toml:9:", "run.backend", "gpu", "one of \"auto\", \"cpu\", \"cuda\""}));
}

TEST(Config, UnknownStartIsRejected) {
  EXPECT_TRUE(has_message(errors_of(with_key_in("run", "start = \"warm\"")),
                          {"in.toml:9:", "run.start", "warm", "one of \"hot\", \"cold\""}));
}

TEST(Config, NegativeCountsAreRejected) {
  EXPECT_TRUE(has_message(errors_of(with_line("thermalization", "thermalization = -1")),
                          {"in.toml:9:", "run.thermalization = -1", "must be between 0 and"}));
  EXPECT_TRUE(has_message(errors_of(with_line("measurements", "measurements = -5")),
                          {"in.toml:10:", "run.measurements = -5", "must be between 0 and"}));
}

TEST(Config, CountsMustBeIntegers) {
  EXPECT_TRUE(has_message(errors_of(with_line("thermalization", "thermalization = 10.0")),
                          {"run.thermalization = 10.0", "expected an integer"}));
  EXPECT_TRUE(has_message(errors_of(with_line("measurements", "measurements = \"20\"")),
                          {"run.measurements", "expected an integer"}));
}

TEST(Config, MeasureEveryZeroIsRejected) {
  EXPECT_TRUE(has_message(errors_of(with_key_in("run", "measure_every = 0")),
                          {"in.toml:9:", "run.measure_every = 0", "must be between 1 and"}));
}

TEST(Config, NegativeSeedIsRejected) {
  EXPECT_TRUE(
      has_message(errors_of(with_line("seed", "seed = -1")),
                  {"in.toml:11:", "run.seed = -1", "must be between 0 and 9223372036854775807"}));
}

TEST(Config, ThreadsOutOfRangeAreRejected) {
  EXPECT_TRUE(has_message(errors_of(with_key_in("run", "threads = 5000")),
                          {"in.toml:9:", "run.threads = 5000", "must be between 0 and 4096"}));
  EXPECT_TRUE(has_message(errors_of(with_key_in("run", "threads = -1")),
                          {"run.threads = -1", "between 0 and 4096"}));
}

TEST(Config, DeviceOutOfRangeIsRejected) {
  EXPECT_TRUE(has_message(errors_of(with_key_in("run", "device = -1")),
                          {"run.device = -1", "between 0 and 1023"}));
}

TEST(Config, EmptyOutputPathIsRejected) {
  EXPECT_TRUE(has_message(errors_of(with_section("output", "path = \"\"")),
                          {"in.toml:14:", "output.path", "expected a non-empty string"}));
  EXPECT_TRUE(has_message(errors_of(with_section("output", "path = 5")),
                          {"output.path = 5", "non-empty string"}));
}

TEST(Config, NegativeSnapshotEveryIsRejected) {
  EXPECT_TRUE(has_message(errors_of(with_section("output", "snapshot_every = -1")),
                          {"in.toml:14:", "output.snapshot_every = -1", "must be between 0 and"}));
}

TEST(Config, FlushEveryZeroIsRejected) {
  EXPECT_TRUE(has_message(errors_of(with_section("output", "flush_every = 0")),
                          {"in.toml:14:", "output.flush_every = 0", "must be between 1 and"}));
}

TEST(Config, TooManySweepsAreRejected) {
  // Each count is within its own limit (2^40); together they exceed the 2^44 sweeps the
  // random-number counter can name.
  std::string text = with_line("measurements", "measurements = 1099511627776");
  text.insert(text.find("[run]\n") + 6, "measure_every = 1099511627776\n");
  const auto e = errors_of(text);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(has_message(
      e, {"in.toml", "run.thermalization + run.measurements * run.measure_every", "2^44 sweeps"}));
}

TEST(Config, CountsAboveTheirLimitAreRejected) {
  EXPECT_TRUE(has_message(errors_of(with_line("measurements", "measurements = 1099511627777")),
                          {"run.measurements = 1099511627777", "between 0 and 1099511627776"}));
}

TEST(Config, EveryProblemIsReported) {
  std::string text = with_line("beta", "beta = -1");
  text = text.substr(0, text.find("thermalization")) +
         "thermalization = -5\nmeasurements = 20\nseed = 1\n" + "colour = \"red\"\n";
  const auto e = errors_of(text);
  EXPECT_EQ(e.size(), 3u);
  EXPECT_TRUE(has_message(e, {"model.beta = -1"}));
  EXPECT_TRUE(has_message(e, {"run.thermalization = -5"}));
  EXPECT_TRUE(has_message(e, {"unknown key 'run.colour'"}));
}

TEST(Config, ErrorWhatJoinsTheMessages) {
  try {
    parse_config(with_line("beta", "beta = -1") + "[update]\nalgorithm = 3\n", "in.toml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.messages().size(), 2u);
    EXPECT_EQ(std::string(e.what()), e.messages()[0] + "\n" + e.messages()[1]);
  }
}

// --- command-line overrides -----------------------------------------------------------------

TEST(ConfigOverrides, SetChangesValues) {
  ConfigOverrides o;
  o.set = {"lattice.dims=[8,8]", "model.beta=0.5", "output.path=run.h5",
           "update.algorithm=heatbath", "run.measure_every=3"};
  const Config c = parse_config(with_line("dims", "dims = [16, 32]"), "in.toml", o);
  EXPECT_EQ(c.dims, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(c.beta, 0.5);
  EXPECT_EQ(c.output_path, "run.h5");  // a bare word is taken as a string
  EXPECT_EQ(c.algorithm, "heatbath");
  EXPECT_EQ(c.measure_every, 3);
  // The input text is kept verbatim; the resolved configuration shows the overrides.
  EXPECT_EQ(c.input_text, with_line("dims", "dims = [16, 32]"));
  const Config resolved = parse_config(c.resolved_toml, "resolved.toml");
  EXPECT_EQ(resolved.dims, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(resolved.beta, 0.5);
}

TEST(ConfigOverrides, LaterSetWinsAndQuotedStringsWork) {
  ConfigOverrides o;
  o.set = {"model.beta=0.1", "model.beta=0.2", "output.path=\"a b.h5\""};
  const Config c = parse_config(kMinimal, "in.toml", o);
  EXPECT_EQ(c.beta, 0.2);
  EXPECT_EQ(c.output_path, "a b.h5");
}

TEST(ConfigOverrides, OptionsOverrideSetAndFile) {
  ConfigOverrides o;
  o.set = {"run.backend=cuda", "run.seed=3", "output.path=x.h5"};
  o.backend = "cpu";
  o.seed = "7";
  o.output = "y.h5";
  const Config c = parse_config(kMinimal, "in.toml", o);
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.output_path, "y.h5");
}

TEST(ConfigOverrides, SetSuppliesAMissingRequiredKey) {
  ConfigOverrides o;
  o.set = {"run.seed=5"};
  EXPECT_EQ(parse_config(with_line("seed", ""), "in.toml", o).seed, 5u);
  o.set = {"update.algorithm=heatbath"};  // a section the file does not have
  EXPECT_EQ(parse_config(kMinimal, "in.toml", o).algorithm, "heatbath");
}

TEST(ConfigOverrides, InvalidSetValueNamesTheOverride) {
  ConfigOverrides o;
  o.set = {"model.beta=abc"};
  const auto e = errors_of(kMinimal, o);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(starts_with(e[0], "--set model.beta=abc")) << e[0];
  EXPECT_TRUE(has_message(e, {"model.beta", "abc", "expected a number"}));
  EXPECT_EQ(e[0].find("in.toml"), std::string::npos) << e[0];

  o.set = {"lattice.dims=[15,16]"};
  const auto odd = errors_of(kMinimal, o);
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_TRUE(starts_with(odd[0], "--set lattice.dims=[15,16]")) << odd[0];
  EXPECT_TRUE(has_message(odd, {"lattice.dims = [15, 16]", "even"}));
}

TEST(ConfigOverrides, MalformedAssignmentsAreRejected) {
  for (const char* bad : {"model.beta", "beta=0.5", "a.b.c=1", ".beta=1", "model.=1", "=1"}) {
    SCOPED_TRACE(bad);
    ConfigOverrides o;
    o.set = {bad};
    const auto e = errors_of(kMinimal, o);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_TRUE(starts_with(e[0], std::string("--set ") + bad)) << e[0];
    EXPECT_TRUE(has_message(e, {"expected SECTION.KEY=VALUE"}));
  }
}

TEST(ConfigOverrides, UnreadableValueIsRejected) {
  ConfigOverrides o;
  o.set = {"model.beta=\"unterminated"};
  const auto e = errors_of(kMinimal, o);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(starts_with(e[0], "--set model.beta=\"unterminated")) << e[0];
  // Not TOML, and not a bare string either (a raw newline): the value cannot be read at all.
  o.set = {"model.beta=a\nb"};
  const auto raw = errors_of(kMinimal, o);
  ASSERT_EQ(raw.size(), 1u);
  EXPECT_TRUE(starts_with(raw[0], "--set model.beta=a\nb")) << raw[0];
  EXPECT_TRUE(has_message(raw, {"cannot read VALUE"}));
}

TEST(ConfigOverrides, SetOfUnknownKeyIsRejected) {
  ConfigOverrides o;
  o.set = {"run.colour=red"};
  EXPECT_TRUE(
      has_message(errors_of(kMinimal, o), {"unknown key 'run.colour'", "known keys in [run]"}));
  o.set = {"solver.tolerance=1"};
  EXPECT_TRUE(has_message(errors_of(kMinimal, o), {"unknown section 'solver'"}));
}

// A key introduced by --set is blamed on the override, not on the input file.
TEST(ConfigOverrides, SetOfUnknownKeyNamesTheOverride) {
  ConfigOverrides o;
  o.set = {"run.colour=red"};
  const auto e = errors_of(kMinimal, o);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(starts_with(e[0], "--set run.colour=red")) << e[0];
  o.set = {"solver.tolerance=1"};
  const auto s = errors_of(kMinimal, o);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(starts_with(s[0], "--set solver.tolerance=1")) << s[0];
}

TEST(ConfigOverrides, SetIntoASectionThatIsNotATableIsRejected) {
  ConfigOverrides o;
  o.set = {"run.seed=1"};
  const auto e = errors_of("run = 3\n" + kMinimal.substr(0, kMinimal.find("[run]")), o);
  EXPECT_TRUE(has_message(e, {"--set run.seed=1", "'run' in the input is not a table"}));
}

TEST(ConfigOverrides, SeedOptionIsValidated) {
  ConfigOverrides o;
  o.seed = "7";
  EXPECT_EQ(parse_config(kMinimal, "in.toml", o).seed, 7u);
  for (const char* bad : {"-1", "abc", "1.5"}) {
    SCOPED_TRACE(bad);
    o.seed = bad;
    const auto e = errors_of(kMinimal, o);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_TRUE(starts_with(e[0], std::string("--seed ") + bad)) << e[0];
    EXPECT_TRUE(has_message(e, {"run.seed"}));
  }
}

TEST(ConfigOverrides, BackendOptionIsValidated) {
  ConfigOverrides o;
  o.backend = "cpu";
  EXPECT_EQ(parse_config(kMinimal, "in.toml", o).backend, "cpu");
  o.backend = "gpu";
  const auto e = errors_of(kMinimal, o);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(starts_with(e[0], "--backend gpu")) << e[0];
  EXPECT_TRUE(has_message(e, {"run.backend", "gpu", "one of \"auto\", \"cpu\", \"cuda\""}));
}

TEST(ConfigOverrides, OutputOptionIsValidated) {
  ConfigOverrides o;
  o.output = "dir/with \"quotes\" and \\.h5";
  EXPECT_EQ(parse_config(kMinimal, "in.toml", o).output_path, "dir/with \"quotes\" and \\.h5");
  o.output = "";
  const auto e = errors_of(kMinimal, o);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(starts_with(e[0], "--output")) << e[0];
  EXPECT_TRUE(has_message(e, {"output.path", "non-empty string"}));
}

TEST(ConfigOverrides, ErrorsFromFileAndOverridesAreAllReported) {
  ConfigOverrides o;
  o.set = {"model.beta=abc", "nodot=1"};
  o.backend = "gpu";
  const auto e = errors_of(with_line("thermalization", "thermalization = -1"), o);
  EXPECT_EQ(e.size(), 4u);
  EXPECT_TRUE(has_message(e, {"--set model.beta=abc"}));
  EXPECT_TRUE(has_message(e, {"--set nodot=1"}));
  EXPECT_TRUE(has_message(e, {"--backend gpu"}));
  EXPECT_TRUE(has_message(e, {"in.toml:9:", "run.thermalization = -1"}));
}

// --- the resolved configuration ---------------------------------------------------------------

void expect_same_values(const Config& a, const Config& b) {
  EXPECT_EQ(a.dims, b.dims);
  EXPECT_EQ(a.model_kind, b.model_kind);
  EXPECT_EQ(a.beta, b.beta);  // exact: the resolved TOML must round-trip doubles
  EXPECT_EQ(a.field, b.field);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.thermalization, b.thermalization);
  EXPECT_EQ(a.measurements, b.measurements);
  EXPECT_EQ(a.measure_every, b.measure_every);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.output_path, b.output_path);
  EXPECT_EQ(a.snapshot_every, b.snapshot_every);
  EXPECT_EQ(a.flush_every, b.flush_every);
}

TEST(Config, ResolvedTomlReparsesToTheSameValues) {
  const Config minimal = parse_config(kMinimal, "some/dir/minimal.toml");
  const Config again = parse_config(minimal.resolved_toml, "resolved.toml");
  expect_same_values(minimal, again);
  EXPECT_EQ(again.resolved_toml, minimal.resolved_toml);

  ConfigOverrides o;
  o.set = {"lattice.dims=[6,4,2]",
           "model.beta=0.44068679350977151",
           "model.h=-0.1",
           "update.algorithm=heatbath",
           "run.start=cold",
           "run.threads=3",
           "run.device=2",
           "run.measure_every=5",
           "output.snapshot_every=11",
           "output.flush_every=13",
           "run.seed=9223372036854775807"};
  o.output = "path with \"quote\".h5";
  o.backend = "cuda";
  const Config full = parse_config(kMinimal, "in.toml", o);
  EXPECT_EQ(full.beta, 0.44068679350977151);
  const Config full_again = parse_config(full.resolved_toml, "resolved.toml");
  expect_same_values(full, full_again);
}

// --- files ----------------------------------------------------------------------------------

TEST(Config, LoadConfigOfMissingFileNamesThePath) {
  const std::string path = "/nonexistent-lattica-dir/input.toml";
  try {
    load_config(path);
    FAIL() << "accepted a missing file";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(has_message(e.messages(), {path, "cannot read"}));
  }
}

// A path that opens but cannot be read, such as a directory, is a read error.
TEST(Config, LoadConfigOfADirectoryIsAReadError) {
  char dir_template[] = "/tmp/lattica_config_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  try {
    load_config(dir);
    ADD_FAILURE() << "accepted a directory as input";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.messages().size(), 1u);
    EXPECT_TRUE(has_message(e.messages(), {dir + ": ", "read"}));
  }
  rmdir(dir_template);
}

TEST(Config, LoadConfigReadsTheFile) {
  char dir_template[] = "/tmp/lattica_config_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/point.toml";
  {
    std::ofstream out(path, std::ios::binary);
    out << kMinimal;
  }
  ConfigOverrides o;
  o.seed = "42";
  const Config c = load_config(path, o);
  EXPECT_EQ(c.input_path, path);
  EXPECT_EQ(c.input_text, kMinimal);
  EXPECT_EQ(c.seed, 42u);
  EXPECT_EQ(c.output_path, "point.h5");
  // Messages about a loaded file carry its path and line.
  {
    std::ofstream out(path, std::ios::binary);
    out << with_line("dims", "dims = [7, 8]");
  }
  try {
    load_config(path);
    ADD_FAILURE() << "accepted an odd size";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(has_message(e.messages(), {path + ":2:8:", "lattice.dims = [7, 8]", "even"}));
  }
  std::remove(path.c_str());
  rmdir(dir_template);
}

// --- continuous models and update sequences ---------------------------------------------------

const std::string kXy =
    "[lattice]\ndims = [8, 8]\n[model]\nkind = \"on\"\nn = 2\nbeta = 1.1\n"
    "[run]\nthermalization = 10\nmeasurements = 20\nseed = 1\n";
const std::string kPhi4 =
    "[lattice]\ndims = [8, 8]\n[model]\nkind = \"phi4\"\nkappa = 0.2\nlambda = 0.5\n"
    "[run]\nthermalization = 10\nmeasurements = 20\nseed = 1\n";

TEST(Config, OnModelDefaultsAndSequence) {
  const Config c = parse_config(kXy, "xy.toml");
  EXPECT_EQ(c.n, 2);
  EXPECT_EQ(c.precision, "double");
  EXPECT_EQ(c.sequence, (std::vector<std::string>{"metropolis"}));
  EXPECT_EQ(c.hits, 1);
  EXPECT_EQ(c.step, 1.0);
  EXPECT_TRUE(c.tune_step);
  EXPECT_EQ(c.target_acceptance, 0.5);
  const Config d = parse_config(
      kXy +
          "[update]\nsequence = [\"heatbath\", \"overrelaxation\", \"overrelaxation\"]\n"
          "hits = 2\nstep = 0.3\ntune = false\ntarget_acceptance = 0.4\n",
      "xy.toml");
  EXPECT_EQ(d.sequence, (std::vector<std::string>{"heatbath", "overrelaxation", "overrelaxation"}));
  EXPECT_EQ(d.algorithm, "heatbath, overrelaxation, overrelaxation");
  const EngineSettings s = d.engine_settings();
  EXPECT_EQ(s.model, ModelKind::on);
  EXPECT_EQ(s.sequence, (std::vector<UpdateAlgorithm>{UpdateAlgorithm::heatbath,
                                                      UpdateAlgorithm::overrelaxation,
                                                      UpdateAlgorithm::overrelaxation}));
  EXPECT_EQ(s.hits, 2);
  EXPECT_EQ(s.step, 0.3);
  EXPECT_FALSE(s.tune_step);
  EXPECT_EQ(s.target_acceptance, 0.4);
  // The resolved configuration reads back to the same settings.
  const Config again = parse_config(d.resolved_toml, "resolved.toml");
  EXPECT_EQ(again.sequence, d.sequence);
  EXPECT_EQ(again.n, 2);
  EXPECT_EQ(again.step, 0.3);
  EXPECT_FALSE(again.tune_step);
}

TEST(Config, Phi4KeysAndPrecision) {
  const Config c = parse_config(kPhi4 +
                                    "[update]\nsequence = [\"metropolis\", "
                                    "\"overrelaxation\"]\nhits = 4\n",
                                "phi4.toml");
  EXPECT_EQ(c.kappa, 0.2);
  EXPECT_EQ(c.lambda, 0.5);
  EXPECT_EQ(c.engine_settings().model, ModelKind::phi4);
  EXPECT_EQ(parse_config(c.resolved_toml, "r.toml").lambda, 0.5);
  const std::string single =
      std::string(kPhi4).insert(kPhi4.find("[run]"), "precision = \"float\"\n");
  EXPECT_EQ(parse_config(single, "phi4.toml").engine_settings().precision, Precision::float32);
}

TEST(Config, ContinuousModelErrorsNameKeyValueAndReason) {
  EXPECT_TRUE(has_message(errors_of(std::string(kXy).replace(kXy.find("n = 2"), 5, "n = 7")),
                          {"model.n = 7", "between 2 and 4"}));
  EXPECT_TRUE(has_message(errors_of(std::string(kXy).replace(kXy.find("n = 2\n"), 6, "")),
                          {"model.n is missing"}));
  EXPECT_TRUE(has_message(
      errors_of(std::string(kPhi4).insert(kPhi4.find("[run]"), "beta = 0.3\n")),
      {"model.beta = 0.3", "phi^4 has no inverse temperature", "model.kappa and model.lambda"}));
  EXPECT_TRUE(has_message(errors_of(kXy + "[update]\nalgorithm = \"overrelaxation\"\n"),
                          {"update.algorithm", "not ergodic", "update.sequence"}));
  EXPECT_TRUE(has_message(errors_of(kXy + "[update]\nsequence = [\"overrelaxation\"]\n"),
                          {"update.sequence", "not ergodic"}));
  EXPECT_TRUE(has_message(errors_of(kPhi4 + "[update]\nsequence = [\"heatbath\"]\n"),
                          {"update.sequence", "entry 'heatbath' is not allowed",
                           "\"metropolis\", \"overrelaxation\""}));
  EXPECT_TRUE(
      has_message(errors_of(kXy + "[update]\nsequence = []\n"), {"update.sequence", "1 to 16"}));
  EXPECT_TRUE(has_message(
      errors_of(kXy + "[update]\nalgorithm = \"heatbath\"\nsequence = [\"heatbath\"]\n"),
      {"update.sequence", "not both"}));
  EXPECT_TRUE(has_message(errors_of(kXy + "[update]\nhits = 0\n"),
                          {"update.hits = 0", "between 1 and 255"}));
  EXPECT_TRUE(has_message(errors_of(kXy + "[update]\nstep = 0\n"), {"update.step = 0", "> 0"}));
  EXPECT_TRUE(has_message(errors_of(kXy + "[update]\ntarget_acceptance = 1.0\n"),
                          {"update.target_acceptance = 1.0", "between 0 and 1"}));
  EXPECT_TRUE(
      has_message(errors_of(kXy + "[update]\ntune = \"yes\"\n"), {"update.tune", "true or false"}));
  EXPECT_TRUE(has_message(errors_of(with_section("update", "step = 0.5")),
                          {"update.step = 0.5", "only continuous models"}));
  EXPECT_TRUE(has_message(errors_of(with_key_in("model", "precision = \"float\"")),
                          {"model.precision", "only continuous models"}));
  EXPECT_TRUE(has_message(errors_of(with_key_in("model", "kappa = 0.1")),
                          {"model.kappa = 0.1", "only phi^4 models"}));
  EXPECT_TRUE(has_message(errors_of(with_section("update", "algorithm = \"overrelaxation\"")),
                          {"update.algorithm", "\"metropolis\", \"heatbath\""}));
}

TEST(Config, FourierLangevinKeys) {
  const Config c = parse_config(kPhi4 +
                                    "[update]\nsequence = [\"mala\", \"overrelaxation\", "
                                    "\"langevin\"]\nlangevin_step = 0.25\n",
                                "phi4.toml");
  const EngineSettings s = c.engine_settings();
  EXPECT_EQ(s.sequence,
            (std::vector<UpdateAlgorithm>{UpdateAlgorithm::mala, UpdateAlgorithm::overrelaxation,
                                          UpdateAlgorithm::langevin}));
  EXPECT_EQ(s.langevin_step, 0.25);
  EXPECT_EQ(parse_config(c.resolved_toml, "r.toml").langevin_step, 0.25);
  EXPECT_EQ(parse_config(kPhi4 + "[update]\nalgorithm = \"langevin\"\n", "p.toml").langevin_step,
            0.1);
  EXPECT_TRUE(has_message(errors_of(kPhi4 + "[update]\nalgorithm = \"mala\"\nlangevin_step = 0\n"),
                          {"update.langevin_step = 0", "> 0"}));
  EXPECT_TRUE(has_message(errors_of(kPhi4 + "[update]\nlangevin_step = 0.2\n"),
                          {"update.langevin_step", "only \"langevin\" and \"mala\" passes"}));
  EXPECT_TRUE(has_message(errors_of(kXy + "[update]\nalgorithm = \"langevin\"\n"),
                          {"update.algorithm", "langevin", "\"metropolis\", \"heatbath\""}));
  // The Gaussian model has no equilibrium at kappa >= 1/(2d), whatever the algorithm.
  const std::string gaussian =
      std::string(kPhi4).replace(kPhi4.find("lambda = 0.5"), 12, "lambda = 0.0");
  EXPECT_NO_THROW(parse_config(gaussian, "in.toml"));
  EXPECT_TRUE(has_message(
      errors_of(std::string(gaussian).replace(gaussian.find("kappa = 0.2"), 11, "kappa = 0.25")),
      {"model.kappa = 0.25", "unbounded below", "1/(2d) = 0.25"}));
}

TEST(Config, KappaAndLambdaCanBeSwept) {
  const RunPlan plan = parse_plan(
      std::string(kPhi4)
          .replace(kPhi4.find("kappa = 0.2"), 11, "kappa = { start = 0.1, stop = 0.3, num = 3 }")
          .replace(kPhi4.find("lambda = 0.5") + 33, 12, "lambda = [0.5, 1.0]"),
      "sweep.toml");
  ASSERT_EQ(plan.points.size(), 6u);
  EXPECT_EQ(plan.swept, (std::vector<std::string>{"model.kappa", "model.lambda"}));
  EXPECT_DOUBLE_EQ(plan.points[5].kappa, 0.3);
  EXPECT_EQ(plan.points[5].lambda, 1.0);
}

TEST(Config, StructureFactorKeys) {
  EXPECT_EQ(parse_config(kMinimal, "in.toml").engine_settings().structure_factor_every, 0);
  const Config c = parse_config(
      with_section("measure", "structure_factor = true\nstructure_factor_every = 5"), "in.toml");
  EXPECT_TRUE(c.structure_factor);
  EXPECT_EQ(c.engine_settings().structure_factor_every, 5);
  EXPECT_EQ(parse_config(c.resolved_toml, "r.toml").structure_factor_every, 5);
  EXPECT_TRUE(has_message(errors_of(with_section("measure", "structure_factor = 1")),
                          {"measure.structure_factor = 1", "true or false"}));
  EXPECT_TRUE(has_message(errors_of(with_section("measure", "structure_factor_every = 0")),
                          {"measure.structure_factor_every = 0", "between 1 and"}));
  const Config t = parse_config(
      with_section("measure", "timeslice = true\ntimeslice_every = 2\ntimeslice_momenta = 3"),
      "in.toml");
  EXPECT_EQ(t.engine_settings().timeslice_every, 2);
  EXPECT_EQ(t.engine_settings().timeslice_momenta_per_axis, 3);
  EXPECT_EQ(parse_config(t.resolved_toml, "r.toml").timeslice_momenta, 3);
  EXPECT_TRUE(has_message(errors_of(with_section("measure", "timeslice_momenta = 0")),
                          {"measure.timeslice_momenta = 0", "between 1 and 64"}));
}

// --- limits (issue 17) --------------------------------------------------------------------------

// The run stops while kWalltimeMarginSeconds remain (for its final checkpoint): a walltime
// within that margin would stop every job after its first sweeps.
TEST(Config, WalltimeMustExceedTheSafetyMargin) {
  for (const char* walltime : {"00:00:01", "00:00:30"}) {
    SCOPED_TRACE(walltime);
    EXPECT_TRUE(has_message(
        errors_of(with_key_in("run", std::string("walltime = \"") + walltime + "\"")),
        {"in.toml:9:", std::string("run.walltime = '") + walltime + "'", "30 s", "safety margin"}));
  }
  EXPECT_EQ(parse_config(with_key_in("run", "walltime = \"00:00:31\""), "in.toml").walltime_seconds,
            31.0);
}

/// `text` with the line "KEY = ..." of `key` replaced by "KEY = value", or the line added to
/// [model] when the input has none.
std::string with_model_value(std::string text, const std::string& key, const std::string& value) {
  const size_t at = text.find("\n" + key + " = ");
  if (at == std::string::npos)
    return text.replace(text.find("[model]\n") + 8, 0, key + " = " + value + "\n");
  const size_t end = text.find('\n', at + 1);
  return text.replace(at + 1, end - at - 1, key + " = " + value);
}

// Couplings whose transition tables or energies overflow a double (or the float of a
// single-precision continuous model) used to run and write -inf or NaN; every model refuses
// them, naming the coupling, its value and what overflows.
TEST(Config, CouplingsWhoseTablesOrEnergiesOverflowAreRefused) {
  const std::string potts = with_key_in("model", "q = 3");
  const std::string potts_input =
      std::string(potts).replace(potts.find("\"ising\""), 7, "\"potts\"");
  const struct {
    std::string text;
    const char* key;
    const char* value;
    const char* what;
  } cases[] = {
      {with_model_value(kMinimal, "beta", "1e308"), "model.beta", "1e+308", "beta dE"},
      {with_model_value(kMinimal, "h", "-1e308"), "model.h", "-1e+308", "energy"},
      {with_model_value(kMinimal, "h", "1e307"), "model.h", "1e+307", "energy"},
      {with_model_value(potts_input, "beta", "1e308"), "model.beta", "1e+308", "beta dE"},
      {with_model_value(potts_input, "h", "-1e308"), "model.h", "-1e+308", "energy"},
      {with_model_value(kXy, "beta", "1e308"), "model.beta", "1e+308", "beta dE"},
      {with_model_value(kXy, "h", "1e200"), "model.h", "1e+200", "local field"},
      {with_model_value(with_model_value(kXy, "precision", "\"float\""), "beta", "1e38"),
       "model.beta", "1e+38", "float"},
      {with_model_value(kXy, "beta", "1e306"), "model.beta", "1e+306", "helicity"},
      {with_model_value(kPhi4, "kappa", "1e308"), "model.kappa", "1e+308", "action"},
      {with_model_value(kPhi4, "lambda", "1e308"), "model.lambda", "1e+308", "action"},
      {with_model_value(kPhi4, "h", "-1e308"), "model.h", "-1e+308", "action"},
      {with_model_value(with_model_value(kPhi4, "precision", "\"float\""), "kappa", "1e38"),
       "model.kappa", "1e+38", "float"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto e = errors_of(c.text);
    EXPECT_EQ(e.size(), 1u);
    EXPECT_TRUE(has_message(e, {std::string(c.key) + " = " + c.value, "overflow", c.what}));
  }
}

// Enormous couplings whose tables and energies stay finite are allowed: beta = 1e300 is the
// zero-temperature limit (every table entry 0 or 1), and so are large phi^4 couplings.
TEST(Config, EnormousCouplingsWithFiniteTablesAndEnergiesAreAccepted) {
  EXPECT_NO_THROW(parse_config(with_model_value(kMinimal, "beta", "1e300"), "in.toml"));
  EXPECT_NO_THROW(parse_config(with_model_value(kMinimal, "h", "-1e290"), "in.toml"));
  EXPECT_NO_THROW(parse_config(with_model_value(kXy, "beta", "1e100"), "in.toml"));
  EXPECT_NO_THROW(parse_config(with_model_value(kPhi4, "kappa", "1e6"), "in.toml"));
  EXPECT_NO_THROW(parse_config(with_model_value(kPhi4, "h", "1e30"), "in.toml"));
  EXPECT_NO_THROW(parse_config(with_model_value(kPhi4, "lambda", "1e100"), "in.toml"));
}

// Swept values and --set overrides are checked like values in the file.
TEST(Config, OverflowingSweptValuesAndOverridesAreRefused) {
  try {
    parse_plan(with_model_value(kMinimal, "beta", "[0.4, 1e308]"), "in.toml");
    ADD_FAILURE() << "accepted a sweep with beta = 1e308";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(has_message(e.messages(), {"model.beta = 1e+308", "overflow"}));
  }
  try {
    parse_plan(with_model_value(kMinimal, "h", "{ start = 0.0, stop = 1e308, num = 2 }"),
               "in.toml");
    ADD_FAILURE() << "accepted a range reaching h = 1e308";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(has_message(e.messages(), {"model.h = 1e+308", "overflow"}));
  }
  ConfigOverrides o;
  o.set = {"model.beta=1e308"};
  EXPECT_TRUE(has_message(errors_of(kMinimal, o),
                          {"--set model.beta=1e308", "model.beta = 1e+308", "overflow"}));
}

// The input is read up to 4 MiB: a larger one (or one that never ends, such as /dev/zero,
// see tests/cli/input_limits_test.cpp) is refused without reading it whole.
TEST(Config, LoadConfigRefusesInputsLargerThanTheCap) {
  const size_t cap = size_t(4) << 20;
  char dir_template[] = "/tmp/lattica_config_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/huge.toml";
  {
    std::ofstream out(path, std::ios::binary);
    out << kMinimal << std::string(cap - kMinimal.size(), '#').replace(0, 1, "\n");
  }
  EXPECT_NO_THROW(load_config(path));  // exactly at the cap
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << "#";
  }
  try {
    load_config(path);
    ADD_FAILURE() << "accepted an input over the cap";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(has_message(e.messages(), {path, "larger than 4 MiB"}));
  }
  std::remove(path.c_str());
  rmdir(dir_template);
}

// --- the schema: echo, resume comparison, README ---------------------------------------------

// The resolved configuration is stored in every output file and its chain part in checkpoints,
// which --resume compares with the input's: their text must not change by accident. These are
// the texts the code wrote before the schema table drove them.
TEST(ConfigSchema, ResolvedAndChainTextsStayTheSame) {
  const Config c = parse_config(
      "[lattice]\ndims = [8, 8]\n[model]\nkind = \"phi4\"\nkappa = 0.1\nlambda = 0.5\n"
      "precision = \"float\"\n[update]\nsequence = [\"mala\", \"overrelaxation\"]\n[run]\n"
      "thermalization = 10\nmeasurements = 20\nseed = 1\nwalltime = \"1:00:00\"\n[parallel]\n"
      "grid = [2, 1]\n",
      "dir/in.toml");
  const std::string common = R"([lattice]
dims = [ 8, 8 ]

[measure]
structure_factor = false
structure_factor_every = 1
timeslice = false
timeslice_every = 1
timeslice_momenta = 1

[model]
h = 0.0
kappa = 0.10000000000000001
kind = 'phi4'
lambda = 0.5
precision = 'float'
)";
  const std::string update = R"(
[update]
hits = 1
langevin_step = 0.10000000000000001
sequence = [ 'mala', 'overrelaxation' ]
step = 1.0
target_acceptance = 0.5
tune = true
)";
  // structure_factor_tables only says what the end of the run writes: not a chain key.
  std::string resolved_common = common;
  const std::string every = "structure_factor_every = 1\n";
  resolved_common.insert(resolved_common.find(every) + every.size(),
                         "structure_factor_tables = 'full'\n");
  EXPECT_EQ(c.resolved_toml, resolved_common + R"(
[output]
flush_every = 1000
observables = 'replicas'
path = 'in.h5'
snapshot_every = 0
snapshot_packing = 'bytes'

[parallel]
grid = [ 2, 1 ]

[run]
backend = 'auto'
checkpoint_every = 0
checkpoint_minutes = 0.0
device = 0
measure_every = 1
measurements = 20
progress_minutes = 5.0
replicas = 1
seed = 1
start = 'hot'
thermalization = 10
threads = 0
walltime = '1:00:00'
)" + update);
  EXPECT_EQ(c.chain_toml, common + R"(
[run]
measure_every = 1
replicas = 1
seed = 1
start = 'hot'
thermalization = 10
)" + update);
  // Bit-packed snapshots stay in the chain; bytes, the default, leave no key (as before the
  // key existed).
  const Config bits = parse_config(kMinimal + "[output]\nsnapshot_packing = \"bits\"\n", "in.toml");
  EXPECT_NE(bits.chain_toml.find("[output]\nsnapshot_packing = 'bits'\n"), std::string::npos);
  EXPECT_EQ(parse_config(kMinimal, "in.toml").chain_toml.find("[output]"), std::string::npos);
}

TEST(ConfigSchema, ChainDifferencesNameTheChainKeysThatDiffer) {
  const Config a = parse_config(kMinimal, "in.toml");
  ConfigOverrides o;
  o.set = {"model.beta=0.5", "run.seed=2", "run.measurements=40", "run.threads=2",
           "update.multispin=false"};
  const Config b = parse_config(kMinimal, "in.toml", o);
  EXPECT_EQ(
      chain_differences(a.chain_toml, b.chain_toml),
      (std::vector<std::string>{"model.beta: 0.40000000000000002 -> 0.5", "run.seed: 1 -> 2"}));
  EXPECT_TRUE(chain_differences(a.chain_toml, a.chain_toml).empty());
  // A key the schema does not know (written by another version) counts; a key it keeps out of
  // the chain does not, even where a stored text holds it.
  EXPECT_EQ(chain_differences(a.chain_toml + "[extra]\nkey = 1\n", a.chain_toml),
            std::vector<std::string>{"extra.key: 1 -> (absent)"});
  std::string with_threads = a.chain_toml;
  with_threads.insert(with_threads.find("[run]\n") + 6, "threads = 8\n");
  EXPECT_TRUE(chain_differences(with_threads, a.chain_toml).empty());
}

// README.md's key table is input_reference_markdown() between two marker comments. When the
// schema changes, the expected block is written to the build directory to paste in.
TEST(ConfigSchema, ReadmeInputReferenceIsTheSchemasTable) {
  // SIM_SOURCE_DIR overrides the source tree compiled in, as for the command-line tests.
  const char* env = std::getenv("SIM_SOURCE_DIR");
  const std::string readme_path =
      std::string(env && *env ? env : LATTICA_SOURCE_DIR) + "/README.md";
  std::ifstream in(readme_path);
  ASSERT_TRUE(in) << "cannot read " << readme_path;
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const std::string begin = "<!-- input-reference:begin -->\n";
  const std::string end = "<!-- input-reference:end -->";
  const size_t from = readme.find(begin), to = readme.find(end);
  ASSERT_NE(from, std::string::npos) << readme_path << " has no line " << begin;
  ASSERT_NE(to, std::string::npos) << readme_path << " has no line " << end;
  ASSERT_LT(from, to);
  const std::string block = readme.substr(from + begin.size(), to - from - begin.size());
  const std::string expected = input_reference_markdown();
  if (block != expected) {
    const std::string out = std::string(LATTICA_BINARY_DIR) + "/input_reference.md";
    std::ofstream(out) << expected;
    ADD_FAILURE() << "the input reference in " << readme_path
                  << " differs from the schema (sim/config/schema.cpp): replace the lines "
                     "between its input-reference markers with "
                  << out;
  }
}

// Every example input in inputs/ is a valid run or sweep as it stands, so that the README's
// commands (sim inputs/X.toml) keep working when keys and rules change.
TEST(ConfigSchema, EveryExampleInputIsValid) {
  const char* env = std::getenv("SIM_SOURCE_DIR");
  const std::filesystem::path inputs =
      std::filesystem::path(env && *env ? env : LATTICA_SOURCE_DIR) / "inputs";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(inputs)) {
    if (entry.path().extension() != ".toml") continue;
    ++checked;
    try {
      const RunPlan plan = load_plan(entry.path().string());
      EXPECT_FALSE(plan.points.empty()) << entry.path();
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry.path() << ": " << e.what();
    }
  }
  EXPECT_GE(checked, 10) << "no example inputs found in " << inputs;
}

}  // namespace
}  // namespace lattica
