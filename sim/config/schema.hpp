#pragma once
// The input schema: one row per key a Lattica input may hold. Validation (reader.cpp), the
// resolved echo and the resume comparison (echo.cpp) and the README's input reference
// (reference.cpp) all read this one table, so adding a key is adding a row.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/config.hpp"

namespace lattica::config {

/// How a key's value is read and checked. choice_list, grid and duration rows are optional
/// keys (Presence::optional): they have no default.
enum class KeyType {
  integer,      ///< an integer in [min_int, max_int]
  number,       ///< a finite integer or float >= min, and within the interval when it has one
  boolean,      ///< true or false
  string,       ///< a non-empty string
  choice,       ///< one of the choices for the model
  choice_list,  ///< an array of 1 to max_items strings, each one of the choices for the model
  dims,         ///< lattice.dims: 1 to 4 even sizes whose lattice the RNG can name and memory holds
  grid,         ///< parallel.grid: 1 to 4 box counts >= 1
  duration,     ///< run.walltime: "[D-]HH:MM:SS" (or a TOML time) beyond the walltime margin
  ladder,       ///< [tempering]: 2 to max_items finite numbers >= min, strictly monotone
};

/// Models as bits: the models a key, or a choice of a key, applies to.
enum ModelBits : unsigned { kIsing = 1, kPotts = 2, kOn = 4, kPhi4 = 8 };
constexpr unsigned kAllModels = kIsing | kPotts | kOn | kPhi4;
constexpr unsigned kContinuous = kOn | kPhi4;

/// What an absent key means (where it applies).
enum class Presence {
  required,     ///< an error
  defaulted,    ///< the row's fallback
  optional,     ///< nothing: the field stays empty and the echo leaves the key out
  from_source,  ///< a value computed from the input's name (output.path)
};

/// Whether a resumed run must keep the key's value (whether it is in chain_toml).
enum class ChainRole {
  no,
  yes,
  unless_default,  ///< only a value other than the default (which older files leave out)
};

/// One allowed string and the models it is allowed for.
struct Choice {
  const char* name;
  unsigned models = kAllModels;
};

/// An update pass's name in update.sequence, the algorithm the engine runs for it
/// (sim/engine/pass_registry.hpp picks the pass) and the models that have it.
struct PassName {
  const char* name;
  UpdateAlgorithm algorithm;
  unsigned models;
};
/// A coupling parallel tempering can vary: model.<key>, replaced by the ladder tempering.<key>.
struct TemperedCoupling {
  const char* key;                      ///< "beta", "kappa", "lambda" or "h"
  double Config::*value;                ///< the model's coupling (a ladder's first rung)
  std::vector<double> Config::*ladder;  ///< its ladder; empty: not tempered
};
const std::vector<TemperedCoupling>& tempered_couplings();

/// Every pass name, in the order messages list them: a new pass registers its name here.
const std::vector<PassName>& pass_names();
/// The algorithm of a pass name. Precondition: a name pass_names() lists.
UpdateAlgorithm update_algorithm_named(const std::string& name);

/// Where a key's value lives in Config.
using Field = std::variant<int Config::*, int64_t Config::*, uint64_t Config::*, double Config::*,
                           bool Config::*, std::string Config::*,
                           std::vector<std::string> Config::*, std::vector<int64_t> Config::*,
                           std::vector<int> Config::*, std::vector<double> Config::*>;

/// A default value: integer, number, boolean or string.
using Fallback = std::variant<std::monostate, int64_t, double, bool, const char*>;

/// One key: how to read, check, store, echo, compare and document it. Rows are built with the
/// chained setters below, e.g. KeySpec("run", "threads", ...).defaults_to(0).range(0, 4096).
struct KeySpec {
  KeySpec(const char* section, const char* key, KeyType type, Field field)
      : section(section), key(key), type(type), field(field) {}

  std::string name() const { return std::string(section) + "." + key; }

  const char* section;
  const char* key;
  KeyType type;
  Field field;
  Presence presence = Presence::optional;
  Fallback fallback;
  std::string (*from_source)(const std::string& source) = nullptr;  ///< Presence::from_source
  const char* default_doc = nullptr;  ///< the README's default when it is not a plain value
  int64_t min_int = 0, max_int = std::numeric_limits<int64_t>::max();
  /// Numbers: every value must be >= min; with an interval (bound_reason set) also inside
  /// (min, max) with the ends open or closed as given, else bound_reason is the message.
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false, max_open = false;
  const char* bound_reason = nullptr;
  std::vector<Choice> choices;  ///< choice, choice_list: in the order messages list them
  size_t max_items = 1;         ///< choice_list
  unsigned models = kAllModels;
  bool (*also_when)(const Config&) = nullptr;  ///< a further condition for the key to apply
  const char* when_doc = nullptr;              ///< the README's models text for also_when
  const char* refusal = nullptr;               ///< the message when given where it does not apply
  bool echo = true;  ///< in resolved_toml (false for an alias of another key)
  ChainRole chain = ChainRole::yes;
  bool sweepable = false;     ///< a sweep may give a list (or range) of values
  const char* hint = "";      ///< what the key is, in parentheses in messages
  const char* doc = nullptr;  ///< the README's meaning; the hint when null

  // Setters that build a row; each returns the row for the next.
  KeySpec& required() {
    presence = Presence::required;
    return *this;
  }
  KeySpec& defaults_to(int v) { return defaulted(Fallback(std::in_place_type<int64_t>, v)); }
  KeySpec& defaults_to(double v) { return defaulted(Fallback(std::in_place_type<double>, v)); }
  KeySpec& defaults_to(bool v) { return defaulted(Fallback(std::in_place_type<bool>, v)); }
  KeySpec& defaults_to(const char* v) {
    return defaulted(Fallback(std::in_place_type<const char*>, v));
  }
  KeySpec& computed(std::string (*make)(const std::string&), const char* doc_text) {
    presence = Presence::from_source;
    from_source = make;
    default_doc = doc_text;
    return *this;
  }
  KeySpec& range(int64_t lo, int64_t hi) {
    min_int = lo;
    max_int = hi;
    return *this;
  }
  KeySpec& at_least(double lo) {
    min = lo;
    return *this;
  }
  KeySpec& within(bool lo_open, double hi, bool hi_open, const char* reason) {
    min_open = lo_open;
    max = hi;
    max_open = hi_open;
    bound_reason = reason;
    return *this;
  }
  KeySpec& one_of(std::vector<Choice> allowed, size_t items = 1) {
    choices = std::move(allowed);
    max_items = items;
    return *this;
  }
  KeySpec& for_models(unsigned bits) {
    models = bits;
    return *this;
  }
  KeySpec& when(bool (*condition)(const Config&), const char* doc_text) {
    also_when = condition;
    when_doc = doc_text;
    return *this;
  }
  KeySpec& refused_with(const char* reason) {
    refusal = reason;
    return *this;
  }
  KeySpec& alias() {
    echo = false;
    chain = ChainRole::no;
    return *this;
  }
  KeySpec& chain_role(ChainRole role) {
    chain = role;
    return *this;
  }
  KeySpec& sweep() {
    sweepable = true;
    return *this;
  }
  KeySpec& explained(const char* hint_text, const char* doc_text = nullptr) {
    hint = hint_text;
    doc = doc_text;
    return *this;
  }

 private:
  KeySpec& defaulted(Fallback v) {
    presence = Presence::defaulted;
    fallback = v;
    return *this;
  }
};

/// Every key, grouped by section: sections and keys in the order messages and the README list
/// them, which is also the order they are read in.
const std::vector<KeySpec>& key_specs();

/// The keys of a run of measurements that population annealing ([annealing]) has no use for:
/// its schedule replaces model.beta, its steps the run's sweeps and measurements; annealed runs
/// are neither checkpointed, snapshotted, nor tempered. Under [annealing] they are not read,
/// and refused when given.
const std::vector<std::pair<const char*, const char*>>& keys_annealing_replaces();

/// Whether spec is a model coupling that a ladder of c replaces, or a key that population
/// annealing replaces (keys_annealing_replaces): it is neither read nor echoed.
bool replaced_by_ladder(const KeySpec& spec, const Config& c);

/// The sections, in the order of the table.
std::vector<std::string> section_names();

/// The row for section.key, or null.
const KeySpec* find_spec(const std::string& section, const std::string& key);

/// The bit of model.kind ("ising", "potts", "on", "phi4"); 0 for anything else.
unsigned model_bit(const std::string& kind);

/// Whether a key applies to c: its model, and its further condition on keys read before it.
bool applies(const KeySpec& spec, const Config& c);

/// The strings of spec allowed for c's model, in the table's order.
std::vector<std::string> choices_for(const KeySpec& spec, const Config& c);

/// The message for spec given where it does not apply.
std::string refusal_reason(const KeySpec& spec);

/// Whether an update sequence has a whole-lattice Langevin pass ("langevin" or "mala").
bool uses_langevin(const std::vector<std::string>& sequence);

/// "<stem>.h5" for the input file "dir/<stem>.toml": output.path's default.
std::string default_output_path(const std::string& source_name);

}  // namespace lattica::config
