// The measured noise floor: the smallest relative difference the samples
// themselves can resolve, whatever the interval says. compare calls a
// difference a win only when it exceeds this (and the protocol's minimum
// effect).
#pragma once

#include <span>

namespace kibench::stats {

// 1.4826 * MAD / median: the robust coefficient of variation of one series
// (1.4826 * MAD estimates the standard deviation of normal noise).
double relative_noise(std::span<const double> values);

// Independent series: the noisier of the two, max(relative_noise(b),
// relative_noise(c)).
double independent_noise_floor(std::span<const double> baseline, std::span<const double> candidate);

// Paired series: the noise left once drift shared by both rounds of a pair
// is divided out. With r_k = c_k / b_k, 1.4826 * MAD(r) / median(r) is the
// relative noise of a ratio of two equally noisy samples, sqrt(2) times
// either one's; dividing by sqrt(2) puts it on the scale of
// independent_noise_floor, so the two agree when there is no drift.
double paired_noise_floor(std::span<const double> baseline, std::span<const double> candidate);

} // namespace kibench::stats
