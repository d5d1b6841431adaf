import Foundation
// No Security shim: the Security product declares everything SwiftyKeychainKit uses. This file only lets run.sh
// apply the test-file patch (an `@objc(…)` class name, which Swift on Linux refuses).
