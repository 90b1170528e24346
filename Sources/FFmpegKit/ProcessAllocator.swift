import CTesseraShim

/// The C allocator's settings for the whole process (glibc's `mallopt`).
public enum ProcessAllocator {
    /// Keeps the memory of freed blocks for the next ones, for a process that allocates and frees
    /// blocks of megabytes all the time (a segment's payload or result, several a second).
    ///
    /// By default glibc maps such blocks from the kernel, or raises that threshold as it goes and then
    /// returns the free end of its heap, so every payload lands on fresh pages the kernel must fault in
    /// and zero: in a coordinator moving a gigabyte a second, a sixth of its processor time (more in a
    /// virtual machine, where fresh pages may also come from the host). Kept, those pages are reused,
    /// and the process's memory settles at its high-water mark (in the coordinator: the send window's
    /// payloads in flight and the results waiting) instead of wandering with how its heap was last
    /// trimmed.
    ///
    /// Blocks up to 32 MB come from the heap; freed memory goes back to the kernel past 256 MB free at
    /// the end of a heap (glibc keeps a heap per arena, and threads may use arenas of their own).
    /// Returns false when the allocator has no such settings.
    @discardableResult
    public static func keepFreedMemory() -> Bool {
        tessera_malloc_keep_freed(32 << 20, 256 << 20) == 1
    }

    /// One heap for every thread. glibc gives threads arenas of their own (up to eight per core), and a
    /// worker starts a thread per segment: over thousands of segments each arena kept its own freed and
    /// fragmented memory, and a worker's resident size crept up (137 to 187 MB over 1,800 small segments,
    /// 230 MB after 10,000 damaged tasks); with one arena it stays at its high-water mark. A worker's few
    /// threads allocate little once their codecs are open, so they seldom wait for one another's lock.
    /// It binds only threads that have not allocated yet: `tessera worker` sets it before `main` (a
    /// constructor in the shim). Returns false when the allocator has no such setting.
    @discardableResult
    public static func useOneArena() -> Bool {
        tessera_malloc_one_arena() == 1
    }
}
