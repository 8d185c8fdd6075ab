// Hostile input: thousands of mutated inputs (random bytes, truncations, wrong types, huge
// numbers, deep nesting, unknown keys, duplicated sections) through the parser and validator.
// Each must parse or be refused with ConfigError messages: never another exception, a crash,
// a hang or a sanitizer report (this program is built with AddressSanitizer and UBSan).
// LATTICA_FUZZ_ITERATIONS sets the number of mutants (default 30000, about 15 s).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "tests/support/mutate.hpp"

namespace lattica {
namespace {

TEST(ConfigFuzz, MutatedInputsParseOrAreRefusedWithMessages) {
  const char* env = std::getenv("LATTICA_FUZZ_ITERATIONS");
  const long iterations = env ? std::atol(env) : 30000;
  // SIM_SOURCE_DIR overrides the source tree compiled in, as for the command-line tests: the
  // program may run from a bundle on another machine.
  const char* source = std::getenv("SIM_SOURCE_DIR");
  const std::vector<std::string> seeds =
      test::input_corpus(source && *source ? source : LATTICA_SOURCE_DIR);
  ASSERT_GE(seeds.size(), 4u);
  std::mt19937_64 random(0xF022);
  long accepted = 0, refused = 0;
  double slowest = 0;
  for (long i = 0; i < iterations; ++i) {
    std::string text = seeds[random() % seeds.size()];
    for (int m = 0, n = 1 + static_cast<int>(random() % 3); m < n; ++m)
      text = test::mutate(text, random);
    const auto start = std::chrono::steady_clock::now();
    try {
      const RunPlan plan = parse_plan(text, "fuzz.toml");
      EXPECT_FALSE(plan.points.empty());
      ++accepted;
    } catch (const ConfigError& e) {
      EXPECT_FALSE(e.messages().empty()) << "mutant " << i;
      for (const std::string& m : e.messages()) EXPECT_FALSE(m.empty()) << "mutant " << i;
      ++refused;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "mutant " << i << ": " << typeid(e).name() << ": " << e.what()
                    << "\n--- input ---\n"
                    << text.substr(0, 2000);
    }
    slowest = std::max(
        slowest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("[ fuzz     ] %ld mutants: %ld accepted, %ld refused; slowest %.3f s\n", iterations,
              accepted, refused, slowest);
  EXPECT_GT(refused, iterations / 2);
  EXPECT_LT(slowest, 5.0) << "a mutant took too long to parse (a hang?)";
}

}  // namespace
}  // namespace lattica
