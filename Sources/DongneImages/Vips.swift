import CVips
import Synchronization

/// libvips, started once per process on first use; its errors as Swift errors.
enum Vips {
    private static let started = Mutex<Bool?>(nil)

    /// Starts libvips if it is not yet; false when it cannot start.
    static func start() -> Bool {
        started.withLock { state in
            if let state { return state }
            // glibc raises its mmap threshold after large blocks are freed (up to 32 MiB), after which libvips'
            // image buffers come from the heap and stay resident once freed; fixed at 256 KiB, they are
            // mapped and unmapped as they come and go.
            dongne_fix_mmap_threshold(256 << 10)
            let ok = dongne_vips_start() == 0
            state = ok
            return ok
        }
    }

    /// The last error libvips recorded, in one line.
    static func takeError() -> String {
        guard let message = dongne_vips_take_error() else { return "libvips failed" }
        defer { dongne_vips_free(message) }
        let text = String(cString: message).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return text.isEmpty ? "libvips failed" : text
    }
}
