/// The version the helpers print: Latchkey's.
enum HelperVersion {
    static let text = "0.1.0"
}
