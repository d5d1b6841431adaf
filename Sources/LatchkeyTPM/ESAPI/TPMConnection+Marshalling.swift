internal import CTSS2
import FoundationEssentials
import LatchkeyCrypto
internal import LatchkeyPOSIX

/// The marshalling library: wrapped objects to and from bytes, and response codes in words.
extension TPMConnection {
    static func marshal(_ value: UnsafePointer<TPM2B_PUBLIC>) throws(TPMError) -> Data {
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PUBLIC>.size)
        var offset = 0
        guard latchkey_Tss2_MU_TPM2B_PUBLIC_Marshal(value, &buffer, buffer.count, &offset) == 0 else {
            throw TPMError(.failed, address: "", detail: "the public area could not be marshalled")
        }
        return Data(buffer.prefix(offset))
    }

    static func marshal(_ value: UnsafePointer<TPM2B_PRIVATE>) throws(TPMError) -> Data {
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PRIVATE>.size)
        var offset = 0
        guard latchkey_Tss2_MU_TPM2B_PRIVATE_Marshal(value, &buffer, buffer.count, &offset) == 0 else {
            throw TPMError(.failed, address: "", detail: "the private area could not be marshalled")
        }
        return Data(buffer.prefix(offset))
    }

    static func unmarshal(_ data: Data, into value: inout TPM2B_PUBLIC) -> Bool {
        var offset = 0
        let bytes = [UInt8](data)
        return latchkey_Tss2_MU_TPM2B_PUBLIC_Unmarshal(bytes, bytes.count, &offset, &value) == 0
            && offset == bytes.count
    }

    static func unmarshal(_ data: Data, into value: inout TPM2B_PRIVATE) -> Bool {
        var offset = 0
        let bytes = [UInt8](data)
        return latchkey_Tss2_MU_TPM2B_PRIVATE_Unmarshal(bytes, bytes.count, &offset, &value) == 0
            && offset == bytes.count
    }

    /// tpm2-tss's own words for a response code (`tpm:session(1):the authorization HMAC check failed…`).
    static func describe(_ code: UInt32) -> String {
        guard let text = latchkey_Tss2_RC_Decode(code) else {
            let digits = String(code, radix: 16)
            return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
        }
        return String(cString: text)
    }
}
