import Glibc

/// A shared library loaded at run time (`dlopen`), for libraries only a few commands need: linked into the
/// executable, each would be loaded — with everything it depends on — by every process at start (libpq and
/// its Kerberos, LDAP and TLS libraries cost every `latchkey` command about 6 ms).
package final class DynamicLibrary: @unchecked Sendable {
    // @unchecked: the handle is only read after `init`, and `dlsym` is thread-safe.
    private let handle: UnsafeMutableRawPointer

    /// Loads the library by its file name (`libpq.so.5`), searched as the dynamic loader searches;
    /// the loader's own message when it cannot.
    package init(_ name: String) throws(DynamicLibraryError) {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            throw DynamicLibraryError(message: Self.lastError() ?? "\(name) cannot be loaded")
        }
        self.handle = handle
    }

    // A library stays loaded until the process ends: function pointers taken from it may outlive this object.

    /// The address of a function the library exports, as a function of type `T` (a `@convention(c)`
    /// function type that must match the C declaration).
    package func function<T>(_ name: String, as type: T.Type = T.self) throws(DynamicLibraryError) -> T {
        guard let address = dlsym(handle, name) else {
            throw DynamicLibraryError(message: Self.lastError() ?? "\(name) is missing")
        }
        return unsafeBitCast(address, to: type)
    }

    private static func lastError() -> String? { dlerror().map { String(cString: $0) } }
}

/// Why a library or one of its functions could not be loaded (the dynamic loader's message).
package struct DynamicLibraryError: Error, Sendable, CustomStringConvertible {
    /// The dynamic loader's message.
    package let message: String
    package var description: String { message }
}
