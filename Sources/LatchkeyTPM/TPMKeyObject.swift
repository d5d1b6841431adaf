package import FoundationEssentials

/// A P-256 key made inside the TPM (`TPMConnection.createP256Key`): the TPM's wrapped object, which only the
/// TPM that made it can load, and the key's public point.
package struct TPMKeyObject: Sendable, Equatable {
    /// The key's public and private areas, marshalled (the private one encrypted to the storage key).
    package var object: TPMSealedObject
    /// The public key as an uncompressed X9.63 point: `04 ‖ x ‖ y`, 65 bytes.
    package var publicPoint: Data

    package init(object: TPMSealedObject, publicPoint: Data) {
        self.object = object
        self.publicPoint = publicPoint
    }
}
