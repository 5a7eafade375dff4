#include "grpc_wire.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated::grpcwire {

std::string read_pem(const std::string& path, const char* what) {
  if (path.empty()) throw Error(fmt::format("no {} given", what));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot read the {} {}: no such file or not readable", what, path));
  std::ostringstream s;
  s << f.rdbuf();
  const std::string pem = s.str();
  if (pem.find("-----BEGIN ") == std::string::npos)
    throw Error(fmt::format("the {} {} is not a PEM file (no -----BEGIN line)", what, path));
  return pem;
}

pb::Settings to_proto(const SharedSettings& s) {
  pb::Settings p;
  const HyperParams& h = s.hyper;
  if (h.m) p.set_m(*h.m);
  if (h.expansion_factor) p.set_expansion_factor(*h.expansion_factor);
  if (h.s) p.set_s(*h.s);
  if (h.connection_sparsity) p.set_connection_sparsity(*h.connection_sparsity);
  if (h.rho) p.set_rho(*h.rho);
  if (h.wta_ratio) p.set_wta_ratio(*h.wta_ratio);
  if (h.wta_nnz) p.set_wta_nnz(*h.wta_nnz);
  if (h.gamma) p.set_gamma(*h.gamma);
  if (h.seed) p.set_seed(*h.seed);
  if (h.preprocess) p.set_preprocess(preprocess_name(*h.preprocess));
  for (const std::string& name : s.labels.names()) p.add_labels(name);
  if (s.dp) {
    p.set_dp(true);
    p.set_dp_epsilon(s.dp->epsilon);
    p.set_dp_t(s.dp->T);
    p.set_dp_exponent(dp_exponent_name(s.dp->exponent));
    p.set_dp_unit(dp_unit_name(s.dp->unit));
    p.set_dp_postprocess(dp_postprocess_name(s.dp->postprocess));
  }
  return p;
}

SharedSettings from_proto(const pb::Settings& p) {
  SharedSettings s;
  HyperParams& h = s.hyper;
  if (p.has_m()) h.m = p.m();
  if (p.has_expansion_factor()) h.expansion_factor = p.expansion_factor();
  if (p.has_s()) h.s = p.s();
  if (p.has_connection_sparsity()) h.connection_sparsity = p.connection_sparsity();
  if (p.has_rho()) h.rho = p.rho();
  if (p.has_wta_ratio()) h.wta_ratio = p.wta_ratio();
  if (p.has_wta_nnz()) h.wta_nnz = p.wta_nnz();
  if (p.has_gamma()) h.gamma = p.gamma();
  if (p.has_seed()) h.seed = p.seed();
  if (p.has_preprocess()) h.preprocess = parse_preprocess(p.preprocess());
  std::vector<std::string> names(p.labels().begin(), p.labels().end());
  s.labels = LabelSet(std::move(names));
  if (p.dp()) {
    DpParams dp;
    dp.epsilon = p.dp_epsilon();
    dp.T = p.dp_t();
    dp.exponent = parse_dp_exponent(p.dp_exponent());
    dp.unit = parse_dp_unit(p.dp_unit());
    if (!p.dp_postprocess().empty()) dp.postprocess = parse_dp_postprocess(p.dp_postprocess());
    s.dp = dp;
  }
  return s;
}

template <class T>
std::string encode_words(std::span<const T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out.data(), values.data(), out.size());  // already the wire's byte order
    return out;
  }
  auto* p = reinterpret_cast<unsigned char*>(out.data());
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t b = 0; b < sizeof(T); ++b)
      p[i * sizeof(T) + b] = static_cast<unsigned char>((values[i] >> (8 * b)) & 0xff);
  return out;
}

template <class T>
void decode_words(std::string_view bytes, std::span<T> out) {
  if (bytes.size() != out.size() * sizeof(T))
    throw Error(fmt::format("a summed vector has {} bytes, expected {}", bytes.size(),
                            out.size() * sizeof(T)));
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v = 0;
    for (std::size_t b = 0; b < sizeof(T); ++b) v |= static_cast<T>(p[i * sizeof(T) + b]) << (8 * b);
    out[i] = v;
  }
}

template std::string encode_words<std::uint32_t>(std::span<const std::uint32_t>);
template std::string encode_words<std::uint64_t>(std::span<const std::uint64_t>);
template void decode_words<std::uint32_t>(std::string_view, std::span<std::uint32_t>);
template void decode_words<std::uint64_t>(std::string_view, std::span<std::uint64_t>);

const char* op_name(pb::Op op) {
  switch (op) {
    case pb::BROADCAST: return "broadcast";
    case pb::ALLGATHER: return "all-gather";
    case pb::SUM32: return "all-reduce (32-bit)";
    case pb::SUM64: return "all-reduce (64-bit)";
    default: return "unknown operation";
  }
}

}  // namespace flynn::federated::grpcwire
