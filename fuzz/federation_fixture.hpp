#pragma once
// A fixed certificate for the fuzz targets of the federation's messages (fuzz_coordinator_messages,
// fuzz_party_messages): a self-signed EC P-256 certificate with CN "party01", valid for a
// century, so the targets reach the checks that parse and verify certificates. Only its
// public half is here; nothing can be signed with it.
#include <string_view>

namespace flynn::fuzzing {

inline constexpr std::string_view kCertificatePem = "-----BEGIN CERTIFICATE-----\nMIIBfDCCASGgAwIBAgIUdiaGkLAJMBylVIom1wnCQ6/0WskwCgYIKoZIzj0EAwIw\nEjEQMA4GA1UEAwwHcGFydHkwMTAgFw0yNjEyMDcwMTQyMzVaGA8yMTI2MTExMzAx\nNDIzNVowEjEQMA4GA1UEAwwHcGFydHkwMTBZMBMGByqGSM49AgEGCCqGSM49AwEH\nA0IABN4lY7EUExedoEVdahwWW2gCIDmdkC4SyJzCyIfXaKA4glMdVycspWO/PyQy\n3JSve5QghgNmean+wCuVhYuxlaejUzBRMB0GA1UdDgQWBBSKm6PDXtbmV0oTmeZM\nSUtanDxXjjAfBgNVHSMEGDAWgBSKm6PDXtbmV0oTmeZMSUtanDxXjjAPBgNVHRMB\nAf8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQCKMwF8lGusQWL3eQguB/V/zzwa\nbdsFvu2GLvr9lZRedgIhAIPngDqMeJaIEEnXo1Acun5c5dxVbzrZBySFI7Nwy5BO\n-----END CERTIFICATE-----\n";

}  // namespace flynn::fuzzing
