# Source patch for the "shims+patch" run of SwiftyRSA (run in pkg/SwiftyRSA; lines are only changed in place,
# never added or removed, so reported line numbers stay upstream's).
# `@objc` and `@nonobjc` cannot compile on Linux ("Objective-C interoperability is disabled") and no shim can
# change that: every such attribute is deleted from the library (its Objective-C wrappers in
# SwiftyRSA+ObjC.swift stay as plain Swift classes) and from the tests' TestUtils.
set -e
count=$(grep -rEo '@(non)?objc(\([^)]*\))?' Sources/SwiftyRSA Tests/SwiftyRSATests | wc -l)
find Sources/SwiftyRSA Tests/SwiftyRSATests -name '*.swift' -print0 | xargs -0 perl -pi -e 's/\@(non)?objc(\([^)]*\))?\s?//g'
echo "removed $count @objc/@nonobjc attributes"
! grep -rnE '@(non)?objc' Sources/SwiftyRSA Tests/SwiftyRSATests
