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
  for (const std::string& name : s.labels.names()) p.add_labels(name);
  for (const auto& [name, value] : settings_to_text(s)) {
    pb::Setting* setting = p.add_values();
    setting->set_name(name);
    setting->set_value(value);
  }
  return p;
}

SharedSettings from_proto(const pb::Settings& p) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const pb::Setting& setting : p.values()) pairs.emplace_back(setting.name(), setting.value());
  return settings_from_text(pairs, LabelSet(std::vector<std::string>(p.labels().begin(), p.labels().end())));
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
