#include "federated/wire_messages.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/unknown_field_set.h>

#include <bit>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated::grpcwire {

namespace gp = google::protobuf;

namespace {

template <class M>
std::optional<M> parse_bounded(gp::io::ZeroCopyInputStream& in) {
  gp::io::CodedInputStream coded(&in);
  coded.SetRecursionLimit(kMaxNesting);
  M m;
  if (!m.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) return std::nullopt;
  return m;
}

template <class M>
std::optional<M> parse_bounded(std::string_view bytes) {
  gp::io::ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()));
  return parse_bounded<M>(in);
}

}  // namespace

std::optional<pb::CoordinatorMessage> parse_coordinator_message(gp::io::ZeroCopyInputStream& in) {
  return parse_bounded<pb::CoordinatorMessage>(in);
}

std::optional<pb::CoordinatorMessage> parse_coordinator_message(std::string_view bytes) {
  return parse_bounded<pb::CoordinatorMessage>(bytes);
}

std::optional<pb::PartyMessage> parse_party_message(std::string_view bytes) {
  return parse_bounded<pb::PartyMessage>(bytes);
}

bool has_unknown_fields(const gp::Message& m) {
  const gp::Reflection* r = m.GetReflection();
  if (!r->GetUnknownFields(m).empty()) return true;
  std::vector<const gp::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const gp::FieldDescriptor* f : fields) {
    if (f->cpp_type() != gp::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {
      for (int i = 0; i < r->FieldSize(m, f); ++i)
        if (has_unknown_fields(r->GetRepeatedMessage(m, f, i))) return true;
    } else if (has_unknown_fields(r->GetMessage(m, f))) {
      return true;
    }
  }
  return false;
}

const char* kind_name(const pb::CoordinatorMessage& m) {
  switch (m.kind_case()) {
    case pb::CoordinatorMessage::kWelcome: return "welcome";
    case pb::CoordinatorMessage::kResult: return "result";
    case pb::CoordinatorMessage::kAbort: return "abort";
    case pb::CoordinatorMessage::kDone: return "done";
    default: return "nothing";
  }
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

namespace {

template <class T>
T load_le(const unsigned char* p) {
  T v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, sizeof(T));
  } else {
    for (std::size_t b = 0; b < sizeof(T); ++b) v |= static_cast<T>(p[b]) << (8 * b);
  }
  return v;
}

template <class T>
void check_length(std::string_view bytes, std::size_t values) {
  if (bytes.size() != values * sizeof(T))
    throw Error(fmt::format("a summed vector has {} bytes, expected {}", bytes.size(), values * sizeof(T)));
}

}  // namespace

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
  check_length<T>(bytes, out.size());
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = load_le<T>(p + i * sizeof(T));
}

template <class T>
void add_words(std::string_view bytes, std::span<T> sum) {
  check_length<T>(bytes, sum.size());
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += load_le<T>(p + i * sizeof(T));
}

template std::string encode_words<std::uint32_t>(std::span<const std::uint32_t>);
template std::string encode_words<std::uint64_t>(std::span<const std::uint64_t>);
template void decode_words<std::uint32_t>(std::string_view, std::span<std::uint32_t>);
template void decode_words<std::uint64_t>(std::string_view, std::span<std::uint64_t>);
template void add_words<std::uint32_t>(std::string_view, std::span<std::uint32_t>);
template void add_words<std::uint64_t>(std::string_view, std::span<std::uint64_t>);

const char* op_name(pb::Op op) {
  switch (op) {
    case pb::BROADCAST: return "broadcast";
    case pb::ALLGATHER: return "all-gather";
    case pb::SUM32: return "all-reduce (32-bit)";
    case pb::SUM64: return "all-reduce (64-bit)";
    default: return "unknown operation";
  }
}

std::size_t word_bytes(pb::Op op) { return op == pb::SUM32 ? 4 : op == pb::SUM64 ? 8 : 0; }

}  // namespace flynn::federated::grpcwire
