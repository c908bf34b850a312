// YAML input decks with a schema: typed keys with defaults, ranges and
// enumerations; anything the schema does not know is an error.
//
// Every error is an InputError (exit 2) whose message starts with where the
// value came from: "deck.yaml:3:11: stream.layout: ..." for the deck,
// "--set stream.layout=...: stream.layout: ..." for the command line.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace karma {

enum class KeyType { integer, number, boolean, string, choice, integer_list, choice_list };

// What the run rules (docs/run-rules.md) let a reportable run change of a
// class deck: fixed, nothing; axis, any choice in either tier (layout,
// precision: each is its own case); tuning, only in the optimized tier
// (implementations, launch choices); free, what changes no figure.
enum class Rule { fixed, axis, tuning, free };
const char* rule_name(Rule rule);

struct KeySpec {
  std::string path;  // dotted: "stream.shape"
  KeyType type;
  std::string help;
  nlohmann::json default_value;
  std::optional<double> min;  // integer, number and list elements
  std::optional<double> max;
  std::vector<std::string> choices;  // choice, choice_list
  std::vector<std::size_t> lengths;  // allowed list lengths; empty: any >= 1
  Rule rule = Rule::fixed;
};

class Schema {
 public:
  Schema& integer(const std::string& path, std::int64_t def, const std::string& help,
                  std::optional<std::int64_t> min = std::nullopt,
                  std::optional<std::int64_t> max = std::nullopt);
  Schema& number(const std::string& path, double def, const std::string& help,
                 std::optional<double> min = std::nullopt,
                 std::optional<double> max = std::nullopt);
  Schema& boolean(const std::string& path, bool def, const std::string& help);
  Schema& string(const std::string& path, const std::string& def, const std::string& help);
  Schema& choice(const std::string& path, const std::string& def,
                 const std::vector<std::string>& choices, const std::string& help);
  Schema& integer_list(const std::string& path, const std::vector<std::int64_t>& def,
                       const std::string& help, std::vector<std::size_t> lengths = {},
                       std::optional<std::int64_t> min = std::nullopt);
  Schema& choice_list(const std::string& path, const std::vector<std::string>& def,
                      const std::vector<std::string>& choices, const std::string& help);

  // The `run:` section every mini-app shares (RunSettings, below, is what
  // the core reads of it): the repetitions and warm-ups of each kernel, the results folder,
  // energy and the path of device data between ranks.
  Schema& run_section(std::int64_t repetitions, std::int64_t warmup);
  // The same for a mini-app whose timed work is its steps (contact,
  // measure_steps): no run.repetitions, and run.warmup counts what
  // `warmup_help` says.
  Schema& stepped_run_section(std::int64_t warmup, const std::string& warmup_help);
  // run.energy and run.energy_window (part of the run section).
  Schema& energy_keys();
  // run.comm, the path of device data between ranks (part of the run section).
  Schema& comm_key();
  // run.inject_fault: "none" and the app's faults, each {name, what it breaks};
  // the tests use them to see each check fail (exit 1).
  Schema& faults(const std::vector<std::pair<std::string, std::string>>& faults);
  // A key the suite no longer reads: a deck or --set that names it is refused
  // with `instead`, which names the key to use. `same_work` is the value at
  // which it ran what the suite runs now by default, so that results that
  // still hold the key pair with newer ones (the JSON schema's x-retired).
  Schema& retired(const std::string& path, const std::string& instead, nlohmann::json same_work);

  // Marks declared keys with what the run rules let a run change (the JSON
  // schema's x-rules); a key left unmarked is fixed.
  Schema& rule(Rule rule, const std::vector<std::string>& paths);

  const KeySpec* find(const std::string& path) const;
  bool is_section(const std::string& path) const;
  // What to use instead of a retired key; nullptr for any other path.
  const std::string* retired_hint(const std::string& path) const;
  const std::vector<KeySpec>& keys() const { return keys_; }
  // Known key paths nearest to an unknown one (for "did you mean").
  std::string suggest(const std::string& unknown) const;
  // Every key with its type, default and meaning, for --help.
  std::string help_text() const;
  // The same keys as a JSON Schema (draft 2020-12) of the resolved deck, for
  // --help=json: an object per section, no other keys, each key with its
  // type, default, range, choices and meaning.
  nlohmann::json json_schema(const std::string& title) const;

 private:
  Schema& add(KeySpec spec);
  std::vector<KeySpec> keys_;
  struct Retired {
    std::string path, instead;
    nlohmann::json same_work;
  };
  std::vector<Retired> retired_;
};

std::string describe_type(const KeySpec& spec);

class Deck {
 public:
  // Reads and validates the deck, then applies `key=value` overrides.
  static Deck load(const std::string& path, const Schema& schema,
                   const std::vector<std::string>& overrides = {});
  // The same from text already in memory; `name` stands for the file.
  static Deck parse(const std::string& text, const std::string& name, const Schema& schema,
                    const std::vector<std::string>& overrides = {});

  std::int64_t integer(const std::string& path) const;
  double number(const std::string& path) const;
  bool boolean(const std::string& path) const;
  std::string string(const std::string& path) const;
  std::vector<std::int64_t> integer_list(const std::string& path) const;
  std::vector<std::string> string_list(const std::string& path) const;

  // For checks the schema cannot express (a size whose byte count
  // overflows): throws an InputError located at the key's origin.
  [[noreturn]] void fail(const std::string& path, const std::string& message) const;
  // "file:line:col" or "--set ..." or "default" for a key.
  std::string origin(const std::string& path) const;
  // Whether the schema declares the key (contact's has no run.repetitions).
  bool has(const std::string& path) const { return values_.count(path) != 0; }
  // Whether the key was left at the schema's default (neither the deck
  // nor --set gave it).
  bool is_default(const std::string& path) const;

  // Every key, defaults included, as nested JSON: goes into the results.
  nlohmann::json resolved() const;
  const std::string& source() const { return source_; }
  const std::string& sha256() const { return sha256_; }

 private:
  struct Value {
    nlohmann::json value;
    std::string origin;
  };
  const Value& at(const std::string& path) const;

  std::string source_;
  std::string sha256_;
  std::map<std::string, Value> values_;
};

// The deck's `run:` section (Schema::run_section), read once by the core:
// run_main reads it after the deck into Context::run (karma/app.hpp), the
// harness applies its repetitions and warm-ups, and run_main records them
// in the results; a mini-app reads there only what its own work needs: the
// fault to inject, a check of its own on the counts (stream's bound on
// iterations, matvec's rounds), contact's warm-up sweeps.
struct RunSettings {
  // run.repetitions; 0 where the schema declares none (contact's timed
  // work is its steps).
  std::int64_t repetitions = 0;
  std::int64_t warmup = 0;            // run.warmup
  std::string inject_fault = "none";  // run.inject_fault: "none" or one of the app's faults
  std::string results_dir = ".";      // run.results_dir
  bool energy = false;                // run.energy: on
  double energy_window = 0.5;         // run.energy_window, seconds
  std::string comm = "auto";          // run.comm, the path asked for
};

// The run section of a resolved deck; a key the schema does not declare
// keeps the default above.
RunSettings read_run_settings(const Deck& deck);

}  // namespace karma
