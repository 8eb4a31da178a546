#include "lib/run/repetitions.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/core.h>

#include "lib/stats/summary.hpp"

namespace kibench {

std::vector<RepetitionSpread> repetition_spread(const std::vector<std::vector<WorkloadOutcome>> &repetitions) {
  std::vector<RepetitionSpread> out;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const auto &outcomes : repetitions)
    for (const WorkloadOutcome &w : outcomes)
      for (const ImplementationOutcome &i : w.implementations) {
        if (i.facts.failed() || i.facts.measurement.samples.empty()) continue;
        const auto key = std::make_pair(w.workload.name, i.facts.name);
        auto [at, fresh] = index.try_emplace(key, out.size());
        if (fresh) out.push_back({w.workload.name, i.facts.name, {}, 0.0, 0.0});
        out[at->second].medians_ns.push_back(i.result.latency_ns.median);
      }
  for (RepetitionSpread &s : out) {
    const stats::Summary summary = stats::summarize(s.medians_ns);
    s.mean_ns = summary.mean;
    s.stdev_ns = summary.stdev;
  }
  return out;
}

std::string render_repetition_table(const std::vector<RepetitionSpread> &spread, std::size_t repetitions) {
  if (spread.empty()) return "";
  std::size_t workload_width = 8, name_width = 14;
  for (const RepetitionSpread &s : spread) {
    workload_width = std::max(workload_width, s.workload.size());
    name_width = std::max(name_width, s.implementation.size());
  }
  std::string out = fmt::format(
      "\nrun to run ({} repetitions: each one's median, their mean, standard deviation and coefficient of "
      "variation):\n{:<{}}  {:<{}}  {:>10}  {:>10}  {:>7}  medians ms\n",
      repetitions, "workload", workload_width, "implementation", name_width, "mean ms", "stdev ms", "cv");
  for (const RepetitionSpread &s : spread) {
    std::string medians;
    for (const double m : s.medians_ns) medians += fmt::format("{}{:.3f}", medians.empty() ? "" : " ", m * 1e-6);
    out += fmt::format("{:<{}}  {:<{}}  {:>10.3f}  {:>10.3f}  {:>6.2f}%  {}{}\n", s.workload, workload_width,
                       s.implementation, name_width, s.mean_ns * 1e-6, s.stdev_ns * 1e-6, 100.0 * s.cv(), medians,
                       s.medians_ns.size() < repetitions
                           ? fmt::format(" (measured in {} of {})", s.medians_ns.size(), repetitions)
                           : "");
  }
  return out;
}

} // namespace kibench
