// `import Security` on Linux: Apple's Security API (SecItem…, kSec…, SecAccessControl, errSec…) as
// LatchkeySecurity provides it. Depend on this product only on Linux, and code keeps `import Security`
// unchanged on every platform:
//
//     .product(name: "Security", package: "latchkey", condition: .when(platforms: [.linux]))
@_exported public import LatchkeySecurity
