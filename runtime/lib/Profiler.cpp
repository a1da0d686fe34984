//===- Profiler.cpp - Time per kernel kind --------------------------------===//

#include "autoshard/Runtime/Profiler.h"
#include "autoshard/Runtime/Format.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace autoshard::rt;

double Profiler::now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

size_t Profiler::getSlot(const std::string &kind) {
  auto [it, inserted] = slots.try_emplace(kind, entries.size());
  if (inserted)
    entries.push_back({kind, 0, 0});
  return it->second;
}

std::vector<Profiler::Entry> Profiler::getEntries() const {
  std::vector<Entry> used;
  for (const Entry &e : entries)
    if (e.calls > 0)
      used.push_back(e);
  std::stable_sort(
      used.begin(), used.end(),
      [](const Entry &a, const Entry &b) { return a.seconds > b.seconds; });
  return used;
}

std::string Profiler::formatTable() const {
  std::vector<Entry> used = getEntries();
  double total = 0;
  for (const Entry &e : used)
    total += e.seconds;
  double n = static_cast<double>(std::max<int64_t>(runs, 1));
  std::string out =
      format("profile: %lld run%s, %.3f ms wall (%.4f ms per run)\n",
             static_cast<long long>(runs), runs == 1 ? "" : "s",
             wallSeconds * 1e3, wallSeconds * 1e3 / n);
  out += format("%-28s %10s %12s %10s %10s %7s\n", "kind", "calls", "total ms",
                "calls/run", "ms/run", "share");
  for (const Entry &e : used)
    out +=
        format("%-28s %10lld %12.3f %10.1f %10.4f %6.1f%%\n", e.kind.c_str(),
               static_cast<long long>(e.calls), e.seconds * 1e3, e.calls / n,
               e.seconds * 1e3 / n, total > 0 ? 100 * e.seconds / total : 0.0);
  out += format("%-28s %10s %12.3f %10s %10.4f %6.1f%%\n", "all kinds", "",
                total * 1e3, "", total * 1e3 / n, total > 0 ? 100.0 : 0.0);
  return out;
}

/// `s` as a JSON string (kind names are plain ASCII; quote what JSON needs).
static std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      out += format("\\u%04x", c);
    else
      out += c;
  }
  return out + "\"";
}

std::string Profiler::formatJson() const {
  std::string out = format("{\"runs\": %lld, \"wall_ms\": %.6f, \"kinds\": [",
                           static_cast<long long>(runs), wallSeconds * 1e3);
  bool first = true;
  for (const Entry &e : getEntries()) {
    out += format("%s\n  {\"kind\": ", first ? "" : ",") + jsonString(e.kind) +
           format(", \"calls\": %lld, \"ms\": %.6f}",
                  static_cast<long long>(e.calls), e.seconds * 1e3);
    first = false;
  }
  return out + "\n]}\n";
}
