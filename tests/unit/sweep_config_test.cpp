// Parameter sweeps and replicas in the input: expansion, order, seeds, file names, errors.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sim/config.hpp"

namespace lattica {
namespace {

std::string input(const std::string& dims, const std::string& beta, const std::string& extra = "") {
  return "[lattice]\ndims = " + dims + "\n[model]\nkind = \"ising\"\nbeta = " + beta +
         "\n[run]\nthermalization = 1\nmeasurements = 2\nseed = 9\n" + extra +
         "[output]\npath = \"out/fss.h5\"\n";
}

std::vector<std::string> errors_of(const std::string& text) {
  try {
    parse_plan(text, "in.toml");
  } catch (const ConfigError& e) {
    return e.messages();
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return {};
}

bool any_contains(const std::vector<std::string>& messages, const std::string& part) {
  for (const auto& m : messages) {
    if (m.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(Sweep, SingleRunIsOnePointWithTheGivenSeedAndPath) {
  const RunPlan plan = parse_plan(input("[8, 8]", "0.4"), "in.toml");
  ASSERT_EQ(plan.points.size(), 1u);
  EXPECT_TRUE(plan.swept.empty());
  EXPECT_EQ(plan.points[0].seed, 9u);
  EXPECT_EQ(plan.points[0].output_path, "out/fss.h5");
  EXPECT_EQ(plan.points[0].point_index, -1);
}

TEST(Sweep, ListOfBetas) {
  const RunPlan plan = parse_plan(input("[8, 8]", "[0.40, 0.42, 0.44]"), "in.toml");
  ASSERT_EQ(plan.points.size(), 3u);
  EXPECT_EQ(plan.swept, std::vector<std::string>{"model.beta"});
  EXPECT_EQ(plan.index_path, "out/fss.index.json");
  std::set<uint64_t> seeds;
  for (int i = 0; i < 3; ++i) {
    const Config& c = plan.points[i];
    EXPECT_EQ(c.point_index, i);
    EXPECT_EQ(c.output_path, "out/fss." + std::to_string(i) + ".h5");
    EXPECT_DOUBLE_EQ(c.beta, 0.40 + 0.02 * i);
    seeds.insert(c.seed);
    EXPECT_NE(c.resolved_toml.find("beta = "), std::string::npos);
  }
  EXPECT_EQ(seeds.size(), 3u);  // independent chains
  EXPECT_EQ(seeds.count(9u), 0u);
  // The same input gives the same seeds (a --task-id run matches the full sweep).
  EXPECT_EQ(parse_plan(input("[8, 8]", "[0.40, 0.42, 0.44]"), "in.toml").points[1].seed,
            plan.points[1].seed);
}

TEST(Sweep, RangeIncludesBothEnds) {
  const RunPlan plan =
      parse_plan(input("[8, 8]", "{ start = 0.3, stop = 0.5, num = 5 }"), "in.toml");
  ASSERT_EQ(plan.points.size(), 5u);
  EXPECT_DOUBLE_EQ(plan.points.front().beta, 0.3);
  EXPECT_DOUBLE_EQ(plan.points[2].beta, 0.4);
  EXPECT_DOUBLE_EQ(plan.points.back().beta, 0.5);
  const RunPlan one =
      parse_plan(input("[8, 8]", "{ start = 0.3, stop = 0.5, num = 1 }"), "in.toml");
  ASSERT_EQ(one.points.size(), 1u);
  EXPECT_DOUBLE_EQ(one.points[0].beta, 0.3);
}

TEST(Sweep, CartesianProductOfSizesAndCouplingsLastKeyFastest) {
  const RunPlan plan =
      parse_plan(input("[[8, 8], [16, 16]]", "[0.42, 0.44]", "replicas = 4\n"), "in.toml");
  ASSERT_EQ(plan.points.size(), 4u);
  EXPECT_EQ((std::vector<std::string>{"lattice.dims", "model.beta"}), plan.swept);
  EXPECT_EQ(plan.points[0].dims, (std::vector<int64_t>{8, 8}));
  EXPECT_DOUBLE_EQ(plan.points[1].beta, 0.44);
  EXPECT_EQ(plan.points[1].dims, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(plan.points[2].dims, (std::vector<int64_t>{16, 16}));
  EXPECT_DOUBLE_EQ(plan.points[2].beta, 0.42);
  EXPECT_EQ(plan.points[3].replicas, 4);
  ASSERT_EQ(plan.points[3].swept_values.size(), 2u);
  EXPECT_EQ(plan.points[3].swept_values[0].first, "lattice.dims");
}

TEST(Sweep, FieldCanBeSweptToo) {
  const RunPlan plan = parse_plan(
      "[lattice]\ndims = [8, 8]\n[model]\nkind = \"ising\"\nbeta = 0.4\nh = [-0.1, 0.0, 0.1]\n"
      "[run]\nthermalization = 1\nmeasurements = 2\nseed = 9\n",
      "in.toml");
  ASSERT_EQ(plan.points.size(), 3u);
  EXPECT_DOUBLE_EQ(plan.points[0].field, -0.1);
  EXPECT_EQ(plan.points[2].output_path, "in.2.h5");
}

TEST(Sweep, ParseConfigRefusesASweep) {
  EXPECT_THROW(parse_config(input("[8, 8]", "[0.4, 0.5]"), "in.toml"), ConfigError);
}

TEST(Sweep, BadValuesAreReportedOnceWithTheirLocation) {
  const auto e = errors_of(input("[8, 8]", "[0.4, -0.5, 0.6]"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(any_contains(e, "in.toml:5:14:")) << e[0];  // the element itself
  EXPECT_TRUE(any_contains(e, "model.beta = -0.5")) << e[0];
  EXPECT_TRUE(any_contains(e, "must be >= 0")) << e[0];
}

TEST(Sweep, MalformedSweepsAreRejected) {
  EXPECT_TRUE(any_contains(errors_of(input("[8, 8]", "[]")), "at least one value"));
  EXPECT_TRUE(
      any_contains(errors_of(input("[8, 8]", "{ start = 0.3, stop = 0.5 }")), "a range must be"));
  EXPECT_TRUE(any_contains(errors_of(input("[8, 8]", "{ start = 0.3, stop = 0.5, num = 0 }")),
                           "a range must be"));
  EXPECT_TRUE(any_contains(errors_of(input("[8, 8]", "{ start = 0.3, stop = 0.5, num = 2.5 }")),
                           "a range must be"));
  EXPECT_TRUE(
      any_contains(errors_of(input("[[8, 8], 16]", "0.4")), "every entry of a lattice.dims sweep"));
  EXPECT_TRUE(any_contains(errors_of(input("[[8, 8], [7, 8]]", "0.4")), "must be even"));
  EXPECT_TRUE(any_contains(errors_of(input("[8, 8]", "{ start = 0.1, stop = 0.2, num = 100001 }")),
                           "a range must be"));
}

TEST(Replicas, DefaultAndRange) {
  EXPECT_EQ(parse_config(input("[8, 8]", "0.4"), "in.toml").replicas, 1);
  EXPECT_EQ(parse_config(input("[8, 8]", "0.4", "replicas = 64\n"), "in.toml").replicas, 64);
  EXPECT_TRUE(any_contains(errors_of(input("[8, 8]", "0.4", "replicas = 0\n")), "run.replicas"));
  EXPECT_TRUE(
      any_contains(errors_of(input("[8, 8]", "0.4", "replicas = 65537\n")), "run.replicas"));
}

}  // namespace
}  // namespace lattica
