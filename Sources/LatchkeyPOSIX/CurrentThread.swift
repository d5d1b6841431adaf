import Glibc

/// The calling thread.
package enum CurrentThread {
    /// A number that tells the calling thread from the others alive now (`pthread_self`).
    package static var id: UInt64 { UInt64(pthread_self()) }
}
