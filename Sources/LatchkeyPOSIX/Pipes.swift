import CPOSIX

/// Pipes.
package enum Pipes {
    /// A close-on-exec pipe: `read` reads what is written to `write`.
    package static func make() throws(Errno) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard latchkey_pipe(&fds) == 0 else { throw Errno.current }
        return (fds[0], fds[1])
    }

    /// A close-on-exec, non-blocking pipe for waking a thread: `Descriptors.ring` on `write` never blocks,
    /// `Descriptors.drain` on `read` empties it.
    package static func doorbell() throws(Errno) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard latchkey_doorbell_pipe(&fds) == 0 else { throw Errno.current }
        return (fds[0], fds[1])
    }
}
