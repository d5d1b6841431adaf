# Source patch for the "shims+patch" run of SimpleKeychain (run in /work/ports/pkg/SimpleKeychain; lines are
# only changed in place, never added or removed, so reported line numbers stay upstream's).
# swift-corelibs-foundation's NSError has no init() (Apple's inherits NSObject's); no shim can add one
# (an extension cannot override NSObject.init()). Test-only, one line:
#   Tests/SimpleKeychainTests/SimpleKeychainErrorSpec.swift:45  `NSError()` -> `NSError(domain: "", code: 0)`
set -e
f=Tests/SimpleKeychainTests/SimpleKeychainErrorSpec.swift
grep -n 'NSError()' "$f"
sed -i 's/XCTAssertFalse(sut ~= NSError())/XCTAssertFalse(sut ~= NSError(domain: "", code: 0))/' "$f"
! grep -n 'NSError()' "$f"
echo "patched $f"
