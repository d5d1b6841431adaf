/// Whether `byte` is an ASCII letter or digit: what collection ids and application ids are made of, besides a
/// few punctuation marks each names. By bytes, for the item paths every call checks.
func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
}

/// `isASCIIAlphanumeric` for a scalar: false for any beyond ASCII.
func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
    scalar.isASCII && isASCIIAlphanumeric(UInt8(scalar.value))
}
