/// Whether a keychain's keys are available (docs/SEMANTICS.md §4).
public enum LockState: Hashable, Sendable, CustomStringConvertible {
    /// Not unlocked since it was opened: only `dk`/`dku` items are available (with the device key).
    case neverUnlocked
    /// Locked after an unlock: `ck`/`cku` and `dk`/`dku` items stay available; `ak`-family items do not.
    case locked
    /// Unlocked: every item is available.
    case unlocked

    /// Whether data protected "after first unlock" is available (`ck`, `cku`).
    public var isProtectedDataAvailable: Bool { self != .neverUnlocked }

    public var description: String {
        switch self {
        case .neverUnlocked: "locked (not unlocked since opened)"
        case .locked: "locked"
        case .unlocked: "unlocked"
        }
    }
}
