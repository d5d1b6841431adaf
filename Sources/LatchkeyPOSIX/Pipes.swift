import CPOSIX

/// Pipes.
package enum Pipes {
    /// A close-on-exec pipe: `read` reads what is written to `write`.
    package static func make() throws(Errno) -> (read: FileDescriptor, write: FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard latchkey_pipe(&fds) == 0 else { throw Errno.current }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }

    /// A close-on-exec, non-blocking pipe for waking a thread: `ring()` on `write` never blocks, `drain()` on
    /// `read` empties it.
    package static func doorbell() throws(Errno) -> (read: FileDescriptor, write: FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard latchkey_doorbell_pipe(&fds) == 0 else { throw Errno.current }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }
}
