// What the ported libraries take from Apple's Foundation that swift-corelibs-foundation lacks (not Security's).
/// `NSInteger`, Apple's name for `Int` (Objective-C's typedef, which Foundation on Linux does not declare).
public typealias NSInteger = Int
