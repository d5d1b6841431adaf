import CPOSIX
import Glibc

/// A thread of its own for work that runs for the life of the process (the sync worker), started with
/// `pthread_create` and detached: what Foundation's `Thread` does, without linking swift-corelibs-foundation.
package enum DetachedThread {
    /// Starts `body` on a new detached thread named `name` (at most 15 bytes are kept, the kernel's limit).
    /// Thread creation fails only when the process is out of threads or memory; then it is a fatal error, as
    /// `Thread.start` would be.
    /// `stackBytes`: the thread's stack, when not the process's default (`ulimit -s`, 8 MiB on Debian).
    package static func start(name: String, stackBytes: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackBytes {
            // Refused only below PTHREAD_STACK_MIN (16 KiB): the default stack is used then.
            _ = pthread_attr_setstacksize(&attributes, stackBytes)
        }
        var thread = pthread_t()
        let status = pthread_create(
            &thread, &attributes,
            { context in
                let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
                // The name is for `top` and debuggers only: a name the kernel refuses leaves the thread unnamed.
                _ = latchkey_name_current_thread(body.name)
                body.run()
                return nil
            }, box)
        guard status == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            fatalError("cannot start the \(name) thread: \(Errno(status))")
        }
        pthread_detach(thread)
    }

    private final class Body: Sendable {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }
}
