public import Foundation
public import Latchkey
import Synchronization

/// `SecPolicy`: what a trust evaluation checks (`SecPolicyCreateBasicX509`, `SecPolicyCreateSSL`).
public final class SecPolicy: NSObject, PolicyConvertible, @unchecked Sendable {
    // @unchecked: immutable (one `TrustPolicy` value).
    /// The policy.
    public let policy: TrustPolicy

    /// The policy, for `kSecMatchPolicy`.
    public var trustPolicy: TrustPolicy { policy }

    /// Wraps a policy.
    public init(_ policy: TrustPolicy) {
        self.policy = policy
        super.init()
    }
}

/// `SecPolicyCreateBasicX509`.
public func SecPolicyCreateBasicX509() -> SecPolicy { SecPolicy(.basicX509) }

/// `SecPolicyCreateSSL`: TLS, for a server (with its host name, or none to skip the name check) or a client.
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy {
    SecPolicy(.ssl(server: server, hostname: hostname.map { $0 as String }))
}

/// `SecTrustResultType`, with Apple's raw values.
public enum SecTrustResultType: UInt32, Sendable {
    /// `kSecTrustResultInvalid`: not evaluated.
    case invalid = 0
    /// `kSecTrustResultProceed`.
    case proceed = 1
    /// `kSecTrustResultDeny`.
    case deny = 3
    /// `kSecTrustResultUnspecified`: trusted (no user setting says otherwise) — what a good chain gives.
    case unspecified = 4
    /// `kSecTrustResultRecoverableTrustFailure`: not trusted.
    case recoverableTrustFailure = 5
    /// `kSecTrustResultFatalTrustFailure`.
    case fatalTrustFailure = 6
    /// `kSecTrustResultOtherError`.
    case otherError = 7
}

/// `SecTrust`: certificates to evaluate under policies, against the system's CA store (Debian's
/// /etc/ssl/certs, through OpenSSL) or the anchors you set.
public final class SecTrust: NSObject, @unchecked Sendable {
    // @unchecked: every mutable field lives behind the mutex.
    private struct State {
        var evaluation: TrustEvaluation
        var outcome: (chain: [Certificate], failure: TrustFailure?)?
    }

    private let state: Mutex<State>

    init(_ evaluation: TrustEvaluation) {
        state = Mutex(State(evaluation: evaluation, outcome: nil))
        super.init()
    }

    /// Changes the settings; the next question evaluates again.
    func change(_ body: (inout TrustEvaluation) -> Void) {
        state.withLock { state in
            body(&state.evaluation)
            state.outcome = nil
        }
    }

    /// The outcome, evaluating once when needed.
    func outcome() -> (chain: [Certificate], failure: TrustFailure?) {
        state.withLock { state in
            if let outcome = state.outcome { return outcome }
            let outcome = state.evaluation.evaluate()
            state.outcome = outcome
            return outcome
        }
    }

    var certificates: [Certificate] { state.withLock { $0.evaluation.certificates } }
}

/// `SecTrustCreateWithCertificates`: `certificates` is a `SecCertificate` or an array of them (the leaf
/// first); `policies` a `SecPolicy`, an array of them, or nil (basic X.509).
public func SecTrustCreateWithCertificates(
    _ certificates: CFTypeRef, _ policies: CFTypeRef?, _ trust: UnsafeMutablePointer<SecTrust?>
) -> OSStatus {
    let list: [SecCertificate]
    if let single = certificates as? SecCertificate {
        list = [single]
    } else if let array = certificates as? [Any], !array.isEmpty, array.allSatisfy({ $0 is SecCertificate }) {
        list = array.compactMap { $0 as? SecCertificate }
    } else {
        return errSecParam
    }
    var rules: [TrustPolicy] = []
    if let policies {
        if let single = policies as? SecPolicy {
            rules = [single.policy]
        } else if let array = policies as? [Any], array.allSatisfy({ $0 is SecPolicy }) {
            rules = array.compactMap { ($0 as? SecPolicy)?.policy }
        } else {
            return errSecParam
        }
    }
    trust.pointee = SecTrust(
        TrustEvaluation(certificates: list.map(\.certificate), policies: rules.isEmpty ? [.basicX509] : rules))
    return errSecSuccess
}

/// `SecTrustSetAnchorCertificates`: trust these anchors (and, until `SecTrustSetAnchorCertificatesOnly`
/// says otherwise, only these).
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray) -> OSStatus {
    guard let anchors = anchorCertificates as? [Any], anchors.allSatisfy({ $0 is SecCertificate }) else {
        return errSecParam
    }
    trust.change {
        $0.anchors = anchors.compactMap { ($0 as? SecCertificate)?.certificate }
        $0.anchorsOnly = true
    }
    return errSecSuccess
}

/// `SecTrustSetAnchorCertificatesOnly`: false trusts the system's store beside the anchors.
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    trust.change { $0.anchorsOnly = anchorCertificatesOnly }
    return errSecSuccess
}

/// `SecTrustSetVerifyDate`.
public func SecTrustSetVerifyDate(_ trust: SecTrust, _ verifyDate: CFDate) -> OSStatus {
    trust.change { $0.date = verifyDate as Date }
    return errSecSuccess
}

/// `SecTrustSetPolicies`: a `SecPolicy` or an array of them.
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus {
    let rules: [TrustPolicy]
    if let single = policies as? SecPolicy {
        rules = [single.policy]
    } else if let array = policies as? [Any], !array.isEmpty, array.allSatisfy({ $0 is SecPolicy }) {
        rules = array.compactMap { ($0 as? SecPolicy)?.policy }
    } else {
        return errSecParam
    }
    trust.change { $0.policies = rules }
    return errSecSuccess
}

/// `SecTrustEvaluateWithError`: true when the chain is trusted; false with an `NSOSStatusErrorDomain` error
/// whose code is Apple's status (`errSecNotTrusted`, `errSecCertificateExpired`, `errSecHostNameMismatch`,
/// …) and whose description names the reason.
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    guard let failure = trust.outcome().failure else {
        error?.pointee = nil
        return true
    }
    error?.pointee = NSError(
        domain: NSOSStatusErrorDomain, code: Int(failure.status),
        userInfo: [NSLocalizedDescriptionKey: "certificate is not trusted: \(failure.reason)"])
    return false
}

/// `SecTrustGetTrustResult`: `.unspecified` for a trusted chain, `.recoverableTrustFailure` otherwise.
public func SecTrustGetTrustResult(_ trust: SecTrust, _ result: UnsafeMutablePointer<SecTrustResultType>) -> OSStatus {
    result.pointee = trust.outcome().failure == nil ? .unspecified : .recoverableTrustFailure
    return errSecSuccess
}

/// `SecTrustCopyCertificateChain`: the chain the evaluation built, leaf first (evaluating when needed).
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? {
    let chain = trust.outcome().chain
    return NSArray(array: (chain.isEmpty ? trust.certificates : chain).map(SecCertificate.init))
}

/// `SecTrustGetCertificateCount`: the number of certificates of the chain (of those given, before an
/// evaluation has built one).
public func SecTrustGetCertificateCount(_ trust: SecTrust) -> CFIndex {
    let chain = trust.outcome().chain
    return chain.isEmpty ? trust.certificates.count : chain.count
}

/// `SecTrustCopyKey`: the leaf certificate's public key.
public func SecTrustCopyKey(_ trust: SecTrust) -> SecKey? { trust.certificates.first?.publicKey.map(SecKey.init) }
