// The harness's interleave order: a Williams design, so that within a
// cycle of rounds every implementation takes every place equally often and
// follows every other one equally often; and measure() samples in it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "kernels/cpu/host_device.hpp"
#include "lib/harness/harness.hpp"
#include "lib/harness/interleave_order.hpp"
#include "test/harness_test_support.hpp"

using namespace kibench;

TEST_CASE("interleave order: each round is a permutation, and over a cycle places and neighbours balance",
          "[harness]") {
  CHECK(interleave_order(0, 3).empty());
  CHECK(interleave_order(1, 7) == std::vector<std::size_t>{0});
  CHECK(interleave_order(2, 0) == std::vector<std::size_t>{0, 1});
  CHECK(interleave_order(2, 1) == std::vector<std::size_t>{1, 0});
  CHECK(interleave_order(4, 0) == std::vector<std::size_t>{0, 1, 3, 2});
  for (std::size_t n = 1; n <= 9; ++n) {
    INFO("n = " << n);
    const std::size_t cycle = interleave_cycle(n);
    CHECK(cycle == (n == 1 ? 1 : n % 2 == 0 ? n : 2 * n));
    std::vector<std::vector<int>> place(n, std::vector<int>(n, 0));
    std::map<std::pair<std::size_t, std::size_t>, int> follows;
    for (std::size_t round = 0; round < cycle; ++round) {
      const auto order = interleave_order(n, round);
      auto sorted = order;
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::size_t> all(n);
      std::iota(all.begin(), all.end(), 0);
      REQUIRE(sorted == all);
      for (std::size_t p = 0; p < n; ++p) ++place[order[p]][p];
      for (std::size_t p = 1; p < n; ++p) ++follows[{order[p - 1], order[p]}];
      // The design repeats after a cycle.
      CHECK(interleave_order(n, round + cycle) == order);
    }
    const int per_place = static_cast<int>(cycle / n);
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t p = 0; p < n; ++p) CHECK(place[k][p] == per_place);
    // Every ordered pair of distinct implementations as neighbours, equally
    // often: once a cycle for even n, twice for odd n.
    const int per_pair = n % 2 == 0 ? 1 : 2;
    CHECK(follows.size() == n * (n - 1));
    for (const auto &[pair, count] : follows) {
      CHECK(pair.first != pair.second);
      CHECK(count == per_pair);
    }
  }
}

namespace {

// Appends its index to a shared log on every run.
class LoggingImplementation final : public test::NullImplementation {
public:
  LoggingImplementation(std::size_t index, std::vector<std::size_t> &log) : index_(index), log_(log) {}
  [[nodiscard]] std::string name() const override { return "logging-" + std::to_string(index_); }
  void run(Pass) override { log_.push_back(index_); }

private:
  std::size_t index_;
  std::vector<std::size_t> &log_;
};

} // namespace

TEST_CASE("measure() samples each round in the interleave order, and in turn without interleaving",
          "[harness]") {
  ProtocolSettings s = test::exact_samples(6, 0, 0.0);
  std::vector<std::size_t> log;
  LoggingImplementation a(0, log), b(1, log), c(2, log);
  const auto results = measure({&a, &b, &c}, s);
  REQUIRE(results.size() == 3);
  std::vector<std::size_t> expected;
  for (std::size_t round = 0; round < 6; ++round) {
    const auto order = interleave_order(3, round);
    expected.insert(expected.end(), order.begin(), order.end());
  }
  CHECK(log == expected);
  for (const auto &m : results) {
    REQUIRE(m.samples.size() == 6);
    for (std::size_t k = 0; k < 6; ++k) CHECK(m.samples[k].round == k);
  }

  log.clear();
  s.interleave = false;
  measure({&a, &b, &c}, s);
  CHECK(log == std::vector<std::size_t>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2});
}

namespace {

// Every sample takes `ns` on a timer that reports exactly that: a lane with
// one value meets the noise target at its minimum count, a lane that
// cycles through three far-apart values never does.
class FixedTimer final : public SampleTimer {
public:
  explicit FixedTimer(std::vector<double> cycle) : cycle_(std::move(cycle)) {}
  void start() override {}
  void stop() override {}
  double elapsed_ns() override { return cycle_[n_++ % cycle_.size()]; }
  [[nodiscard]] std::string name() const override { return "fixed"; }

private:
  std::vector<double> cycle_;
  std::size_t n_ = 0;
};

class FixedImplementation final : public test::NullImplementation {
public:
  FixedImplementation(std::string name, std::vector<double> cycle)
      : name_(std::move(name)), cycle_(std::move(cycle)) {}
  [[nodiscard]] std::string name() const override { return name_; }
  void run(Pass) override {}
  std::unique_ptr<Device> open_device() override {
    return std::make_unique<test::TestDevice>([this] { return std::make_unique<FixedTimer>(cycle_); });
  }

private:
  std::string name_;
  std::vector<double> cycle_;
};

} // namespace

TEST_CASE("share_rounds keeps every lane sampling until the last one's rule is met", "[harness]") {
  ProtocolSettings s;
  s.cold = false;
  s.warmup_runs = 0;
  s.min_samples = 5;
  s.max_samples = 40;
  s.min_time_s = 0.0;
  s.sustained_time_s = 0.0;
  FixedImplementation steady("steady", {1000.0});
  FixedImplementation noisy("noisy", {1000.0, 2000.0, 3000.0});
  for (const bool share : {false, true}) {
    s.share_rounds = share;
    const auto results = measure({&steady, &noisy}, s);
    REQUIRE(results.size() == 2);
    CHECK(results[1].samples.size() == 40); // never meets its noise target: the cap
    // The steady lane's own rule is met at 5 samples either way; with shared
    // rounds it samples on, beside the noisy one, to the cap.
    CHECK(results[0].samples.size() == (share ? 40u : 5u));
    CHECK(results[0].stop_reason == "noise_target");
    CHECK(results[1].stop_reason == "max_samples");
  }
  CHECK(s.describe().find(kShareRoundsSentence) != std::string::npos);
  s.share_rounds = false;
  CHECK(s.describe().find(kShareRoundsSentence) == std::string::npos);
}
