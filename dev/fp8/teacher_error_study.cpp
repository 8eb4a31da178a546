#include "dev/fp8/teacher_error_study.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <span>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "kernels/lm_head/oracle/fp64_arithmetic.hpp"
#include "lib/inputs/generate.hpp"
#include "lib/parallel/parallel_for.hpp"
#include "lib/operations/registry.hpp"

namespace kibench::dev {

namespace {

using oracle::dot;
using oracle::widen;

constexpr char kUniform[] = "philox4x32_10_uniform";
// Vocabulary rows generated at a time: a multiple of 128, so that the
// 128 x 128 weight tiles of a slice are the tiles of the whole W_t.
constexpr std::int64_t kVocabSlice = 1024;
// Token rows of one thread's tile share each streamed weight row (as the
// oracle's linear does).
constexpr std::int64_t kRowTile = 8;

std::size_t at(std::int64_t row, std::int64_t columns, std::int64_t column = 0) {
  return static_cast<std::size_t>(row * columns + column);
}

std::vector<std::uint16_t> uniform_bits(const GeneratorSpec &spec, std::size_t count, std::uint64_t first) {
  std::vector<std::uint16_t> bits(count);
  fill_uniform_bf16(spec, bits, first);
  return bits;
}

// bf16 bits [rows, cols] as the recipe rounds them, in double, over the
// cores in groups of 128 rows (blocks one or 128 rows high never straddle
// two groups, so the result is the whole matrix's).
std::vector<double> rounded(const std::vector<std::uint16_t> &bits, std::int64_t rows, std::int64_t cols,
                            const std::optional<e4m3::BlockShape> &block) {
  if (!block) return widen(bits);
  constexpr std::int64_t kGroup = 128;
  if (kGroup % block->rows != 0)
    throw std::invalid_argument(fmt::format("teacher error study: blocks {} rows high", block->rows));
  std::vector<double> values(bits.size());
  const std::int64_t groups = (rows + kGroup - 1) / kGroup;
  parallel_for(0, groups, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t g = begin; g < end; ++g) {
      const std::int64_t r0 = g * kGroup, n = std::min(kGroup, rows - r0);
      const auto part = std::span(bits).subspan(at(r0, cols), at(n, cols));
      const std::vector<double> v = e4m3::dequantize(e4m3::quantize(part, n, cols, *block));
      std::copy(v.begin(), v.end(), values.begin() + static_cast<std::ptrdiff_t>(at(r0, cols)));
    }
  });
  return values;
}

// The sampled rows' inputs, and the LM heads' generators.
struct Sampled {
  std::int64_t S = 0, T = 0, V = 0, H = 0, Hs = 0;
  std::vector<double> student_input;        // [S, Hs]
  std::vector<std::uint16_t> teacher_input; // [S, H] bf16 bits
  std::vector<std::int64_t> target;         // [S]
  std::vector<double> student_bias;         // [V] or empty
  std::vector<double> teacher_bias;         // [V] or empty
};

void require_uniform(const GeneratorSpec &spec, const char *tensor) {
  if (spec.name != kUniform)
    throw std::invalid_argument(
        fmt::format("teacher error study: {} has generator \"{}\", not \"{}\"", tensor, spec.name, kUniform));
}

Sampled sample_inputs(const Workload &w, const std::vector<std::int64_t> &rows) {
  if (!w.operation_kind->has_lm_heads()) throw std::invalid_argument("teacher error study: the operation has no LM heads");
  require_uniform(w.student_input, "student_input");
  require_uniform(w.student_weight, "student_weight");
  require_uniform(w.teacher_input, "teacher_input");
  require_uniform(w.teacher_weight, "teacher_weight");
  if (rows.empty() || !std::is_sorted(rows.begin(), rows.end()) || rows.front() < 0 ||
      rows.back() >= w.tokens || std::adjacent_find(rows.begin(), rows.end()) != rows.end())
    throw std::invalid_argument("teacher error study: sampled rows must be distinct, ascending and within T");
  Sampled s{.S = static_cast<std::int64_t>(rows.size()),
            .T = w.tokens,
            .V = w.vocab,
            .H = w.hidden,
            .Hs = w.student_hidden,
            .student_input = {},
            .teacher_input = {},
            .target = {},
            .student_bias = {},
            .teacher_bias = {}};
  s.student_input.resize(at(s.S, s.Hs));
  s.teacher_input.resize(at(s.S, s.H));
  s.target.resize(rows.size());
  for (std::int64_t k = 0; k < s.S; ++k) {
    const auto i = static_cast<std::uint64_t>(rows[static_cast<std::size_t>(k)]);
    const auto xs = widen(uniform_bits(w.student_input, static_cast<std::size_t>(s.Hs), i * s.Hs));
    std::copy(xs.begin(), xs.end(), s.student_input.begin() + static_cast<std::ptrdiff_t>(at(k, s.Hs)));
    fill_uniform_bf16(w.teacher_input,
                      std::span(s.teacher_input).subspan(at(k, s.H), static_cast<std::size_t>(s.H)), i * s.H);
    s.target[static_cast<std::size_t>(k)] = target_at(w.target, w.scalars.ignore_index, i);
  }
  if (w.student_bias) {
    require_uniform(*w.student_bias, "student_bias");
    s.student_bias = widen(uniform_bits(*w.student_bias, static_cast<std::size_t>(s.V), 0));
  }
  if (w.teacher_bias) {
    require_uniform(*w.teacher_bias, "teacher_bias");
    s.teacher_bias = widen(uniform_bits(*w.teacher_bias, static_cast<std::size_t>(s.V), 0));
  }
  return s;
}

void validate_recipes(const std::vector<TeacherRecipe> &recipes) {
  if (recipes.empty() || recipes.front().input || recipes.front().weight)
    throw std::invalid_argument("teacher error study: recipe 0 must be the bf16 teacher");
  for (const TeacherRecipe &r : recipes)
    if (r.input && r.input->rows != 1)
      throw std::invalid_argument(
          fmt::format("teacher error study: recipe {}: x_t blocks must be one row high", r.name));
}

// out[k, v0 + j] = x[k] · w[j] (+ bias[v0 + j]) for the slice's rows j, all k.
void slice_logits(const std::vector<double> &x, const std::vector<double> &w, std::int64_t width,
                  std::int64_t v0, std::int64_t slice, const std::vector<double> &bias, std::int64_t S,
                  std::int64_t V, std::vector<double> &out) {
  parallel_for(0, S, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t tile = begin; tile < end; tile += kRowTile) {
      const std::int64_t tile_end = std::min(end, tile + kRowTile);
      for (std::int64_t j = 0; j < slice; ++j) {
        const double *weight_row = &w[at(j, width)];
        const double b = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(v0 + j)];
        for (std::int64_t k = tile; k < tile_end; ++k)
          out[at(k, V, v0 + j)] = dot(&x[at(k, width)], weight_row, width) + b;
      }
    }
  });
}

struct Logits {
  std::vector<double> student;              // z_s [S, V]
  std::vector<std::vector<double>> teacher; // z_t [S, V] per recipe
};

// Pass 1: z_s once and z_t per recipe, a slice of vocabulary rows at a time.
Logits compute_logits(const Workload &w, const Sampled &s, const std::vector<TeacherRecipe> &recipes,
                      const std::function<void(const std::string &)> &progress) {
  Logits z;
  z.student.resize(at(s.S, s.V));
  z.teacher.assign(recipes.size(), std::vector<double>(at(s.S, s.V)));
  std::vector<std::vector<double>> inputs;
  for (const TeacherRecipe &r : recipes) inputs.push_back(rounded(s.teacher_input, s.S, s.H, r.input));
  for (std::int64_t v0 = 0; v0 < s.V; v0 += kVocabSlice) {
    const std::int64_t slice = std::min(kVocabSlice, s.V - v0);
    const auto student_weight =
        widen(uniform_bits(w.student_weight, at(slice, s.Hs), static_cast<std::uint64_t>(v0 * s.Hs)));
    slice_logits(s.student_input, student_weight, s.Hs, v0, slice, s.student_bias, s.S, s.V, z.student);
    const auto teacher_bits =
        uniform_bits(w.teacher_weight, at(slice, s.H), static_cast<std::uint64_t>(v0 * s.H));
    // Each distinct rounding of the slice once.
    std::map<std::tuple<bool, std::int64_t, std::int64_t>, std::vector<double>> weights;
    for (std::size_t r = 0; r < recipes.size(); ++r) {
      const auto &block = recipes[r].weight;
      const auto key = std::tuple{block.has_value(), block ? block->rows : 0, block ? block->cols : 0};
      auto it = weights.find(key);
      if (it == weights.end()) it = weights.emplace(key, rounded(teacher_bits, slice, s.H, block)).first;
      slice_logits(inputs[r], it->second, s.H, v0, slice, s.teacher_bias, s.S, s.V, z.teacher[r]);
    }
    if (progress && (v0 / kVocabSlice) % 16 == 15)
      progress(fmt::format("logits: vocabulary rows {} of {}", v0 + slice, s.V));
  }
  return z;
}

// The sampled rows as an oracle problem of S tokens (only the fields
// oracle_loss and oracle_logit_gradient read).
OracleProblem sampled_problem(const Workload &w, const Sampled &s) {
  OracleProblem p;
  p.tokens = s.S;
  p.vocab = s.V;
  p.hidden = s.H;
  p.student_hidden = s.Hs;
  p.target = s.target;
  p.scalars = w.scalars;
  return p;
}

// The order in which grad W sums the sampled rows, and where its nested
// subsets end: rows k ≡ 0 (mod 4), then k ≡ 2 (mod 4), then the odd k.
struct RowOrder {
  std::vector<std::int64_t> order;
  std::vector<std::int64_t> ends;
};

RowOrder nested_order(std::int64_t S) {
  RowOrder o;
  for (const auto &[step, offset] : {std::pair{4, 0}, std::pair{4, 2}, std::pair{2, 1}}) {
    for (std::int64_t k = offset; k < S; k += step) o.order.push_back(k);
    o.ends.push_back(static_cast<std::int64_t>(o.order.size()));
  }
  return o;
}

// Pass 2's output for one vocabulary row v, handed over from a worker
// thread (each v once): grad W_s row v of every recipe r summed over the
// first ends[e] rows of the order, at rows[(r · subsets + e) · Hs], and
// grad b_s[v] = Σ_k G[k, v] over all rows, at column_sums[r].
using WeightRowSink = std::function<void(std::int64_t v, const std::vector<double> &rows,
                                         const std::vector<double> &column_sums)>;

// Pass 2: per recipe grad x_s [S, Hs] (returned) = G W_s, and grad W_s, grad
// b_s handed to `sink` row by row.
std::vector<std::vector<double>> compute_gradients(const Workload &w, const Sampled &s,
                                                   const std::vector<std::vector<double>> &G,
                                                   const RowOrder &order, const WeightRowSink &sink,
                                                   const std::function<void(const std::string &)> &progress) {
  const std::size_t recipes = G.size(), subsets = order.ends.size();
  const auto Hs = static_cast<std::size_t>(s.Hs);
  std::vector<std::vector<double>> grad_input(recipes, std::vector<double>(at(s.S, s.Hs), 0.0));
  for (std::int64_t v0 = 0; v0 < s.V; v0 += kVocabSlice) {
    const std::int64_t slice = std::min(kVocabSlice, s.V - v0);
    const auto weight =
        widen(uniform_bits(w.student_weight, at(slice, s.Hs), static_cast<std::uint64_t>(v0 * s.Hs)));
    // grad x_s[k] += Σ_v G[k, v] W_s[v], v ascending; a tile of rows shares
    // each streamed weight row.
    parallel_for(0, s.S, [&](std::int64_t begin, std::int64_t end) {
      for (std::size_t r = 0; r < recipes; ++r)
        for (std::int64_t tile = begin; tile < end; tile += kRowTile) {
          const std::int64_t tile_end = std::min(end, tile + kRowTile);
          for (std::int64_t j = 0; j < slice; ++j) {
            const double *row = &weight[at(j, s.Hs)];
            for (std::int64_t k = tile; k < tile_end; ++k) {
              const double c = G[r][at(k, s.V, v0 + j)];
              if (c == 0.0) continue;
              double *out = &grad_input[r][at(k, s.Hs)];
              for (std::int64_t h = 0; h < s.Hs; ++h) out[h] += c * row[h];
            }
          }
        }
    });
    // grad W_s[v] = Σ_k G[k, v] x_s[k] in the nested order, each subset's sum
    // kept where it ends.
    parallel_for(v0, v0 + slice, [&](std::int64_t begin, std::int64_t end) {
      std::vector<double> rows(recipes * subsets * Hs), column_sums(recipes), sum(Hs);
      for (std::int64_t v = begin; v < end; ++v) {
        for (std::size_t r = 0; r < recipes; ++r) {
          double *row = sum.data();
          std::fill(row, row + Hs, 0.0);
          double column_sum = 0.0;
          std::size_t e = 0;
          for (std::int64_t n = 0; n < static_cast<std::int64_t>(order.order.size()); ++n) {
            const std::int64_t k = order.order[static_cast<std::size_t>(n)];
            const double c = G[r][at(k, s.V, v)];
            column_sum += c;
            if (c != 0.0) {
              const double *x = &s.student_input[at(k, s.Hs)];
              for (std::size_t h = 0; h < Hs; ++h) row[h] += c * x[h];
            }
            for (; e < subsets && order.ends[e] == n + 1; ++e)
              std::copy(row, row + Hs, &rows[(r * subsets + e) * Hs]);
          }
          column_sums[r] = column_sum;
        }
        sink(v, rows, column_sums);
      }
    });
    if (progress && (v0 / kVocabSlice) % 16 == 15)
      progress(fmt::format("gradients: vocabulary rows {} of {}", v0 + slice, s.V));
  }
  return grad_input;
}

double sum_of_squares(const double *a, const double *b, std::int64_t n) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = b == nullptr ? a[i] : a[i] - b[i];
    sum += d * d;
  }
  return sum;
}

double relative(double diff_squares, double ref_squares) {
  return ref_squares > 0.0 ? std::sqrt(diff_squares / ref_squares) : (diff_squares == 0.0 ? 0.0 : INFINITY);
}

// softmax(z / tau) of each row of z [S, V].
std::vector<double> softmax_rows(const std::vector<double> &z, std::int64_t S, std::int64_t V, double tau) {
  std::vector<double> p(z.size());
  parallel_for(0, S, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) {
      const double *row = &z[at(k, V)];
      double peak = -INFINITY;
      for (std::int64_t v = 0; v < V; ++v) peak = std::max(peak, row[v] / tau);
      double sum = 0.0;
      for (std::int64_t v = 0; v < V; ++v) sum += std::exp(row[v] / tau - peak);
      for (std::int64_t v = 0; v < V; ++v) p[at(k, V, v)] = std::exp(row[v] / tau - peak) / sum;
    }
  });
  return p;
}

} // namespace

std::vector<TeacherRecipe> standard_recipes() {
  const e4m3::BlockShape row{1, 0}, run{1, 128}, tile{128, 128};
  return {
      {"bf16 (reference)", std::nullopt, std::nullopt},
      {"x_t per row, W_t per row (outer vector)", row, row},
      {"x_t per row, W_t bf16", row, std::nullopt},
      {"x_t bf16, W_t per row", std::nullopt, row},
      {"x_t 1x128, W_t 128x128 (DeepSeek-V3)", run, tile},
      {"x_t 1x128, W_t 1x128", run, run},
  };
}

std::vector<std::int64_t> sample_rows(std::int64_t tokens, std::int64_t samples) {
  if (samples <= 0 || samples > tokens)
    throw std::invalid_argument(fmt::format("teacher error study: {} samples of {} rows", samples, tokens));
  std::vector<std::int64_t> rows;
  for (std::int64_t k = 0; k < samples; ++k) rows.push_back((2 * k + 1) * tokens / (2 * samples));
  return rows;
}

StudyResult run_teacher_error_study(const Workload &w, const std::vector<std::int64_t> &rows,
                                    const std::vector<TeacherRecipe> &recipes,
                                    const std::function<void(const std::string &)> &progress) {
  const auto start = std::chrono::steady_clock::now();
  validate_recipes(recipes);
  const Sampled s = sample_inputs(w, rows);
  const std::size_t R = recipes.size();
  Logits z = compute_logits(w, s, recipes, progress);

  StudyResult result;
  result.rows = rows;
  result.valid_rows = std::count_if(s.target.begin(), s.target.end(),
                                    [&](std::int64_t y) { return y != w.scalars.ignore_index; });
  result.recipes.resize(R);
  const OracleProblem problem = sampled_problem(w, s);
  const double n = static_cast<double>(std::max<std::int64_t>(1, result.valid_rows));

  // The hard part of G, w_h (softmax(z_s) − onehot(y)) / N, for G's soft part.
  std::vector<double> hard = softmax_rows(z.student, s.S, s.V, 1.0);
  for (std::int64_t k = 0; k < s.S; ++k) {
    const std::int64_t y = s.target[static_cast<std::size_t>(k)];
    for (std::int64_t v = 0; v < s.V; ++v) {
      double &h = hard[at(k, s.V, v)];
      h = y == w.scalars.ignore_index ? 0.0 : w.scalars.weight_hard * (h - (v == y ? 1.0 : 0.0)) / n;
    }
  }
  const std::vector<double> p0 = softmax_rows(z.teacher[0], s.S, s.V, w.scalars.temperature);

  std::vector<std::vector<double>> G(R);
  for (std::size_t r = 0; r < R; ++r) {
    RecipeError &e = result.recipes[r];
    e.name = recipes[r].name;
    OracleLogits logits{.student = z.student, .teacher = z.teacher[r]};
    e.loss = oracle_loss(problem, logits);
    G[r] = oracle_logit_gradient(problem, logits);
    const std::int64_t count = s.S * s.V;
    e.teacher_logit_relative = relative(sum_of_squares(z.teacher[r].data(), z.teacher[0].data(), count),
                                        sum_of_squares(z.teacher[0].data(), nullptr, count));
    e.teacher_logit_rms = std::sqrt(sum_of_squares(z.teacher[r].data(), z.teacher[0].data(), count) /
                                    static_cast<double>(count));
    const std::vector<double> p = softmax_rows(z.teacher[r], s.S, s.V, w.scalars.temperature);
    e.teacher_probability_relative =
        relative(sum_of_squares(p.data(), p0.data(), count), sum_of_squares(p0.data(), nullptr, count));
    const double dG = sum_of_squares(G[r].data(), G[0].data(), count);
    e.logit_gradient_relative = relative(dG, sum_of_squares(G[0].data(), nullptr, count));
    e.soft_gradient_relative = relative(dG, sum_of_squares(G[0].data(), hard.data(), count));
    e.loss_relative = std::abs(e.loss - result.recipes[0].loss) / std::abs(result.recipes[0].loss);
    if (r > 0) z.teacher[r] = {}; // the reference's stays for the recipes after it
    if (progress) progress(fmt::format("loss and G: {}", e.name));
  }
  z = {};

  // grad W_s: per recipe, subset and v the squared norm of the difference
  // from the reference row (recipe 0's: of the row itself), summed over v
  // in order at the end.
  const RowOrder order = nested_order(s.S);
  const std::size_t subsets = order.ends.size();
  const auto Hs = static_cast<std::size_t>(s.Hs);
  std::vector<double> weight_squares(R * subsets * static_cast<std::size_t>(s.V), 0.0);
  std::vector<double> bias_values(R * static_cast<std::size_t>(s.V), 0.0);
  const auto slot = [&](std::size_t r, std::size_t e, std::int64_t v) {
    return (r * subsets + e) * static_cast<std::size_t>(s.V) + static_cast<std::size_t>(v);
  };
  const WeightRowSink sink = [&](std::int64_t v, const std::vector<double> &sums,
                                 const std::vector<double> &column_sums) {
    for (std::size_t r = 0; r < R; ++r) {
      for (std::size_t e = 0; e < subsets; ++e) {
        const double *row = &sums[(r * subsets + e) * Hs];
        weight_squares[slot(r, e, v)] = sum_of_squares(row, r == 0 ? nullptr : &sums[e * Hs], s.Hs);
      }
      bias_values[r * static_cast<std::size_t>(s.V) + static_cast<std::size_t>(v)] = column_sums[r];
    }
  };
  const auto grad_input = compute_gradients(w, s, G, order, sink, progress);

  for (std::size_t r = 0; r < R; ++r) {
    RecipeError &e = result.recipes[r];
    const std::int64_t count = s.S * s.Hs;
    e.grad_input = relative(sum_of_squares(grad_input[r].data(), grad_input[0].data(), count),
                            sum_of_squares(grad_input[0].data(), nullptr, count));
    for (std::size_t k = 0; k < subsets; ++k) {
      double diff = 0.0, ref = 0.0;
      for (std::int64_t v = 0; v < s.V; ++v) {
        diff += r == 0 ? 0.0 : weight_squares[slot(r, k, v)];
        ref += weight_squares[slot(0, k, v)];
      }
      e.grad_weight.push_back(relative(diff, ref));
      e.subset_rows.push_back(order.ends[k]);
    }
    if (!s.student_bias.empty())
      e.grad_bias =
          relative(sum_of_squares(&bias_values[r * static_cast<std::size_t>(s.V)], bias_values.data(), s.V),
                   sum_of_squares(bias_values.data(), nullptr, s.V));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

StudyReference study_outputs(const Workload &w, const std::vector<std::int64_t> &rows,
                             const TeacherRecipe &recipe) {
  const std::vector<TeacherRecipe> recipes = {recipe};
  if (recipe.input && recipe.input->rows != 1)
    throw std::invalid_argument("teacher error study: x_t blocks must be one row high");
  const Sampled s = sample_inputs(w, rows);
  const Logits z = compute_logits(w, s, recipes, {});
  const OracleProblem problem = sampled_problem(w, s);
  const OracleLogits logits{.student = z.student, .teacher = z.teacher[0]};
  StudyReference out;
  out.loss = oracle_loss(problem, logits);
  const std::vector<std::vector<double>> G = {oracle_logit_gradient(problem, logits)};
  const RowOrder order = nested_order(s.S);
  out.grad_weight.resize(at(s.V, s.Hs));
  if (!s.student_bias.empty()) out.grad_bias.resize(static_cast<std::size_t>(s.V));
  const std::size_t last = order.ends.size() - 1;
  const WeightRowSink sink = [&](std::int64_t v, const std::vector<double> &sums,
                                 const std::vector<double> &column_sums) {
    const double *row = &sums[last * static_cast<std::size_t>(s.Hs)];
    std::copy(row, row + s.Hs, &out.grad_weight[at(v, s.Hs)]);
    if (!out.grad_bias.empty()) out.grad_bias[static_cast<std::size_t>(v)] = column_sums[0];
  };
  out.grad_input = compute_gradients(w, s, G, order, sink, {}).front();
  return out;
}

} // namespace kibench::dev
