import Foundation

/// The errors Security's functions hand out (`SecKey…`, `SecAccessControlCreateWithFlags`): what Apple's
/// `SecError` makes (utilities/SecCFError.c) — domain `NSOSStatusErrorDomain`, the status as code, and the message
/// under `kCFErrorDescriptionKey` ("NSDescription"), not a localized description. Core Foundation then describes
/// such an error as "The operation couldn’t be completed. (OSStatus error -50 - RSAdecrypt wrong input (err
/// -27))", and code compares that text (JOSESwift's suite does); swift-corelibs-foundation would say "The
/// operation could not be completed" and leave the message out, so this class describes itself as Core
/// Foundation does.
final class SecurityError: NSError, @unchecked Sendable {
    // @unchecked: NSError's state is immutable after init; this class adds none.

    /// Core Foundation's `kCFErrorDescriptionKey`.
    static let descriptionKey = "NSDescription"

    /// An error of `status` with `message` as its description.
    init(_ status: OSStatus, _ message: String) {
        super.init(domain: NSOSStatusErrorDomain, code: Int(status), userInfo: [Self.descriptionKey: message])
    }

    /// Never archived.
    required init?(coder: NSCoder) { nil }

    /// Core Foundation's description of an error with a description but no localized one.
    override var localizedDescription: String {
        if let localized = userInfo[NSLocalizedDescriptionKey] as? String { return localized }
        let message = userInfo[Self.descriptionKey] as? String ?? ""
        return "The operation couldn’t be completed. (OSStatus error \(code) - \(message))"
    }
}
