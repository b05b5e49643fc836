import Foundation
import DongneSystem

/// Files only their owner may read: the store and the identity key live in them.
enum PrivateFile {
    /// Creates an empty file at `path` with mode 0600 unless something is there already.
    static func create(_ path: String) throws(StoreError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
        } else {
            let error = SystemError.last(function: "open")
            if error.code != EEXIST { throw .file(path: path, reason: error.explanation) }
        }
    }

    /// Flushes a directory, so that a file created or renamed in it survives a power cut.
    static func syncDirectory(of path: String) {
        let descriptor = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
