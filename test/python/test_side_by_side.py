"""scripts/side_by_side.py's port of kibench's measurement protocol: its
defaults must be lib/harness/protocol_settings.hpp's, and its statistics and
stopping rule must decide as lib/stats/summary.cpp and
lib/harness/stopping_rule.cpp do. Needs no GPU and no PyTorch."""

import os
import re
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import side_by_side as sbs  # noqa: E402


def header_defaults():
    """name -> default value literal, from the ProtocolSettings struct."""
    with open(os.path.join(ROOT, "lib/harness/protocol_settings.hpp")) as f:
        text = f.read()
    return dict(re.findall(r"^\s+(?:bool|std::size_t|double)\s+(\w+)\s*=\s*([\w.]+);", text, re.M))


class Defaults(unittest.TestCase):
    def test_match_the_cpp_harness(self):
        cpp = header_defaults()
        names = {"cold": "cold", "warmup_runs": "warmupRuns", "min_samples": "minSamples",
                 "max_samples": "maxSamples", "min_time_s": "minTimeS", "max_noise": "maxNoise",
                 "timeout_s": "timeoutS", "interleave": "interleave", "throttle_fraction": "throttleFraction",
                 "minimum_effect": "minimumEffect"}
        # The port has no sustained phase (harness/sustained.hpp): kibench
        # import external records none for its results.
        not_ported = {"sustained_time_s"}
        self.assertEqual(set(cpp) - not_ported, set(names), "a ProtocolSettings field the port does not know")
        for cpp_name, py_name in names.items():
            literal = cpp[cpp_name]
            value = {"true": True, "false": False}.get(literal)
            if value is None:
                value = float(literal)
            self.assertEqual(sbs.DEFAULT_SETTINGS[py_name], value, cpp_name)


class Statistics(unittest.TestCase):
    def test_quantile_interpolates_like_summary_cpp(self):
        self.assertEqual(sbs.quantile([1.0, 2.0, 3.0, 4.0], 0.5), 2.5)
        self.assertAlmostEqual(sbs.quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.2), 1.8)
        self.assertEqual(sbs.median([5.0, 1.0, 3.0]), 3.0)

    def test_relative_noise_is_scaled_mad_over_median(self):
        # median 10, |deviations| 0 1 1 2 2 -> MAD 1
        self.assertAlmostEqual(sbs.relative_noise([8.0, 9.0, 10.0, 11.0, 12.0]), 0.14826)


class Stopping(unittest.TestCase):
    def settings(self, **changes):
        return dict(sbs.DEFAULT_SETTINGS, **changes)

    def test_needs_min_samples_and_min_time(self):
        rule = sbs.StoppingRule(self.settings())
        for _ in range(9):
            rule.add(1e8)  # 0.1 s each, no noise at all
        self.assertEqual(rule.reason(), "")
        rule.add(1e8)
        self.assertEqual(rule.reason(), "noise_target")

    def test_min_time_holds_back_short_samples(self):
        rule = sbs.StoppingRule(self.settings())
        for _ in range(20):
            rule.add(1e6)  # 20 ms in all < 0.5 s
        self.assertEqual(rule.reason(), "")

    def test_noise_keeps_sampling(self):
        rule = sbs.StoppingRule(self.settings())
        for k in range(12):
            rule.add(1e8 * (1.0 + 0.2 * (k % 3)))
        # relative noise 0.2965 / sqrt(12) * 1.2533 = 0.107 > 0.005
        self.assertGreater(rule.relative_error(), 0.005)
        self.assertEqual(rule.reason(), "")

    def test_max_samples_and_timeout(self):
        rule = sbs.StoppingRule(self.settings(maxSamples=3))
        for k in range(3):
            rule.add(1e6 * (k + 1))
        self.assertEqual(rule.reason(), "max_samples")
        rule = sbs.StoppingRule(self.settings(timeoutS=0.0))
        self.assertEqual(rule.reason(), "")  # no sample yet
        rule.add(5.0)
        self.assertEqual(rule.reason(), "timeout")


if __name__ == "__main__":
    unittest.main()
