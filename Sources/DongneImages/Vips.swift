import CVips
import Synchronization

/// libvips, started once per process on first use; its errors as Swift errors.
public enum Vips {
    /// Sets the process up for photos with bounded memory, first thing in `main`, before any other thread
    /// exists (the `dongne` command calls it; a library changes no process-wide setting behind its program's
    /// back):
    /// - libvips decodes a large photo that must turn (beyond 8 MB of pixels) into a temporary file rather than
    ///   memory; it reads this from the environment, which is safe to change only while one thread runs;
    /// - glibc's mmap threshold is fixed at 256 KiB: glibc raises it after large blocks are freed (up to
    ///   32 MiB), after which libvips' image buffers come from the heap and stay resident once freed.
    public static func prepareProcessForPhotos() {
        dongne_vips_prefer_disc_for_large_images()
        dongne_fix_mmap_threshold(256 << 10)
    }

    private static let started = Mutex<Bool?>(nil)

    /// Starts libvips if it is not yet; false when it cannot start.
    static func start() -> Bool {
        started.withLock { state in
            if let state { return state }
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
