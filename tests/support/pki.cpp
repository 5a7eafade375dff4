#include "pki.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace flynn::test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string wait_for_text(const std::string& path, const std::string& needle, double seconds) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    std::ifstream f(path);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (text.find(needle) != std::string::npos) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

// ---- certificates -------------------------------------------------------------------------

void make_pki(const std::string& dir, const std::vector<std::string>& names) {
  fs::create_directories(dir);
  // Extended key usage: serverAuth for the coordinator ("server"), clientAuth for parties.
  write_text(dir + "/server.cnf", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  write_text(dir + "/ext.cnf", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=clientAuth\n");
  std::string script = fmt::format(
      "set -e; cd '{}'; "
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=ca "
      "-keyout ca.key -out ca.pem -days 2 2>/dev/null; ",
      dir);
  for (const std::string& n : names)
    script += fmt::format(
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN={0} "
        "-keyout {0}.key -out {0}.csr 2>/dev/null; "
        "openssl x509 -req -in {0}.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out {0}.pem "
        "-days 2 -extfile {1}.cnf 2>/dev/null; ",
        n, n == "server" ? "server" : "ext");
  const auto r = run_shell(script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

void make_crl(const std::string& dir, const std::vector<std::string>& revoked, const std::string& out,
              const std::string& extra) {
  write_text(dir + "/crl-ca.cnf",
             "[ ca ]\ndefault_ca = fed\n[ fed ]\ndatabase = crl-index.txt\ncrlnumber = "
             "crl-number\ndefault_md = sha256\ndefault_crl_days = 2\n");
  std::string script = fmt::format(
      "set -e; cd '{}'; rm -f crl-index.txt*; : > crl-index.txt; echo 01 > crl-number; ", dir);
  for (const std::string& n : revoked)
    script += fmt::format("openssl ca -config crl-ca.cnf -keyfile ca.key -cert ca.pem -revoke {}.pem "
                          "2>/dev/null; ", n);
  script += fmt::format("openssl ca -config crl-ca.cnf -keyfile ca.key -cert ca.pem -gencrl {} -out {} "
                        "2>/dev/null", extra, out);
  const auto r = run_shell(script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

std::string party_name(int p) { return fmt::format("party{:02d}", p); }

void make_federation_pki(const std::string& dir, const std::vector<std::string>& parties) {
  std::vector<std::string> names = {"server"};
  names.insert(names.end(), parties.begin(), parties.end());
  make_pki(dir, names);
}

}  // namespace flynn::test
