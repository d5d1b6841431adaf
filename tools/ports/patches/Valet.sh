# Source patch for the "shims+patch" run of Valet (run in /work/ports/pkg/Valet; lines are only changed in
# place, never added or removed, so reported line numbers stay upstream's).
# `@objc` cannot compile on Linux ("Objective-C interoperability is disabled") and no shim can change that:
# every `@objc` / `@objc(name)` attribute in the library sources is deleted (the Objective-C entry points,
# marked `@available(swift, obsoleted: 1.0)`, stay as plain Swift methods nobody calls).
set -e
count=$(grep -rEo '@objc(\([^)]*\))?' Sources/Valet | wc -l)
find Sources/Valet -name '*.swift' -print0 | xargs -0 perl -pi -e 's/\@objc(\([^)]*\))?\s?//g'
echo "removed $count @objc attributes from Sources/Valet"
! grep -rn '@objc' Sources/Valet

# The test suite's shared-group identifiers are chosen per Apple OS, with `#else XCTFail()` (which does not
# compile: the closures must return a SharedGroupIdentifier). Linux takes the iOS identifiers (the test
# host's entitlements run.sh grants through LATCHKEY_ACCESS_GROUPS):
#   Tests/ValetIntegrationTests/ValetIntegrationTests.swift:74,88,104  `#if os(iOS)` -> `#if os(iOS) || os(Linux)`
f=Tests/ValetTests/ValetIntegrationTests/ValetIntegrationTests.swift
perl -0pi -e 's/#if os\(iOS\)(\n\s*return SharedGroupIdentifier\()/#if os(iOS) || os(Linux)$1/g' "$f"
echo "patched $(grep -c 'os(iOS) || os(Linux)' "$f") identifier closures in $f"
