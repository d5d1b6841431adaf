import Foundation
// No Security shim: LatchkeySecurity declares everything SimpleKeychain uses. This file only lets run.sh apply the
// test-file patch (NSError() -> NSError(domain:code:), a swift-corelibs-foundation gap).
