#include "lib/report/report_builder.hpp"

#include <algorithm>

#include "lib/compare/compare.hpp"
#include "lib/compare/run_loader.hpp"
#include "lib/report/cohort_section.hpp"
#include "lib/report/environment_facts.hpp"
#include "lib/report/manifest_index.hpp"
#include "lib/report/run_figures.hpp"
#include "lib/report/slug.hpp"
#include "lib/report/sweep_finder.hpp"

namespace kibench::report {

ReportModel build_report(const std::vector<std::filesystem::path> &arguments, const ReportOptions &options) {
  compare::CompareOptions compare_options;
  compare_options.baseline = options.baseline;
  compare_options.bootstrap = options.bootstrap;
  const compare::CompareReport compared =
      compare::compare_runs(compare::load_runs(arguments), compare_options);
  const ManifestIndex index(compared.runs);

  ReportModel model;
  model.title = options.title;
  model.generator = "kibench " KIBENCH_VERSION;
  for (const auto &argument : arguments) model.inputs.push_back(argument.string());
  model.anchor_choice = compared.anchor_choice;
  model.bootstrap = compared.bootstrap;
  model.run_count = compared.runs.size();

  std::vector<RunFigures> figures;
  figures.reserve(compared.runs.size());
  for (const auto &run : compared.runs) figures.push_back(read_run_figures(run, index));

  SlugRegistry slugs;
  for (const compare::Cohort &cohort : compared.cohorts)
    model.cohorts.push_back(describe_cohort(compared, cohort, figures, index, slugs));
  model.sweeps = find_sweeps(compared.runs, figures, index, slugs);

  std::vector<std::string> seen;
  for (const auto &run : compared.runs) {
    if (std::find(seen.begin(), seen.end(), run.environment_digest) != seen.end()) continue;
    seen.push_back(run.environment_digest);
    model.environments.push_back(
        describe_environment(run.environment_digest, run.environment_name,
                             index.find(run.environment_digest, "ExecutionEnvironment", run)));
  }
  return model;
}

} // namespace kibench::report
