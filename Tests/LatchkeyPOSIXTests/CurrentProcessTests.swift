import Glibc
import LatchkeyPOSIX
import Synchronization
import Testing

/// What the process reads of itself without Foundation — its environment and home directory — and the
/// thread tools that replace Foundation's `Thread` and `NSLock`: sleeping, a detached named thread, a lock.
@Suite struct CurrentProcessTests {
    // The environment is read, never changed: `setenv` beside tests that read it on other threads is a race.
    @Test func theEnvironmentIsWhatGetenvReads() {
        let environment = CurrentProcess.environment
        #expect(!environment.isEmpty)
        for (name, value) in environment { #expect(getenv(name).map { String(cString: $0) } == value, "\(name)") }
        #expect(environment["PATH"] == getenv("PATH").map { String(cString: $0) })
        #expect(environment["LATCHKEY_TEST_UNSET_VARIABLE"] == nil)
        var count = 0
        while environ[count] != nil { count += 1 }
        #expect(environment.count <= count)
    }

    @Test func theHomeDirectoryIsTheUserDatabases() {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        #expect(getpwuid_r(geteuid(), &entry, &buffer, buffer.count, &found) == 0)
        #expect(CurrentProcess.homeDirectory == String(cString: entry.pw_dir))
    }

    @Test func sleepingWaitsAtLeastTheDuration() {
        let clock = ContinuousClock()
        let start = clock.now
        CurrentThread.sleep(for: .milliseconds(30))
        #expect(clock.now - start >= .milliseconds(30))
        let again = clock.now
        CurrentThread.sleep(for: .seconds(-1))
        #expect(clock.now - again < .seconds(1))
    }

    @Test func aDetachedThreadRunsWithItsName() {
        let seen = Mutex<String?>(nil)
        let done = Atomic<Bool>(false)
        DetachedThread.start(name: "latchkey-test-thread-name") {
            let name = (try? Files.read("/proc/thread-self/comm", limit: 64)).map {
                String(decoding: $0, as: UTF8.self)
            }
            seen.withLock { $0 = name }
            done.store(true, ordering: .releasing)
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while !done.load(ordering: .acquiring) && clock.now < deadline { CurrentThread.sleep(for: .milliseconds(1)) }
        #expect(seen.withLock { $0 } == "latchkey-test-t\n")  // the kernel keeps 15 bytes
    }

    @Test func aThreadLockLetsOneCallerInAtATime() {
        let lock = ThreadLock()
        nonisolated(unsafe) var counter = 0
        let threads = 4
        let finished = Atomic<Int>(0)
        for _ in 0..<threads {
            DetachedThread.start(name: "lock-test") {
                for _ in 0..<10_000 { lock.withLock { counter += 1 } }
                finished.add(1, ordering: .releasing)
            }
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while finished.load(ordering: .acquiring) < threads && clock.now < deadline {
            CurrentThread.sleep(for: .milliseconds(1))
        }
        #expect(lock.withLock { counter } == threads * 10_000)
        struct Refusal: Error {}
        #expect(throws: Refusal.self) { try lock.withLock { () throws(Refusal) in throw Refusal() } }
        #expect(lock.withLock { counter } == threads * 10_000)  // released after a throw
    }
}
