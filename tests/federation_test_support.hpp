#pragma once
// gRPC federation tests' helpers: certificates made with the openssl CLI at test time (a
// CA, "server" with extended key usage serverAuth, parties with clientAuth; EC P-256, quick
// to make; valid for 127.0.0.1 and localhost), and one `flynn federated serve` with its
// `join`s run as processes on 127.0.0.1, every one bounded by `timeout`.
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "federation_harness.hpp"
#include "test_support.hpp"

namespace flynn::test {

/// make_pki (federation_harness.hpp) for a coordinator "server" and `parties`.
inline void make_federation_pki(const std::string& dir, const std::vector<std::string>& parties) {
  std::vector<std::string> names = {"server"};
  names.insert(names.end(), parties.begin(), parties.end());
  make_pki(dir, names);
}

/// What one CLI federation left: the coordinator's and each party's exit code and output.
struct CliFederation {
  CommandResult serve;
  std::vector<CommandResult> joins;
};

/// Runs `flynn federated serve` (port 0, the PKI of make_federation_pki in `pki`, plus
/// `serve_flags`) and one `flynn federated join` per element of `join_flags` (party p uses
/// certificate "party<p>" and its flags: --data, --model, ...), in `dir`. Output files are
/// named after `tag`. Every process is bounded (120 s for parties, 150 s for the server).
inline CliFederation run_cli_federation(const std::string& dir, const std::string& pki,
                                        const std::string& serve_flags,
                                        const std::vector<std::string>& join_flags,
                                        const std::string& tag) {
  const std::size_t n = join_flags.size();
  std::string script = fmt::format(
      "cd '{0}'; F='{1}'; "
      "( timeout 150 \"$F\" federated serve --listen 127.0.0.1:0 --parties {2} --ca {3}/ca.pem "
      "--cert {3}/server.pem --key {3}/server.key {4} > {5}.serve.out 2> {5}.serve.err; "
      "echo $? > {5}.serve.rc ) & "
      "port=; for i in $(seq 300); do "
      "port=$(sed -n 's/.*(port \\([0-9][0-9]*\\)).*/\\1/p' {5}.serve.err | head -n1); "
      "[ -n \"$port\" ] && break; sleep 0.1; done; ",
      dir, FLYNN_CLI_PATH, n, pki, serve_flags, tag);
  for (std::size_t p = 0; p < n; ++p)
    script += fmt::format(
        "( timeout 120 \"$F\" federated join --server 127.0.0.1:$port --ca {0}/ca.pem --cert "
        "{0}/party{1}.pem --key {0}/party{1}.key {2} > {3}.join{1}.out 2> {3}.join{1}.err; "
        "echo $? > {3}.join{1}.rc ) & ",
        pki, p, join_flags[p], tag);
  script += "wait";
  run_shell(script);
  auto text = [&](const std::string& name) {
    const std::string path = dir + "/" + name;
    return std::filesystem::exists(path) ? read_text(path) : std::string();
  };
  auto result = [&](const std::string& base) {
    CommandResult r;
    const std::string rc = text(base + ".rc");
    r.exit_code = rc.empty() ? -1 : std::stoi(rc);
    r.out = text(base + ".out");
    r.err = text(base + ".err");
    return r;
  };
  CliFederation f;
  f.serve = result(tag + ".serve");
  for (std::size_t p = 0; p < n; ++p) f.joins.push_back(result(fmt::format("{}.join{}", tag, p)));
  return f;
}

}  // namespace flynn::test
