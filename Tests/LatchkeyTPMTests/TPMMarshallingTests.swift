import CTSS2
import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyTPM

/// What Latchkey stores of a TPM object is the marshalled `TPM2B_PUBLIC` and `TPM2B_PRIVATE` (TPM 2.0 Part 2):
/// read here by hand, field by field, so the stored bytes are the TPM's structures and not a private format.
@Suite struct TPMMarshallingTests {
    static func uint16(_ data: Data, _ offset: Int) -> Int {
        Int(data[data.startIndex + offset]) << 8 | Int(data[data.startIndex + offset + 1])
    }

    @Test func aP256KeysPublicAreaIsTPMTPublic() throws {
        let tpm = try SoftwareTPM()
        let connection = try TPMConnection(address: tpm.tcti)
        defer { connection.close() }
        let key = try connection.createP256Key()
        let area = key.object.public
        // TPM2B: a 16-bit size, then exactly that many bytes.
        #expect(Self.uint16(area, 0) == area.count - 2)
        #expect(Self.uint16(area, 2) == 0x0023)  // type TPM_ALG_ECC
        #expect(Self.uint16(area, 4) == 0x000B)  // nameAlg TPM_ALG_SHA256
        // The unique field ends the area: TPM2B x, then TPM2B y, each 32 bytes — the key's public point.
        let y = area.suffix(32)
        #expect(Self.uint16(area, area.count - 34) == 32)
        let x = area.dropLast(34).suffix(32)
        #expect(Self.uint16(area, area.count - 68) == 32)
        #expect(Data([0x04]) + x + y == key.publicPoint)
        // The private area is a TPM2B too (encrypted to the storage key: its contents are opaque here).
        #expect(Self.uint16(key.object.private, 0) == key.object.private.count - 2)
    }

    @Test func marshallingRoundTripsAndRefusesLeftovers() throws {
        let tpm = try SoftwareTPM()
        let connection = try TPMConnection(address: tpm.tcti)
        defer { connection.close() }
        let object = try connection.createP256Key().object
        var publicArea = TPM2B_PUBLIC()
        #expect(TPMConnection.unmarshal(object.public, into: &publicArea))
        #expect(try withUnsafePointer(to: &publicArea) { try TPMConnection.marshal($0) } == object.public)
        var privateArea = TPM2B_PRIVATE()
        #expect(TPMConnection.unmarshal(object.private, into: &privateArea))
        #expect(try withUnsafePointer(to: &privateArea) { try TPMConnection.marshal($0) } == object.private)
        // A byte more, or one fewer, is not the object.
        #expect(!TPMConnection.unmarshal(object.public + Data([0]), into: &publicArea))
        #expect(!TPMConnection.unmarshal(object.public.dropLast(), into: &publicArea))
        #expect(!TPMConnection.unmarshal(Data(), into: &privateArea))
    }

    /// Debian 12's tpm2-tss words (a TPM error's message quotes them).
    @Test func responseCodesInTPM2TSSsWords() {
        #expect(TPMConnection.describe(0x9A2) == "tpm:session(1):authorization failure without DA implications")
        #expect(
            TPMConnection.describe(0x921)
                == "tpm:warn(2.0): authorizations for objects subject to DA protection are not allowed at this time because the TPM is in DA lockout mode"
        )
    }
}
