// A deck's values once read: each typed, where it came from, and all of
// them as the results record them; the run section as the core reads it.
#include "karma/deck.hpp"

#include "karma/error.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace karma {

const Deck::Value& Deck::at(const std::string& path) const {
  const auto it = values_.find(path);
  // A mini-app asking for a key its schema lacks is a programming error.
  if (it == values_.end()) throw Error(exit_runtime_error, "internal: no deck key " + path);
  return it->second;
}

std::int64_t Deck::integer(const std::string& path) const {
  return at(path).value.get<std::int64_t>();
}
double Deck::number(const std::string& path) const { return at(path).value.get<double>(); }
bool Deck::boolean(const std::string& path) const { return at(path).value.get<bool>(); }
std::string Deck::string(const std::string& path) const {
  return at(path).value.get<std::string>();
}
std::vector<std::int64_t> Deck::integer_list(const std::string& path) const {
  return at(path).value.get<std::vector<std::int64_t>>();
}
std::vector<std::string> Deck::string_list(const std::string& path) const {
  return at(path).value.get<std::vector<std::string>>();
}

std::string Deck::origin(const std::string& path) const {
  const std::string& o = at(path).origin;
  return o == "default" ? source_ + " (default value)" : o;
}

bool Deck::is_default(const std::string& path) const { return at(path).origin == "default"; }

void Deck::fail(const std::string& path, const std::string& message) const {
  throw InputError(origin(path) + ": " + path + ": " + message);
}

nlohmann::json Deck::resolved() const {
  nlohmann::json out = nlohmann::json::object();
  // No lambda over the binding: C++17 cannot capture one (clang refuses).
  for (const auto& [path, v] : values_) {
    std::string pointer = "/" + path;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    out[nlohmann::json::json_pointer(pointer)] = v.value;
  }
  return out;
}

RunSettings read_run_settings(const Deck& deck) {
  RunSettings run;
  if (deck.has("run.repetitions")) run.repetitions = deck.integer("run.repetitions");
  if (deck.has("run.warmup")) run.warmup = deck.integer("run.warmup");
  if (deck.has("run.inject_fault")) run.inject_fault = deck.string("run.inject_fault");
  if (deck.has("run.results_dir")) run.results_dir = deck.string("run.results_dir");
  if (deck.has("run.energy")) run.energy = deck.string("run.energy") == "on";
  if (deck.has("run.energy_window")) run.energy_window = deck.number("run.energy_window");
  if (deck.has("run.comm")) run.comm = deck.string("run.comm");
  return run;
}

}  // namespace karma
