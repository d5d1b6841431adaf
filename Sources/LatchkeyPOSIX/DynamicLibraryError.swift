/// Why a library loaded at run time, or one of its functions, cannot be used (the dynamic loader's message):
/// what a module reports when its generated loader's `latchkey_<module>_unavailable()` says so
/// (tools/generate-loaders).
package struct DynamicLibraryError: Error, Sendable, CustomStringConvertible {
    /// The dynamic loader's message.
    package let message: String
    package var description: String { message }

    /// An error with the loader's message.
    package init(message: String) { self.message = message }
}
