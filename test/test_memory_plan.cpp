// Memory groups (lib/run/memory_plan.hpp): which lanes are timed together.
#include <catch2/catch.hpp>

#include "lib/run/memory_plan.hpp"

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

using Groups = std::vector<std::vector<std::size_t>>;

} // namespace

TEST_CASE("memory plan: everything that fits together is one group", "[memory-plan]") {
  const std::vector<kibench::LaneNeed> needs{{"a", 2 * kGiB}, {"b", 3 * kGiB}, {"host", 0}};
  CHECK(kibench::plan_timing_groups(needs, 20 * kGiB) == Groups{{2, 0, 1}});
}

TEST_CASE("memory plan: the seed's default cohort on an H100 80GB", "[memory-plan]") {
  // The peaks each lane showed in its check on an H100 80GB (2026-12-06),
  // and the room left there beside kibench's 2 GiB of inputs.
  // The room: the lanes' phase's free memory less the 1 GiB margin; first
  // fit in --impl order gave [reference, fused] then [cublas-floor, liger],
  // so the room was under reference + fused + cublas-floor with slack.
  const auto gib = [](double g) { return static_cast<std::uint64_t>(g * static_cast<double>(kGiB)); };
  const std::vector<kibench::LaneNeed> needs{{"reference", gib(63.2)},
                                             {"fused", gib(2.4)},
                                             {"cublas-floor", gib(4.5)},
                                             {"torch-eager", gib(66.6)},
                                             {"liger", gib(2.5)}};
  const auto groups = kibench::plan_timing_groups(needs, gib(73.0));
  CHECK(groups == Groups{{1, 4, 2}, {0}, {3}});
  CHECK(kibench::describe_timing_groups(needs, groups) ==
        "3 groups: [fused, liger, cublas-floor] then [reference] then [torch-eager]");
}

TEST_CASE("memory plan: a lane over the room still gets a group of its own", "[memory-plan]") {
  const std::vector<kibench::LaneNeed> needs{{"huge", 90 * kGiB}, {"small", kGiB}};
  CHECK(kibench::plan_timing_groups(needs, 10 * kGiB) == Groups{{1}, {0}});
}

TEST_CASE("memory plan: the slack counts against the room", "[memory-plan]") {
  CHECK(kibench::lane_slack_bytes(0) == 0);
  CHECK(kibench::lane_slack_bytes(kGiB) == 256 * (std::uint64_t{1} << 20));
  CHECK(kibench::lane_slack_bytes(100 * kGiB) == 5 * kGiB);
  // Two lanes of 4 GiB fit 8.25 GiB bare, not with 256 MiB of slack each.
  const std::vector<kibench::LaneNeed> needs{{"a", 4 * kGiB}, {"b", 4 * kGiB}};
  CHECK(kibench::plan_timing_groups(needs, 8 * kGiB + kGiB / 4).size() == 2);
  CHECK(kibench::plan_timing_groups(needs, 9 * kGiB).size() == 1);
}

TEST_CASE("memory plan: a long description gives way to the groups' sizes", "[memory-plan]") {
  std::vector<kibench::LaneNeed> needs;
  for (int i = 0; i < 40; ++i) needs.push_back({std::string(40, static_cast<char>('a' + i % 26)), 3 * kGiB});
  const auto groups = kibench::plan_timing_groups(needs, 10 * kGiB);
  const std::string text = kibench::describe_timing_groups(needs, groups);
  CHECK(text.size() < 600);
  CHECK(text.rfind("14 groups of 3, ", 0) == 0);
  CHECK(text.find("and 1 lanes") != std::string::npos);
}

TEST_CASE("memory plan: the largest group counts each lane as the plan does, with its slack", "[memory-plan]") {
  const std::vector<kibench::LaneNeed> needs{{"a", 2 * kGiB}, {"b", 40 * kGiB}, {"host", 0}};
  const Groups groups{{2, 0}, {1}};
  // b: 40 GiB and 5 % of it; a: 2 GiB and the 256 MiB floor; host lanes nothing.
  CHECK(kibench::largest_group_bytes(needs, groups) == 40 * kGiB + 2 * kGiB);
  CHECK(kibench::largest_group_bytes(needs, Groups{{2, 0}}) == 2 * kGiB + (kGiB >> 2));
  CHECK(kibench::largest_group_bytes(needs, Groups{}) == 0);
}

TEST_CASE("memory plan: the oracle's answers stay on the device only with a quarter of foreign lanes to spare",
          "[memory-plan]") {
  // The H100 jsd case: a Python lane of 50.9 GiB (its slack makes 53.4) and 16.8 GB of answers do not fit in
  // 71 GiB; kibench's own lane of the same size does.
  const std::vector<kibench::LaneNeed> foreign{{"torch-eager-jsd-script", 51 * kGiB, true}};
  const std::vector<kibench::LaneNeed> own{{"reference", 51 * kGiB, false}};
  CHECK_FALSE(kibench::answers_fit_on_device(foreign, Groups{{0}}, 16 * kGiB, kGiB, 71 * kGiB));
  CHECK(kibench::answers_fit_on_device(own, Groups{{0}}, 16 * kGiB, kGiB, 71 * kGiB));
  // At the bound: the lane as the plan counts it, a quarter of that, the answers and the margin.
  const std::vector<kibench::LaneNeed> lane{{"py", 40 * kGiB, true}};
  const std::uint64_t planned = kibench::largest_group_bytes(lane, Groups{{0}});
  const std::uint64_t bound = planned + planned / 4 + 10 * kGiB + kGiB;
  CHECK(kibench::answers_fit_on_device(lane, Groups{{0}}, 10 * kGiB, kGiB, bound));
  CHECK_FALSE(kibench::answers_fit_on_device(lane, Groups{{0}}, 10 * kGiB, kGiB, bound - 1));
  // Every group must leave room, not only the first.
  const std::vector<kibench::LaneNeed> two{{"small", kGiB, true}, {"big", 60 * kGiB, false}};
  CHECK_FALSE(kibench::answers_fit_on_device(two, Groups{{0}, {1}}, 16 * kGiB, kGiB, 71 * kGiB));
  // No answers (a forward pass): nothing to place.
  CHECK_FALSE(kibench::answers_fit_on_device(own, Groups{{0}}, 0, kGiB, 71 * kGiB));
}
