#pragma once
// Mutations of input files for the hostile-input tests (tests/fuzz, tests/cli): random bytes,
// truncations, duplicated lines, extreme and wrongly typed values, unknown keys, deep nesting.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace lattica::test {

/// The example inputs under source_dir/inputs and a few more that use every section.
inline std::vector<std::string> input_corpus(const std::string& source_dir) {
  std::vector<std::string> texts = {
      "[lattice]\ndims = [16, 16]\n[model]\nkind = \"ising\"\nbeta = 0.44\n"
      "[run]\nthermalization = 10\nmeasurements = 20\nseed = 1\n",
      "[lattice]\ndims = [[8, 8], [16, 16]]\n[model]\nkind = \"ising\"\n"
      "beta = { start = 0.4, stop = 0.45, num = 3 }\n[run]\nthermalization = 1\n"
      "measurements = 1\nseed = 2\n",
      "[lattice]\ndims = [8, 6, 4]\n[model]\nkind = \"phi4\"\nkappa = 0.2\nlambda = 0.5\n"
      "[update]\nsequence = [\"mala\", \"overrelaxation\"]\nlangevin_step = 0.2\n"
      "[run]\nthermalization = 10\nmeasurements = 20\nseed = 1\nwalltime = \"1-00:00:00\"\n"
      "checkpoint_every = 5\n[measure]\nstructure_factor = true\ntimeslice = true\n"};
  for (const auto& entry : std::filesystem::directory_iterator(source_dir + "/inputs")) {
    if (entry.path().extension() != ".toml") continue;
    std::ifstream in(entry.path());
    std::ostringstream text;
    text << in.rdbuf();
    texts.push_back(text.str());
  }
  return texts;
}

/// One random mutation of text.
inline std::string mutate(std::string text, std::mt19937_64& random) {
  auto pick = [&](size_t n) { return n == 0 ? size_t(0) : static_cast<size_t>(random() % n); };
  const char* values[] = {"1e308",
                          "-1",
                          "9223372036854775807",
                          "99999999999999999999",
                          "nan",
                          "inf",
                          "-inf",
                          "0",
                          "-0.0",
                          "\"x\"",
                          "[1, 2]",
                          "{ a = 1 }",
                          "true",
                          "[]",
                          "\"\"",
                          "1979-05-27T07:32:00Z",
                          "0x7fff",
                          "1_000",
                          "\"\\u0000\"",
                          "[[1], [2, [3]]]"};
  const char* keys[] = {"lattice.dims",
                        "model.beta",
                        "model.kind",
                        "model.q",
                        "model.n",
                        "model.kappa",
                        "update.step",
                        "update.sequence",
                        "run.seed",
                        "run.replicas",
                        "run.walltime",
                        "output.path",
                        "measure.timeslice_momenta",
                        "run.checkpoint_minutes"};
  switch (random() % 10) {
    case 0:  // flip bytes
      for (int i = 0, n = 1 + pick(4); i < n && !text.empty(); ++i)
        text[pick(text.size())] = static_cast<char>(random());
      break;
    case 1: {  // insert random bytes, NUL and high bytes included
      std::string bytes(1 + pick(16), '\0');
      for (char& c : bytes) c = static_cast<char>(random());
      text.insert(pick(text.size() + 1), bytes);
      break;
    }
    case 2: {  // delete a range
      const size_t at = pick(text.size() + 1);
      text.erase(at, pick(64));
      break;
    }
    case 3:  // truncate
      text.resize(pick(text.size() + 1));
      break;
    case 4: {  // duplicate a line (duplicate keys and sections)
      const size_t start = text.rfind('\n', pick(text.size() + 1));
      const size_t line_start = start == std::string::npos ? 0 : start + 1;
      const size_t end = text.find('\n', line_start);
      const std::string line =
          text.substr(line_start, end == std::string::npos ? end : end - line_start);
      text.insert(line_start, line + "\n");
      break;
    }
    case 5: {  // a key set to an extreme or wrongly typed value, via a dotted key line
      const std::string key = keys[pick(std::size(keys))];
      text += "\n" + key.substr(key.find('.') + 1) + " = " + values[pick(std::size(values))] + "\n";
      text.insert(0, "[" + key.substr(0, key.find('.')) + "]\n" + key.substr(key.find('.') + 1) +
                         " = " + values[pick(std::size(values))] + "\n");
      break;
    }
    case 6: {  // replace the value after some '='
      const size_t eq = text.find('=', pick(text.size() + 1));
      if (eq == std::string::npos) break;
      const size_t end = text.find('\n', eq);
      text.replace(eq + 1, end == std::string::npos ? std::string::npos : end - eq - 1,
                   std::string(" ") + values[pick(std::size(values))]);
      break;
    }
    case 7: {  // unknown keys and sections
      text += pick(2) ? "\n[nonsense]\nkey = 1\n" : "\n[run]\nbogus_key = 3\n";
      break;
    }
    case 8: {  // deep nesting: arrays, inline tables, dotted keys
      const size_t depth = 1 + pick(20000);
      std::string nested;
      switch (random() % 3) {
        case 0:
          nested = "x = " + std::string(depth, '[') + std::string(depth, ']');
          break;
        case 1:
          for (size_t i = 0; i < std::min<size_t>(depth, 5000); ++i) nested += "{ a = ";
          nested = "x = " + nested + "1" + std::string(std::min<size_t>(depth, 5000) * 2, ' ');
          for (size_t i = 0; i < std::min<size_t>(depth, 5000); ++i) nested += "}";
          break;
        default:
          nested = "x";
          for (size_t i = 0; i < std::min<size_t>(depth, 5000); ++i) nested += ".a";
          nested += " = 1";
      }
      text.insert(0, nested + "\n");
      break;
    }
    default: {  // huge lattices and counts
      const char* huge[] = {"dims = [65536, 65536, 65536]",
                            "dims = [2147483648, 2]",
                            "dims = [0, 16]",
                            "dims = [3, 16]",
                            "dims = [16, 16, 16, 16, 16]",
                            "measurements = 9223372036854775807",
                            "replicas = 4294967297"};
      text += std::string("\n[lattice]\n") + huge[pick(std::size(huge))] + "\n";
    }
  }
  return text;
}

}  // namespace lattica::test
