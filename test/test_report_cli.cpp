// `kibench report` as a user runs it, on real CPU runs: one `kibench run`
// of the default small workload, a sweep of copies of it at other T, and a
// cohort with a cublas-floor run written by compare's fixture builder. The
// page is then rendered in headless Chromium — the charts must be laid out
// at a real size with every bar and point present — and screenshotted.
// Without Chromium the rendering checks are skipped with a warning (CI
// installs it: scripts/setup.sh --test).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/report/slug.hpp"
#include "test/cli_process.hpp"
#include "test/test_compare_support.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using kibench::json::Value;
using namespace kibench::test;

namespace {

const fs::path kSource = kibench::test::source_dir();
const fs::path kSmall = kSource / "workloads/small/small-v1000-h64-t32.json";
const std::string kQuick = "--min-samples 10 --max-samples 20 --min-time 0 --warmup 1";
const std::vector<std::int64_t> kSweepTokens{8, 16, 64}; // with the small workload's 32
constexpr const char *kHostileTitle = "<img src=x onerror=alert(1)> & \"quoted\"";

Value &member(Value &object, std::string_view key) {
  Value *found = object.as_object().find(key);
  REQUIRE(found != nullptr);
  return *found;
}

// The small workload at another T: the tokens axis and the shapes that
// follow it change; everything else (seeds included) stays.
fs::path write_sweep_workload(const fs::path &dir, std::int64_t tokens) {
  Value workload = kibench::json::parse_file(kSmall);
  member(member(workload, "metadata"), "name") = Value(fmt::format("report-sweep-t{}", tokens));
  Value &spec = member(workload, "spec");
  member(member(spec, "axes"), "tokens") = Value(tokens);
  Value &tensors = member(spec, "tensors");
  for (const char *name : {"student_input", "teacher_input", "target"})
    member(member(tensors, name), "shape").as_array()[0] = Value(tokens);
  const fs::path file = dir / fmt::format("sweep-t{}.json", tokens);
  kibench::test::write_file(file, kibench::json::pretty(workload) + "\n");
  return file;
}

std::vector<fs::path> directories_in(const fs::path &dir) {
  std::vector<fs::path> out;
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.is_directory()) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Made once per test process: the runs take a few seconds.
struct ReportFixture {
  TempDir tmp;
  fs::path runs = tmp.path() / "runs";
  fs::path floor_cohort = tmp.path() / "floor-cohort";
  fs::path report = tmp.path() / "report.html";
  fs::path charts = tmp.path() / "charts";
  std::string small_slug, sweep_slug;

  ReportFixture() {
    const auto real = run_kibench("run " + quoted(kSmall) + " --impl cpu-reference,cpu-fp64 --out " +
                                  quoted(runs) + " " + kQuick);
    INFO(real.out << real.err);
    REQUIRE(real.exit_code == 0);
    const fs::path small_run = directories_in(runs).front();

    const fs::path workloads = tmp.path() / "workloads";
    fs::create_directories(workloads / "operations");
    fs::copy_file(kSource / "workloads/operations/distill_jsd_loss.json",
                  workloads / "operations/distill_jsd_loss.json");
    std::string files;
    for (const std::int64_t t : kSweepTokens) files += quoted(write_sweep_workload(workloads, t)) + " ";
    const auto sweep =
        run_kibench("run " + files + "--impl cpu-reference,cpu-fp64 --out " + quoted(runs) + " " + kQuick);
    INFO(sweep.out << sweep.err);
    REQUIRE(sweep.exit_code == 0);

    // Text a producer controls, outside the digest (metadata): the report
    // must show it as text.
    Value workload = kibench::json::parse_file(small_run / "workload.json");
    member(member(workload, "metadata"), "title") = Value(kHostileTitle);
    kibench::test::write_manifest(small_run / "workload.json", workload);

    // A GPU-style cohort without a GPU: reference, fused and the floor.
    using kibench::test::FixtureRun;
    using kibench::test::quiet_samples;
    kibench::test::write_run_directory(
        floor_cohort, kibench::test::FixtureCase::standard(),
        {FixtureRun("reference", quiet_samples(4e6, 1)), FixtureRun("fused", quiet_samples(1.5e6, 2)),
         FixtureRun("cublas-floor", quiet_samples(1e6, 3)).with_status("incomplete_evidence")});

    const auto report_run =
        run_kibench("report " + quoted(runs) + " " + quoted(floor_cohort) + " --out " + quoted(report) +
                    " --title 'kibench report test' --charts " + quoted(charts));
    INFO(report_run.out << report_run.err);
    REQUIRE(report_run.exit_code == 0);
    const std::string workload_name = "distill-jsd-loss-small-default-hidden64-tokens32-vocab1000-bf16";
    small_slug = kibench::report::slug(workload_name);
    // A sweep is named after its operation and the axes it holds fixed.
    const Value operation = kibench::json::parse_file(kSource / "workloads/operations/distill_jsd_loss.json");
    const std::string operation_name = operation.find("metadata")->find("name")->as_string();
    sweep_slug = kibench::report::slug(operation_name + "-vocab 1000, hidden 64");
  }
};

const ReportFixture &fixture() {
  static const ReportFixture instance;
  return instance;
}

std::size_t count(const std::string &text, const std::string &needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

// The first of chromium / chromium-browser on PATH, or "".
std::string find_chromium() {
  for (const char *name : {"chromium", "chromium-browser"}) {
    if (std::system(fmt::format("command -v {} >/dev/null 2>&1", name).c_str()) == 0) return name;
  }
  return "";
}

std::string chromium_command(const std::string &chromium, const fs::path &profile) {
  // As root (containers, CI) Chromium refuses to start without
  // --no-sandbox; a fresh profile keeps parallel test runs apart.
  return fmt::format(
      "timeout 180 {} --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
      "--hide-scrollbars --user-data-dir={} ",
      chromium, quoted(profile));
}

using Attributes = std::map<std::string, std::string>;

// The attributes of every <svg data-testid=...> in a serialized DOM, by test id.
std::map<std::string, Attributes> charts_in(const std::string &dom) {
  std::map<std::string, Attributes> out;
  const std::regex tag("<svg\\b[^>]*>");
  const std::regex attribute(R"#(([a-zA-Z_:][-a-zA-Z0-9_:.]*)="([^"]*)")#");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), tag); it != std::sregex_iterator(); ++it) {
    Attributes attributes;
    const std::string text = it->str();
    for (auto a = std::sregex_iterator(text.begin(), text.end(), attribute); a != std::sregex_iterator(); ++a)
      attributes[(*a)[1]] = (*a)[2];
    if (attributes.contains("data-testid")) out[attributes["data-testid"]] = attributes;
  }
  return out;
}

int number(const Attributes &attributes, const std::string &key) {
  const auto found = attributes.find(key);
  REQUIRE(found != attributes.end());
  return std::stoi(found->second);
}

} // namespace

TEST_CASE("kibench report writes one self-contained page for real runs", "[cli][report]") {
  const ReportFixture &f = fixture();
  const std::string html = read_text(f.report);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK_THAT(html, Contains("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quoted&quot;"));
  CHECK(html.find("<img") == std::string::npos);
  for (const std::string kind : {"median", "speedup", "memory"})
    CHECK_THAT(html, Contains("data-testid=\"chart-" + kind + "-" + f.small_slug + "\""));
  CHECK_THAT(html, Contains("data-testid=\"chart-floor-" + f.small_slug + "-2\""));
  CHECK(html.find("data-testid=\"chart-floor-" + f.small_slug + "\"") ==
        std::string::npos); // no floor on a CPU
  CHECK_THAT(html, Contains("data-testid=\"chart-sweep-time-" + f.sweep_slug + "\""));
  CHECK_THAT(html, Contains("data-testid=\"chart-sweep-tflops-" + f.sweep_slug + "\""));
  // The environment the runs were measured on, from environment.json.
  CHECK_THAT(html, Contains("hardware.architecture"));
  // One run of each T, one cohort each, plus the floor cohort.
  CHECK(count(html, "class=\"card cohort\"") == 1 + kSweepTokens.size() + 1);

  // --charts: every chart of the page, and nothing else, as an SVG document.
  std::vector<std::string> ids;
  const std::regex test_id("<svg [^>]*data-testid=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), test_id); it != std::sregex_iterator(); ++it)
    ids.push_back((*it)[1].str() + ".svg");
  std::vector<std::string> files;
  for (const auto &entry : fs::directory_iterator(f.charts))
    files.push_back(entry.path().filename().string());
  std::sort(ids.begin(), ids.end());
  std::sort(files.begin(), files.end());
  CHECK(ids.size() == count(html, "<svg "));
  CHECK(files == ids);
  for (const std::string &file : files) {
    INFO(file);
    const std::string svg = read_text(f.charts / file);
    CHECK(svg.starts_with(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "));
    CHECK_THAT(svg, Contains("<style>"));
    CHECK(svg.ends_with("</svg>\n"));
  }
}

TEST_CASE("kibench report refuses bad input with exit code 2 and writes nothing", "[cli][report]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "report.html";
  const auto missing = run_kibench("report " + quoted(tmp.path() / "no-such-run") + " --out " + quoted(out));
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Contains("no-such-run"));
  CHECK_FALSE(fs::exists(out));

  kibench::test::write_file(tmp.path() / "not-json.json", "{ nope");
  const auto malformed =
      run_kibench("report " + quoted(tmp.path() / "not-json.json") + " --out " + quoted(out));
  CHECK(malformed.exit_code == 2);
  CHECK_FALSE(fs::exists(out));

  const auto no_folder = run_kibench("report " + quoted(fixture().runs) + " --out " +
                                     quoted(tmp.path() / "missing-folder" / "report.html"));
  CHECK(no_folder.exit_code == 2);
  CHECK_THAT(no_folder.err, Contains("does not exist"));

  // A status KernelIndex does not define.
  const fs::path unknown_status = tmp.path() / "unknown-status";
  kibench::test::write_run_directory(
      unknown_status, kibench::test::FixtureCase::standard(),
      {kibench::test::FixtureRun("cpu-reference", kibench::test::quiet_samples(1e6, 1))
           .with_status("finished")});
  const auto bad_status = run_kibench("report " + quoted(unknown_status) + " --out " + quoted(out));
  CHECK(bad_status.exit_code == 2);
  CHECK_THAT(bad_status.err,
             Contains("run.cpu-reference.json: spec.status: \"finished\" is not a BenchmarkRun status"));
  CHECK_FALSE(fs::exists(out));

  // --charts must name a folder (or one to create in an existing folder).
  kibench::test::write_file(tmp.path() / "a-file", "x");
  for (const fs::path &charts : {tmp.path() / "a-file", tmp.path() / "missing-folder" / "charts"}) {
    INFO(charts);
    const auto bad = run_kibench("report " + quoted(fixture().runs) + " --out " + quoted(out) + " --charts " +
                                 quoted(charts));
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Contains("--charts"));
    CHECK_FALSE(fs::exists(out));
  }
  CHECK_FALSE(fs::exists(tmp.path() / "missing-folder"));
}

TEST_CASE("the report renders in headless Chromium with every chart laid out", "[cli][report][chromium]") {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    WARN("chromium is not installed (scripts/setup.sh --test installs it): rendering checks skipped");
    return;
  }
  const ReportFixture &f = fixture();
  TempDir tmp;

  // A copy of the page with the measuring script appended, rendered to DOM.
  std::string html = read_text(f.report);
  const std::size_t body_end = html.rfind("</body>");
  REQUIRE(body_end != std::string::npos);
  html.insert(body_end,
              "<script>\n" + read_text(kSource / "test/report/measure_charts.js") + "\n</script>\n");
  const fs::path measured = tmp.path() / "measured.html";
  kibench::test::write_file(measured, html);
  const auto dump =
      run_command(chromium_command(chromium, tmp.path() / "profile-dom") +
                  "--window-size=1280,2000 --dump-dom " + quoted(fs::path("file://" + measured.string())));
  INFO(dump.err.substr(0, 2000));
  REQUIRE(dump.exit_code == 0);
  REQUIRE_THAT(dump.out, Contains("data-measured-charts="));

  const auto charts = charts_in(dump.out);
  // Bars and points the browser parsed into the SVG namespace.
  struct Expected {
    std::string test_id;
    int bars, points;
  };
  const std::string floor_slug = f.small_slug + "-2";
  const std::vector<Expected> expected{
      {"chart-median-" + f.small_slug, 2, 0},     {"chart-speedup-" + f.small_slug, 2, 0},
      {"chart-memory-" + f.small_slug, 4, 0},     {"chart-median-" + floor_slug, 3, 0},
      {"chart-speedup-" + floor_slug, 2, 0},      {"chart-floor-" + floor_slug, 2, 0},
      {"chart-sweep-time-" + f.sweep_slug, 0, 8}, {"chart-sweep-tflops-" + f.sweep_slug, 0, 8},
  };
  for (const Expected &e : expected) {
    INFO(e.test_id);
    REQUIRE(charts.contains(e.test_id));
    const Attributes &chart = charts.at(e.test_id);
    CHECK(number(chart, "width") > 0);
    CHECK(number(chart, "height") > 0);
    CHECK(number(chart, "data-rendered-width") > 200);
    CHECK(number(chart, "data-rendered-height") > 100);
    CHECK(number(chart, "data-rendered-right") <= 1280); // fits the window
    CHECK(number(chart, "data-rendered-bars") == e.bars);
    CHECK(number(chart, "data-rendered-points") == e.points);
    CHECK(number(chart, "data-rendered-invisible") == 0);
    CHECK_FALSE(chart.at("data-rendered-title").empty());
  }
  // Every chart the page has was measured, and the page ran no script of its own.
  std::smatch measured_count;
  REQUIRE(std::regex_search(dump.out, measured_count, std::regex(R"#(data-measured-charts="(\d+)")#")));
  CHECK(std::stoul(measured_count[1]) == charts.size());
  CHECK(count(dump.out, "<script") == 1);

  // Every table sits in a scrolling box and, at 1280 px, fits it.
  std::smatch tables, overflows;
  REQUIRE(std::regex_search(dump.out, tables, std::regex(R"#(data-tables="(\d+)")#")));
  REQUIRE(std::regex_search(dump.out, overflows, std::regex(R"#(data-table-overflows="([-\d ]*)")#")));
  std::istringstream widths(overflows[1].str());
  std::vector<int> overflow;
  for (int px = 0; widths >> px;) overflow.push_back(px);
  CHECK(overflow.size() == std::stoul(tables[1]));
  CHECK_FALSE(overflow.empty());
  for (const int px : overflow) CHECK(px <= 0);

  // The screenshot: a PNG of the requested size with content in it.
  const fs::path png = tmp.path() / "report.png";
  const auto shot =
      run_command(chromium_command(chromium, tmp.path() / "profile-png") + "--screenshot=" + quoted(png) +
                  " --window-size=1280,2000 " + quoted(fs::path("file://" + f.report.string())));
  INFO(shot.err.substr(0, 2000));
  REQUIRE(shot.exit_code == 0);
  REQUIRE(fs::exists(png));
  const std::string bytes = read_text(png);
  REQUIRE(bytes.size() > 24);
  CHECK(bytes.substr(0, 8) == "\x89PNG\r\n\x1a\n");
  const auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(bytes[at])) << 24) |
           (static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 2])) << 8) |
           static_cast<unsigned>(static_cast<unsigned char>(bytes[at + 3]));
  };
  CHECK(be32(16) == 1280); // IHDR width
  CHECK(be32(20) == 2000); // IHDR height
  // A blank 1280×2000 page compresses to a few kB; charts and tables do not.
  CHECK(bytes.size() > 40000);
}
