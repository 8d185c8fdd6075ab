#pragma once
// What the parts of the configuration code (sim/config/*.cpp) give each other.

#include <toml++/toml.h>

#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/config/reader.hpp"

namespace lattica::config {

/// Reads and validates one point (the whole input, or one point of a sweep): every key of the
/// schema, then the rules that involve several keys. Problems go to `errors`.
Config read_point(const toml::table& root, const std::string& source_name,
                  const Substitutions& substitutions, std::vector<std::string>& errors);

/// Refuses couplings for which a number the run computes overflows its floating-point type.
/// Preconditions: c is otherwise valid (dims and the update sequence read without errors).
void refuse_overflowing_couplings(const Config& c, Reader& r);

/// Applies --set, --backend, --output and --seed to the parsed input, in that order (later
/// wins); malformed overrides go to `errors`.
void apply_overrides(toml::table& root, const ConfigOverrides& overrides,
                     std::vector<std::string>& errors);

/// Every key that applies to c with its final value, as TOML (Config::resolved_toml).
std::string resolved_text(const Config& c);

/// The keys that determine the chain, as TOML (Config::chain_toml).
std::string chain_text(const Config& c);

/// The text of an input file, refused (ConfigError) when unreadable or larger than
/// kMaxInputBytes.
std::string read_input_file(const std::string& path);

}  // namespace lattica::config
