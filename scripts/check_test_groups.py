#!/usr/bin/env python3
"""Fails when a test group that CI must run did not run.

ctest counts a GTEST_SKIP as passed, and a group can also vanish from the test list (a
component not found, an #if compiled out). Given ctest's JUnit report
(`ctest --output-junit FILE`), every group below must have at least one test, and every
test of a group must have run and passed, not been skipped (tests/CMakeLists.txt makes
ctest report gtest's "[  SKIPPED ]" as skipped; its output is checked too).

  scripts/check_test_groups.py build/ctest-junit.xml
  scripts/check_test_groups.py --self-test
"""
import re
import sys
import xml.etree.ElementTree as ET

# name -> (why it can go missing, regex on ctest test names)
GROUPS = {
    "gRPC cross-silo": ("built without gRPC, or an #if FLYNN_HAVE_GRPC compiled out",
                        r"^(FederatedGrpc|FederatedCoordinatorLimits|MaliciousCoordinator|MaliciousCoordinatorControl|"
                        r"MaliciousParty|MaliciousPartyControl|FederatedTranscript|AgreedSums|CollectiveStep|"
                        r"JoinCheck|Roster|FederationKits|FederationTrial)\."),
    "MPI": ("built without MPI, or no mpirun (GTEST_SKIP)",
            r"^(FederatedMpi\.|SettingsTravel\.EverySettingReachesEveryMpiRank$)"),
    "hostile suite": ("no Python 3 interpreter at configure time", r"^flynn_hostile_suite$"),
    "OpenML (../shared)": ("../shared/data/openml not found (GTEST_SKIP)",
                           r"^(Cli\.OpenMlDatasetEndToEnd|EvalManifest\.TheSharedSuite|"
                           r"EvalReproduceCli\.OpenmlQuick|IoRealData\.(SmallestOpenMlCsvGz|EveryOpenMlFileLoads))$"),
    "reports": ("built without cairo, ../shared/data not found, or no chromium (GTEST_SKIP)",
                r"^(ReportCli|ReportBrowser)\."),
}

SKIP_MARK = "[  SKIPPED ]"


def outcomes(root):
    """{test name: 'passed' | 'failed' | 'skipped'} from a ctest JUnit tree."""
    out = {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        status = (case.get("status") or "").lower()
        text = "".join(e.text or "" for e in case.iter("system-out"))
        if case.find("skipped") is not None or status in ("notrun", "disabled") or SKIP_MARK in text:
            out[name] = "skipped"
        elif case.find("failure") is not None or case.find("error") is not None or status == "fail":
            out[name] = "failed"
        else:
            out[name] = "passed"
    return out


def problems(results):
    found = []
    for group, (why, pattern) in GROUPS.items():
        rx = re.compile(pattern)
        members = {n: s for n, s in results.items() if rx.search(n)}
        if not members:
            found.append(f"{group}: no test in the list ({why})")
            continue
        for state in ("skipped", "failed"):
            bad = sorted(n for n, s in members.items() if s == state)
            if bad:
                found.append(f"{group}: {len(bad)} of {len(members)} {state} ({why}): " + ", ".join(bad[:5]))
    return found


def self_test():
    def report(cases):
        xml = "<testsuite>" + "".join(cases) + "</testsuite>"
        return outcomes(ET.fromstring(xml))
    full = ['<testcase name="FederatedGrpc.A" status="run"/>',
            '<testcase name="FederatedMpi.B" status="run"><system-out>[  PASSED  ]</system-out></testcase>',
            '<testcase name="flynn_hostile_suite" status="run"/>',
            '<testcase name="IoRealData.EveryOpenMlFileLoads" status="run"/>',
            '<testcase name="ReportBrowser.HeadlessChromiumShowsBothPages" status="run"/>']
    assert problems(report(full)) == [], problems(report(full))
    skipped = full[:1] + ['<testcase name="FederatedMpi.B" status="run"><system-out>[  SKIPPED ] x</system-out></testcase>'] + full[2:]
    p = problems(report(skipped))
    assert len(p) == 1 and p[0].startswith("MPI: 1 of 1 skipped"), p
    notrun = full[:3] + ['<testcase name="IoRealData.EveryOpenMlFileLoads" status="notrun"><skipped/></testcase>']
    assert problems(report(notrun))[0].startswith("OpenML"), problems(report(notrun))
    p = problems(report(full[1:]))
    assert len(p) == 1 and p[0].startswith("gRPC cross-silo: no test"), p
    failed = full[:2] + ['<testcase name="flynn_hostile_suite" status="fail"><failure/></testcase>'] + full[3:]
    assert problems(report(failed))[0].startswith("hostile suite: 1 of 1 failed")
    print("check_test_groups self-test: ok")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    results = outcomes(ET.parse(argv[1]).getroot())
    found = problems(results)
    for p in found:
        print(f"check_test_groups: {p}", file=sys.stderr)
    if found:
        return 1
    print(f"check_test_groups: every required group ran ({len(results)} tests in the report)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
