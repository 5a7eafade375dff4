#include "federated/site_kit.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "flynn/error.hpp"
#include "flynn/federated/provision.hpp"

namespace flynn::federated {

namespace {

std::string readme(const KitSpec& spec, const std::string& name, bool coordinator) {
  if (coordinator)
    return fmt::format(
        "flynn federation kit of the coordinator '{0}' ({1}).\n\n"
        "Start the coordinator (it waits for the parties {2}):\n"
        "  flynn federated serve --kit THIS_FOLDER --labels L1,L2,...\n\n"
        "key.pem is this site's private key: keep it here (mode 0600), never send it.\n"
        "crl.pem lists revoked certificates; replace it when the CA sends a new one.\n",
        name, spec.coordinator, fmt::join(spec.parties, ", "));
  return fmt::format(
      "flynn federation kit of the party '{0}'.\n\n"
      "Join the federation coordinated at {1} (parties: {2}):\n"
      "  flynn federated join --kit THIS_FOLDER --data YOUR_TABLE.csv --model model.flynn\n"
      "The party retries until the coordinator is up (up to --deadline seconds).\n\n"
      "key.pem is this site's private key: keep it here (mode 0600), never send it.\n"
      "crl.pem lists revoked certificates; replace it when the CA sends a new one.\n",
      name, spec.coordinator, fmt::join(spec.parties, ", "));
}

// The file's text, refused beyond kMaxSiteFileBytes (a kit.json or a project file is small).
std::string bounded_text_of(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read {}", what, path));
  std::string text(kMaxSiteFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxSiteFileBytes)
    throw Error(fmt::format("{}: {} is larger than {} bytes", what, path, kMaxSiteFileBytes));
  return text;
}

}  // namespace

HostPort split_coordinator_address(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw Error(fmt::format("--coordinator '{}': expected HOST:PORT (e.g. 127.0.0.1:7000)", address));
  HostPort hp;
  hp.host = address.substr(0, colon);
  if (hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']') hp.host = hp.host.substr(1, hp.host.size() - 2);
  const std::string port = address.substr(colon + 1);
  if (!port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos) {
    const int p = std::stoi(port);
    if (p <= 65535) hp.port = p;
  }
  return hp;
}

std::vector<KitFile> kit_files(const KitSpec& spec, const std::string& name, bool coordinator,
                               const std::string& ca_pem, const IssuedPem& site, const std::string& crl_pem) {
  const nlohmann::json config = {
      {"flynn_kit", 1},
      {"role", coordinator ? "coordinator" : "party"},
      {"name", name},
      {"coordinator", spec.coordinator},
      {"server_name", split_coordinator_address(spec.coordinator).host},
      {"parties", spec.parties},
      {"min_parties", spec.min_parties},
      {"labels", spec.labels},
      {"ca", "ca.pem"}, {"cert", "cert.pem"}, {"key", "key.pem"}, {"crl", "crl.pem"}};
  return {{"ca.pem", ca_pem, 0644},       {"cert.pem", site.certificate, 0644},
          {"key.pem", site.key, 0600},    {"crl.pem", crl_pem, 0644},
          {kit_file_name, config.dump(2) + "\n", 0644}, {"README.txt", readme(spec, name, coordinator), 0644}};
}

namespace {

// A whole number of kit.json in [low, high]. Read only once it is known to be one: a number
// too large for 64 bits parses as a double, and converting that to an int is undefined.
int kit_whole_number(const nlohmann::json& j, const char* key, long long low, long long high) {
  const nlohmann::json& v = j.at(key);
  const bool in_range = v.is_number_unsigned()  ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(high) &&
                                                      static_cast<long long>(v.get<std::uint64_t>()) >= low
                        : v.is_number_integer() ? v.get<long long>() >= low && v.get<long long>() <= high
                                                : false;
  if (!in_range) throw Error(fmt::format("\"{}\" must be a whole number from {} to {}", key, low, high));
  return static_cast<int>(v.get<long long>());
}

}  // namespace

SiteKit parse_kit_config(std::string_view text, const std::string& dir) {
  SiteKit k;
  try {
    if (text.size() > kMaxSiteFileBytes)
      throw Error(fmt::format("{} is {} bytes, more than a kit's {}", kit_file_name, text.size(), kMaxSiteFileBytes));
    const nlohmann::json j = nlohmann::json::parse(text);
    // A JSON comparison: no number of any size is converted.
    if (!j.is_object() || !j.contains("flynn_kit") || j.at("flynn_kit") != 1)
      throw Error("not a flynn kit of a version this build reads");
    k.dir = std::filesystem::absolute(dir).lexically_normal().string();
    k.role = j.at("role").get<std::string>();
    k.name = j.at("name").get<std::string>();
    k.coordinator = j.at("coordinator").get<std::string>();
    k.server_name = j.at("server_name").get<std::string>();
    k.parties = j.at("parties").get<std::vector<std::string>>();
    k.min_parties = kit_whole_number(j, "min_parties", 0, 1 << 30);
    k.labels = j.value("labels", std::string());
    auto file = [&](const char* key) { return k.dir + "/" + j.at(key).get<std::string>(); };
    k.ca = file("ca");
    k.cert = file("cert");
    k.key = file("key");
    k.crl = file("crl");
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("--kit {}: {} is not a kit configuration ({})", dir, kit_file_name, e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("--kit {}: {}", dir, e.what()));
  }
  if (k.role != "coordinator" && k.role != "party")
    throw Error(fmt::format("--kit {}: role '{}' is neither coordinator nor party", dir, k.role));
  return k;
}

SiteKit read_kit(const std::string& dir) {
  const std::string path = dir + "/" + kit_file_name;
  if (!std::filesystem::exists(path))
    throw Error(fmt::format("--kit {}: not a kit folder (no {}; kits are written by 'flynn federated provision')",
                            dir, kit_file_name));
  const SiteKit k = parse_kit_config(bounded_text_of(path, "--kit " + dir), dir);
  for (const std::string* f : {&k.ca, &k.cert, &k.key, &k.crl})
    if (!std::filesystem::exists(*f)) throw Error(fmt::format("--kit {}: {} is missing", dir, *f));
  return k;
}

ProvisionRequest parse_provision_project(std::string_view text, const std::string& source) {
  if (text.size() > kMaxSiteFileBytes)
    throw Error(fmt::format("{}: {} bytes, more than a project file's {}", source, text.size(), kMaxSiteFileBytes));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not JSON ({})", source, e.what()));
  }
  if (!j.is_object()) throw Error(fmt::format("{}: a project file is one JSON object", source));
  ProvisionRequest r;
  const auto text_of_key = [&](const std::string& key, const nlohmann::json& v) {
    if (!v.is_string()) throw Error(fmt::format("{}: \"{}\" must be a string", source, key));
    return v.get<std::string>();
  };
  const auto int_of_key = [&](const std::string& key, const nlohmann::json& v, int low, int high) {
    if (!v.is_number_integer() || v.get<long long>() < low || v.get<long long>() > high)
      throw Error(fmt::format("{}: \"{}\" must be a whole number from {} to {}", source, key, low, high));
    return static_cast<int>(v.get<long long>());
  };
  bool coordinator = false, parties = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "coordinator") {
      r.coordinator = text_of_key(key, v);
      coordinator = true;
    } else if (key == "parties") {
      if (!v.is_array() || v.empty()) throw Error(fmt::format("{}: \"parties\" must be a list of names", source));
      for (const auto& name : v) r.parties.push_back(text_of_key("parties", name));
      parties = true;
    } else if (key == "coordinator_name") {
      r.coordinator_name = text_of_key(key, v);
    } else if (key == "days") {
      r.days = int_of_key(key, v, 1, 36500);
    } else if (key == "min_parties") {
      r.min_parties = int_of_key(key, v, 1, 100000);
    } else if (key == "labels") {
      r.labels = text_of_key(key, v);
    } else if (key == "out") {
      r.out = text_of_key(key, v);
    } else {
      throw Error(fmt::format("{}: unknown key \"{}\" (a project file has coordinator, parties, coordinator_name, "
                              "days, min_parties, labels, out)",
                              source, key.substr(0, 60)));
    }
  }
  if (!coordinator) throw Error(fmt::format("{}: \"coordinator\" (HOST:PORT) is required", source));
  if (!parties) throw Error(fmt::format("{}: \"parties\" (a list of names) is required", source));
  return r;
}

ProvisionRequest read_provision_project(const std::string& path) {
  return parse_provision_project(bounded_text_of(path, "--project " + path), "--project " + path);
}

}  // namespace flynn::federated
