// Apple's Security re-exports CoreFoundation, whose CFString, CFDictionary, CFData, … are on Linux the
// Foundation classes they bridge to: re-exported too, so that a file with only `import Security` (or
// `public import Security`) names them in its API as it would on Apple platforms.
@_exported public import Foundation
// `import Security` on Linux: Apple's Security API (SecItem…, kSec…, SecAccessControl, errSec…) as
// LatchkeySecurity provides it. Depend on this product only on Linux, and code keeps `import Security`
// unchanged on every platform:
//
//     .product(name: "Security", package: "latchkey", condition: .when(platforms: [.linux]))
@_exported public import LatchkeySecurity
