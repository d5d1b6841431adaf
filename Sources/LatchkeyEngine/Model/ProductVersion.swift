/// The version of Latchkey that `latchkey --version` and `latchkeyd --version` print, and the manual pages
/// carry: one number for the tool and its agent, which are built and shipped together.
package enum ProductVersion {
    package static let number = "0.1.0"
}
