import Glibc

/// Pages of memory mapped for one purpose (the random pools).
package enum Memory {
    /// `size` bytes of private, anonymous, zeroed memory (a whole number of pages), or nil.
    package static func mapPages(_ size: Int) -> UnsafeMutableRawPointer? {
        let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapped, mapped != MAP_FAILED else { return nil }
        return mapped
    }

    /// `munmap`: gives pages from `mapPages` back to the kernel (their memory is no longer the process's).
    package static func unmapPages(_ pages: UnsafeMutableRawPointer, size: Int) { _ = munmap(pages, size) }

    /// `MADV_WIPEONFORK`: a forked child finds these pages zeroed. False where the kernel refuses it.
    package static func wipeOnFork(_ pages: UnsafeMutableRawPointer, size: Int) -> Bool {
        madvise(pages, size, MADV_WIPEONFORK) == 0
    }

    /// `MADV_DONTDUMP`: the pages stay out of core dumps. False where the kernel refuses it.
    package static func excludeFromCoreDumps(_ pages: UnsafeMutableRawPointer, size: Int) -> Bool {
        madvise(pages, size, MADV_DONTDUMP) == 0
    }
}
