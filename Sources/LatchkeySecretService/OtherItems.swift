import FoundationEssentials
import LatchkeyEngine

/// Under the isolated policy, what one call's caller may do with other programs' items (issue 53): read
/// those whose access lists name it and those the user allowed it once; be offered, as locked search results,
/// those it may be asked about. Made for each call by `SecretServiceServer.otherItems()`; its closures reach
/// the server's state, on the bus thread.
struct OtherItems {
    /// The keychain across every group, to find other programs' items (finding reads no secret).
    let everyGroup: any KeychainService
    /// The keychain across every group for reading one item the caller may read, logged with why it may.
    let reading: (Data) -> any KeychainService
    /// Whether the caller may read the item a reference names: on its list, or allowed once.
    let mayRead: (Data) -> Bool
    /// Whether the user can be asked now: only then are items offered.
    let mayAsk: Bool
    /// Whether the item was offered to this connection and is not yet allowed.
    let isOffered: (Data) -> Bool
    /// Records items offered to this connection by a search.
    let offer: ([Data]) -> Void
    /// Records that an item was read: an allowance for one read is spent.
    let read: (Data) -> Void
}
