/// Whether `scalar` is an ASCII letter or digit: what collection ids and application ids may be made of,
/// besides a few punctuation marks each names.
func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
    ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
}
