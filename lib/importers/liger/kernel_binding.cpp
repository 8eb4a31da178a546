#include "lib/importers/liger/kernel_binding.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lib/importers/liger/skip_reason.hpp"
#include "lib/json/canonical.hpp"

namespace kibench::importers::liger {
namespace {

// Integers KernelIndex's JSON numbers (doubles) hold exactly.
constexpr double kLargestExactInteger = 9007199254740991.0; // 2^53 - 1, as the schemas bound integers

[[noreturn]] void unbound(const std::string &message) {
  throw RowSkipped(SkipReason::did_not_bind, message);
}

std::string shown(const json::Value &value) {
  return json::canonical(value);
}

std::int64_t positive_integer(double value, std::string_view what) {
  if (!std::isfinite(value) || value < 1 || value > kLargestExactInteger || std::floor(value) != value)
    unbound(fmt::format("{} = {} is not a positive integer", what, json::format_number(value)));
  return static_cast<std::int64_t>(value);
}

// Config numbers are doubles (rule 2); a boolean is never a number.
double config_number(const json::Object &config, std::string_view key) {
  const json::Value *value = config.find(key);
  if (value == nullptr) unbound(fmt::format("config has no \"{}\"", key));
  if (!value->is_number()) unbound(fmt::format("config \"{}\" is {}, not a number", key, shown(*value)));
  return value->as_number();
}

std::int64_t config_axis(const json::Object &config, std::string_view key) {
  return positive_integer(config_number(config, key), fmt::format("config \"{}\"", key));
}

std::string config_float_dtype(const json::Object &config) {
  const json::Value *value = config.find("dtype");
  if (value == nullptr) unbound("config has no \"dtype\"");
  if (value->is_string()) {
    const std::string &torch_dtype = value->as_string();
    if (torch_dtype == "torch.bfloat16") return "bf16";
    if (torch_dtype == "torch.float32") return "fp32";
    if (torch_dtype == "torch.float16") return "fp16";
  }
  unbound(fmt::format("config \"dtype\" is {} (expected torch.bfloat16, torch.float16 or torch.float32)",
                      shown(*value)));
}

void require_x_name(std::string_view kernel, std::string_view x_name, std::string_view expected) {
  if (x_name != expected)
    unbound(fmt::format("{} rows sweep x_name \"{}\", not \"{}\"", kernel, expected, x_name));
}

// benchmark_distill_jsd_loss.py: tokens swept, both LM heads without bias,
// the student at half the teacher's hidden size.
BoundCase bind_distill_jsd_loss(std::string_view x_name, double x_value, const json::Object &config) {
  require_x_name("distill_jsd_loss", x_name, "BT");
  BoundCase bound;
  const std::int64_t hidden = config_axis(config, "H");
  bound.axes = {{"tokens", positive_integer(x_value, "x_value")},
                {"hidden", hidden},
                {"vocab", config_axis(config, "V")}};
  bound.float_dtype = config_float_dtype(config);
  const json::Value *bias = config.find("bias");
  if (bias == nullptr || !bias->is_bool() || bias->as_bool())
    unbound(fmt::format("config \"bias\" is {}; the operation has no bias (it must be false)",
                        bias == nullptr ? std::string("missing") : shown(*bias)));
  if (hidden % 2 != 0)
    unbound(fmt::format("config \"H\" = {} is odd; the student's hidden is H // 2", hidden));
  bound.scalars = {{"weight_hard_loss", config_number(config, "weight_hard_loss")},
                   {"weight_soft_loss", config_number(config, "weight_soft_loss")}};
  return bound;
}

// benchmark_fused_linear_jsd.py: tokens swept, beta fixed at 0.5 by the
// script (not in the config).
BoundCase bind_fused_linear_jsd(std::string_view x_name, double x_value, const json::Object &config) {
  require_x_name("fused_linear_jsd", x_name, "BT");
  BoundCase bound;
  bound.axes = {{"tokens", positive_integer(x_value, "x_value")},
                {"hidden", config_axis(config, "H")},
                {"vocab", config_axis(config, "V")}};
  bound.float_dtype = config_float_dtype(config);
  bound.scalars = {{"beta", 0.5}};
  return bound;
}

// benchmark_jsd.py: fp32 log-probs; older versions sweep the vocabulary with
// B×T tokens in the config, newer ones sweep tokens with vocab_size there.
BoundCase bind_jsd(std::string_view x_name, double x_value, const json::Object &config) {
  BoundCase bound;
  bound.float_dtype = "fp32";
  if (x_name == "V") {
    const std::int64_t batch = config_axis(config, "B");
    const std::int64_t sequence = config_axis(config, "T");
    const double tokens = static_cast<double>(batch) * static_cast<double>(sequence);
    bound.axes = {{"tokens", positive_integer(tokens, "config B × T")},
                  {"vocab", positive_integer(x_value, "x_value")}};
  } else if (x_name == "BT") {
    bound.axes = {{"tokens", positive_integer(x_value, "x_value")},
                  {"vocab", config_axis(config, "vocab_size")}};
  } else {
    unbound(fmt::format("jsd rows sweep x_name \"V\" or \"BT\", not \"{}\"", x_name));
  }
  return bound;
}

} // namespace

bool in_jsd_family(std::string_view kernel) {
  return std::find(kJsdFamily.begin(), kJsdFamily.end(), kernel) != kJsdFamily.end();
}

BoundCase bind_kernel_row(std::string_view kernel, std::string_view x_name, double x_value,
                          const json::Object &config) {
  if (kernel == "distill_jsd_loss") return bind_distill_jsd_loss(x_name, x_value, config);
  if (kernel == "fused_linear_jsd") return bind_fused_linear_jsd(x_name, x_value, config);
  if (kernel == "jsd") return bind_jsd(x_name, x_value, config);
  unbound(fmt::format("kernel \"{}\" is not of the JSD family", kernel));
}

} // namespace kibench::importers::liger
