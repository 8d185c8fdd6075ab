#pragma once
// Typed, validated access to the keys of a parsed input, driven by the schema; collects every
// problem as a message "where: key = value: reason".

#include <toml++/toml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/config/schema.hpp"

namespace lattica::config {

/// Values that replace swept keys for one point of a sweep: "section.key" -> value.
using Substitutions = std::map<std::string, const toml::node*>;

class Reader {
 public:
  Reader(const toml::table& root, std::string source, std::vector<std::string>& errors,
         Substitutions substitutions = {})
      : root_(root),
        source_(std::move(source)),
        errors_(errors),
        substitutions_(std::move(substitutions)) {}

  /// The value given for section.key (a sweep point's value for a swept key), or null.
  const toml::node* find(const char* section, const char* key) const;

  /// Reports node's value for the key `name` as wrong for `reason`.
  void fail(const toml::node& node, const std::string& name, const std::string& reason);

  /// Reports the key `name` ("section.key") as missing: `what` says why it is required.
  void missing(const std::string& name, const std::string& what);

  /// Reads every key of the schema into c, in the table's order, except those in `skip`
  /// (names "section.key" that a cross-key rule has already judged).
  void read_keys(Config& c, const std::set<std::string>& skip);

  /// Reports sections and keys the schema does not know.
  void reject_unknown();

 private:
  void read_key(const KeySpec& spec, Config& c);
  int64_t integer(const KeySpec& spec, const toml::node* node);
  double number(const KeySpec& spec, const toml::node* node);
  std::string choice(const KeySpec& spec, const toml::node* node,
                     const std::vector<std::string>& choices);
  std::vector<std::string> choice_list(const KeySpec& spec, const toml::node& node,
                                       const std::vector<std::string>& choices);
  // Keys with checks of their own (special_keys.cpp).
  std::vector<int64_t> dims(const KeySpec& spec, const toml::node* node);
  std::vector<int> grid(const KeySpec& spec, const toml::node& node);
  std::string duration(const KeySpec& spec, const toml::node& node);
  std::vector<double> ladder(const KeySpec& spec, const toml::node& node);

  const toml::table& root_;
  std::string source_;
  std::vector<std::string>& errors_;
  Substitutions substitutions_;
};

/// Items joined with sep.
std::string join(const std::vector<std::string>& items, const char* sep);

/// The shortest text that reads back to the same double, always as a float: 0.3, 1.0.
std::string shortest(double x);

/// A value as messages show it: floats as by shortest, long values cut at 60 characters.
std::string show(const toml::node& node);

/// "file:line:column" for a node from the file; the override text for a node from --set.
std::string where(const toml::source_region& region, const std::string& fallback);

/// Seconds of a duration "[D-]HH:MM:SS" (Slurm's format), or nothing when malformed.
std::optional<double> parse_walltime(const std::string& text);

}  // namespace lattica::config
