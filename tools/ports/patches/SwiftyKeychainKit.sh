# Source patch for the "shims+patch" run of SwiftyKeychainKit (run in pkg/SwiftyKeychainKit; lines are only
# changed in place, never added or removed, so reported line numbers stay upstream's).
# Its archiving test names its NSCoding class for the Objective-C runtime, `@objc(ArchivableValue)`, which
# Swift on Linux refuses ("Objective-C interoperability is disabled"): the attribute becomes a comment, and
# NSKeyedArchiver records the class under its Swift name instead. Nothing of Security's.
set -e
f=Tests/SwiftyKeychainKitTests/KeychainTests.Archivable.swift
grep -q '^@objc(ArchivableValue)$' "$f"
sed -i 's|^@objc(ArchivableValue)$|// @objc(ArchivableValue): not on Linux|' "$f"
echo "commented out @objc(ArchivableValue) in $f"
