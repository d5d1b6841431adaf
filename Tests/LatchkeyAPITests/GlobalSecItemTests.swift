import LatchkeyTestSupport
import Testing

/// The suites that use the global `SecItem…` functions, whose configuration (`SecItemConfiguration`) is
/// process-wide: nested here so that they run one test at a time, never beside each other.
@Suite(.serialized, .dedicatedThreads) struct GlobalSecItemTests {}
