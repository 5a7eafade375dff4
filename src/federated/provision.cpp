// `flynn federated provision` and `revoke`: the CA, one kit per site, the CRL.
#include "flynn/federated/provision.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "federated/certificate_issuer.hpp"
#include "federated/kit_folder.hpp"
#include "federated/site_kit.hpp"
#include "flynn/error.hpp"

namespace flynn::federated {

namespace fs = std::filesystem;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read {}", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A site name is a certificate CN and a folder name: letters, digits, '.', '-', '_'.
void check_site_name(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 64 && name != "ca" && name.front() != '.' &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
                  });
  if (!ok)
    throw Error(fmt::format("site name '{}': use 1 to 64 letters, digits, '.', '-' or '_' (not 'ca', not "
                            "starting with '.')",
                            name));
}

void check_request(const ProvisionRequest& r) {
  if (r.out.empty()) throw Error("--out: the folder to write the kits to is required");
  const HostPort hp = split_coordinator_address(r.coordinator);
  if (hp.port < 1) throw Error(fmt::format("--coordinator '{}': the parties need a port from 1 to 65535", r.coordinator));
  if (r.days < 1) throw Error(fmt::format("--days {}: must be at least 1", r.days));
  std::set<std::string> names = {r.coordinator_name};
  check_site_name(r.coordinator_name);
  for (const std::string& p : r.parties) {
    check_site_name(p);
    if (!names.insert(p).second) throw Error(fmt::format("--parties: '{}' is named twice (or is the coordinator)", p));
  }
  if (static_cast<int>(r.parties.size()) < std::max(1, r.min_parties))
    throw Error(fmt::format("--parties: {} part{} but --min-parties is {} (the parties would refuse the federation)",
                            r.parties.size(), r.parties.size() == 1 ? "y" : "ies", r.min_parties));
  for (const std::string& n : names)
    if (fs::exists(fs::symlink_status(fs::path(r.out) / n)))
      throw Error(fmt::format("{}: exists; a kit is never overwritten (provision another name, or revoke it with "
                              "'flynn federated revoke' and remove the folder to issue the name again)",
                              (fs::path(r.out) / n).string()));
}

// Every serial the CA revoked, in sites.json's "revoked_serials" (a name issued again after
// its revocation keeps its old serial there), and the revoked sites' own serials (lists
// written before "revoked_serials" existed).
std::vector<std::string> revoked_serials(const nlohmann::json& sites) {
  std::vector<std::string> serials;
  if (sites.contains("revoked_serials"))
    for (const auto& s : sites.at("revoked_serials")) serials.push_back(s.get<std::string>());
  for (const auto& [n, v] : sites.at("sites").items()) {
    if (!v.value("revoked", false)) continue;
    const std::string serial = v.at("serial").get<std::string>();
    if (std::find(serials.begin(), serials.end(), serial) == serials.end()) serials.push_back(serial);
  }
  return serials;
}

// A name issued before may be issued again only once its certificate is revoked (whoever
// holds the old kit would otherwise join as that name too); its old serial stays revoked.
void retire_earlier_certificates(nlohmann::json& sites, const ProvisionRequest& r) {
  std::vector<std::string> names = r.parties;
  names.push_back(r.coordinator_name);
  bool reissued = false;
  for (const std::string& n : names) {
    if (!sites.at("sites").contains(n)) continue;
    const nlohmann::json& earlier = sites.at("sites").at(n);
    if (!earlier.value("revoked", false))
      throw Error(fmt::format("site '{}' was provisioned under {} before (serial {}) and its certificate is not revoked: "
                              "revoke it first ('flynn federated revoke {} --out {}'), or provision another name",
                              n, r.out, earlier.value("serial", std::string("?")), n, r.out));
    reissued = true;
  }
  // Before the new certificates replace the entries: the old serials, kept for every CRL.
  if (reissued) sites["revoked_serials"] = revoked_serials(sites);
}

// The CA of DIR/ca, created (and put in place whole) when there is none.
std::optional<StagedFolder> ca_folder(const std::string& ca_dir, int days, IssuedPem& ca, bool& created) {
  if (fs::exists(fs::path(ca_dir) / "ca.key")) {
    ca.certificate = read_all(ca_dir + "/ca.pem");
    ca.key = read_all(ca_dir + "/ca.key");
    created = false;
    return std::nullopt;
  }
  if (fs::exists(fs::symlink_status(ca_dir)))
    throw Error(fmt::format("{}: exists but holds no ca.key; a CA is never overwritten", ca_dir));
  ca = CertificateIssuer::create_ca("flynn federation CA", days);
  created = true;
  const CertificateIssuer issuer(ca.certificate, ca.key);
  return StagedFolder(ca_dir, {{"ca.pem", ca.certificate, 0644},
                               {"ca.key", ca.key, 0600},
                               {"crl.pem", issuer.revocation_list({}, days), 0644},
                               {"sites.json", "{\"sites\": {}}\n", 0644}});
}

std::string sites_path(const std::string& dir) { return dir + "/ca/sites.json"; }

nlohmann::json read_sites(const std::string& dir) {
  try {
    nlohmann::json j = nlohmann::json::parse(read_all(sites_path(dir)));
    if (!j.is_object() || !j.contains("sites") || !j.at("sites").is_object() ||
        (j.contains("revoked_serials") && !j.at("revoked_serials").is_array()))
      throw Error(fmt::format("{}: not the CA's list of sites (expected {{\"sites\": {{...}}, \"revoked_serials\": [...]}})",
                              sites_path(dir)));
    return j;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not the CA's list of sites ({})", sites_path(dir), e.what()));
  }
}

}  // namespace

ProvisionOutcome provision(const ProvisionRequest& r) {
  check_request(r);
  ProvisionOutcome out;
  out.ca_dir = (fs::path(r.out) / "ca").string();
  IssuedPem ca;
  std::optional<StagedFolder> staged_ca = ca_folder(out.ca_dir, r.days, ca, out.ca_created);
  const CertificateIssuer issuer(ca.certificate, ca.key);
  const std::string crl = out.ca_created ? issuer.revocation_list({}, r.days) : read_all(out.ca_dir + "/crl.pem");
  nlohmann::json sites = out.ca_created ? nlohmann::json{{"sites", nlohmann::json::object()}} : read_sites(r.out);
  retire_earlier_certificates(sites, r);

  KitSpec spec{r.coordinator, r.parties, r.min_parties, r.labels};
  std::vector<StagedFolder> kits;
  auto stage = [&](const std::string& name, bool coordinator) {
    const std::string host = split_coordinator_address(r.coordinator).host;
    const IssuedPem site = issuer.issue(name, coordinator ? TlsRole::Server : TlsRole::Client,
                                        coordinator ? alt_names_for_host(host) : std::vector<std::string>{}, r.days);
    sites["sites"][name] = {{"role", coordinator ? "coordinator" : "party"}, {"serial", site.serial_hex}};
    const std::string path = (fs::path(r.out) / name).string();
    kits.emplace_back(path, kit_files(spec, name, coordinator, ca.certificate, site, crl));
    out.kits.push_back(path);
  };
  stage(r.coordinator_name, true);
  for (const std::string& p : r.parties) stage(p, false);

  // Everything is staged: put it in place, or take back what was put when a rename fails.
  std::vector<StagedFolder*> committed;
  try {
    if (staged_ca) {
      staged_ca->commit();
      committed.push_back(&*staged_ca);
    }
    for (StagedFolder& k : kits) {
      k.commit();
      committed.push_back(&k);
    }
    replace_file(sites_path(r.out), sites.dump(2) + "\n", 0644);
  } catch (...) {
    for (StagedFolder* f : committed) f->roll_back();
    throw;
  }
  return out;
}

std::vector<std::string> revoke(const std::string& dir, const std::string& name, int crl_days) {
  const std::string ca_dir = dir + "/ca";
  if (!fs::exists(ca_dir + "/ca.key"))
    throw Error(fmt::format("{}: no CA here (expected {}/ca.key, written by 'flynn federated provision --out {}')",
                            dir, ca_dir, dir));
  nlohmann::json sites = read_sites(dir);
  if (!sites["sites"].contains(name)) {
    std::string known;
    for (const auto& [n, v] : sites["sites"].items()) known += (known.empty() ? "" : ", ") + n;
    throw Error(fmt::format("no site '{}' was provisioned under {} (sites: {})", name, dir, known));
  }
  sites["sites"][name]["revoked"] = true;
  const std::vector<std::string> serials = revoked_serials(sites);
  sites["revoked_serials"] = serials;
  const CertificateIssuer issuer(read_all(ca_dir + "/ca.pem"), read_all(ca_dir + "/ca.key"));
  const std::string crl = issuer.revocation_list(serials, crl_days);
  replace_file(ca_dir + "/crl.pem", crl, 0644);
  replace_file(sites_path(dir), sites.dump(2) + "\n", 0644);
  std::vector<std::string> updated;
  for (const auto& [n, v] : sites["sites"].items()) {
    const std::string kit = (fs::path(dir) / n).string();
    if (!fs::exists(kit + "/" + kit_file_name)) continue;
    replace_file(kit + "/crl.pem", crl, 0644);
    updated.push_back(kit);
  }
  return updated;
}

}  // namespace flynn::federated
