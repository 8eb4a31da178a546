// attestation.json: exactly the request body of KernelIndex's
// POST /runs/{idOrDigest}/attestations (packages/sdk/openapi.json of
// SamMausberg/KernelIndex; test/schema/kernelindex-attestation-request.schema.json
// holds that schema):
//
//   type                one of reproduced, could_not_reproduce,
//                       environment_note, regression_observed (the verdict's)
//   body                1 to 2000 characters: what ran, the ratio, the
//                       statement, the differences (cut to fit)
//   observedNs          > 0: the median here (left out when it has none)
//   environmentSummary  at most 200 characters: this machine
//   evidenceUrl         https://..., only when given (--evidence-url)
//
// KernelIndex counts a string's length in UTF-16 code units (JavaScript),
// so the limits are kept in those: never longer than the schema's count of
// code points either.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "lib/json/value.hpp"
#include "lib/reproduce/verdict.hpp"

namespace kibench::reproduce {

inline constexpr std::size_t kBodyLimit = 2000;
inline constexpr std::size_t kEnvironmentSummaryLimit = 200;
inline constexpr std::size_t kEvidenceUrlLimit = 2000;

// `evidence_url` is "" or an https:// URL (check_evidence_url).
json::Value attestation_body(const Verdict &verdict, std::string_view evidence_url);

// InputError "--evidence-url: ..." unless `url` is empty or https://
// followed by at least one character and no white space, at most 2000
// characters (KernelIndex's rule).
void check_evidence_url(std::string_view url);

// `text` cut to at most `limit` UTF-16 code units, on a character boundary,
// ending in "…" when cut.
std::string fit_utf16(std::string_view text, std::size_t limit);

} // namespace kibench::reproduce
