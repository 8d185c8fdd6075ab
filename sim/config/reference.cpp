// The README's input reference: a markdown table of every key, written from the schema.

#include <cmath>
#include <limits>
#include <sstream>

#include "sim/config/reader.hpp"
#include "sim/config/schema.hpp"

namespace lattica {

namespace {

using config::KeySpec;

/// A bound as text: 2^40 for large powers of two, integers without a fraction.
std::string bound_text(long double x) {
  if (x >= (1LL << 20) && x == std::floor(x)) {
    const int exponent = static_cast<int>(std::log2(x));
    if (std::ldexp(1.0L, exponent) == x) return "2^" + std::to_string(exponent);
  }
  if (x == std::floor(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<int64_t>(x));
  return config::shortest(static_cast<double>(x));
}

std::string models_text(unsigned models) {
  if (models == config::kAllModels) return "all";
  std::vector<std::string> names;
  if (models & config::kIsing) names.push_back("Ising");
  if (models & config::kPotts) names.push_back("Potts");
  if (models & config::kOn) names.push_back("O(n)");
  if (models & config::kPhi4) names.push_back("phi^4");
  return config::join(names, ", ");
}

/// The allowed strings, each with its models where it does not apply to all.
std::string choices_text(const KeySpec& spec) {
  std::string text;
  for (size_t i = 0; i < spec.choices.size(); ++i) {
    const config::Choice& choice = spec.choices[i];
    text += i == 0 ? "" : i + 1 == spec.choices.size() ? " or " : ", ";
    text += std::string("`\"") + choice.name + "\"`";
    if (choice.models != config::kAllModels && choice.models != spec.models)
      text += " (" + models_text(choice.models) + ")";
  }
  return text;
}

std::string type_text(const KeySpec& spec) {
  using config::KeyType;
  std::string text;
  switch (spec.type) {
    case KeyType::integer:
      text = spec.max_int == std::numeric_limits<int64_t>::max()
                 ? "integer >= " + bound_text(spec.min_int)
                 : "integer " + bound_text(spec.min_int) + "-" + bound_text(spec.max_int);
      break;
    case KeyType::number:
      if (spec.bound_reason && std::isinf(spec.max)) {
        text = "number " + std::string(spec.min_open ? "> " : ">= ") + bound_text(spec.min);
      } else if (spec.bound_reason) {
        text = "number in " + std::string(spec.min_open ? "(" : "[") + bound_text(spec.min) + ", " +
               bound_text(spec.max) + (spec.max_open ? ")" : "]");
      } else {
        text = std::isinf(spec.min) ? "number" : "number >= " + bound_text(spec.min);
      }
      break;
    case KeyType::boolean:
      text = "true or false";
      break;
    case KeyType::string:
      text = "string";
      break;
    case KeyType::choice:
      text = choices_text(spec);
      break;
    case KeyType::choice_list:
      text = "array of 1-" + std::to_string(spec.max_items) + " strings: " + choices_text(spec);
      break;
    case KeyType::dims:
      text = "array of 1-4 even integers >= 2";
      break;
    case KeyType::grid:
      text = "array of 1-4 integers >= 1";
      break;
    case KeyType::duration:
      text = "`\"[D-]HH:MM:SS\"`";
      break;
    case KeyType::ladder:
      if (spec.min_int == spec.max_int) {  // a pair such as an interval
        text = "array of " + bound_text(spec.min_int) + " numbers";
        break;
      }
      text = "array of " + bound_text(spec.min_int) + "-" + bound_text(spec.max_int) +
             (std::isinf(spec.min) ? " numbers" : " numbers >= " + bound_text(spec.min)) +
             ", monotone";
      break;
  }
  return spec.sweepable ? text + ", or a sweep" : text;
}

std::string default_text(const KeySpec& spec) {
  switch (spec.presence) {
    case config::Presence::required:
      return "required";
    case config::Presence::optional:
      return "none";
    case config::Presence::from_source:
      return spec.default_doc;
    case config::Presence::defaulted:
      break;
  }
  std::ostringstream os;
  os << '`';
  if (const auto* i = std::get_if<int64_t>(&spec.fallback)) os << *i;
  if (const auto* x = std::get_if<double>(&spec.fallback)) os << config::shortest(*x);
  if (const auto* b = std::get_if<bool>(&spec.fallback)) os << (*b ? "true" : "false");
  if (const auto* s = std::get_if<const char*>(&spec.fallback)) os << '"' << *s << '"';
  os << '`';
  return os.str();
}

/// A table cell: '|' would end it.
std::string cell(const std::string& text) {
  std::string out;
  for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

}  // namespace

std::string input_reference_markdown() {
  std::string out =
      "| key | type | default | models | meaning |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const KeySpec& spec : config::key_specs()) {
    const std::string models = spec.when_doc ? spec.when_doc : models_text(spec.models);
    out += "| `" + spec.name() + "` | " + cell(type_text(spec)) + " | " + cell(default_text(spec)) +
           " | " + cell(models) + " | " + cell(spec.doc ? spec.doc : spec.hint) + " |\n";
  }
  return out;
}

}  // namespace lattica
