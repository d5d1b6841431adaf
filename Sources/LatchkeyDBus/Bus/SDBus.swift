import CSystemd
import LatchkeyPOSIX

/// libsystemd's sd-bus, loaded from `libsystemd.so.0` at the first use rather than linked: linked, libsystemd
/// (with its compression and gcrypt libraries) cost every `latchkey` command about 0.4 ms at start, and only
/// the agent and `latchkey import --from-secret-service` talk D-Bus. The calls are CSystemd's generated
/// `latchkey_sd_bus_…` wrappers (tools/generate-loaders), as every C library's are.
enum SDBus {
    /// Checked once per process; `Bus.init` reports a failure (libsystemd is part of every Debian system, so
    /// one means a broken installation). Every call is made on a `Bus` or on a message of one, and a `Bus`
    /// exists only once this found every function.
    static let loaded: Result<Void, DynamicLibraryError> = {
        guard let reason = latchkey_csystemd_unavailable() else { return .success(()) }
        return .failure(DynamicLibraryError(message: String(cString: reason)))
    }()
}
