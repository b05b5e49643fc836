public import DongneCore
import Foundation

/// The node's Ed25519 identity on disk: the 32-byte seed as hex in one line, in a file only its owner can read.
///
/// The file is created with mode 0600 under a temporary name, synced, then renamed into place, so a crash never
/// leaves half a key. A key file that others can read is refused rather than used, as ssh refuses one: a key
/// that leaked is not an identity any more, and silently fixing the mode would hide that.
public enum IdentityFile {
    /// The file name inside the data directory.
    public static let fileName = "identity.key"

    /// Loads the identity at `path`, or makes a new one there if there is none.
    public static func loadOrCreate(at path: String) throws(StoreError) -> SigningKey {
        if FileManager.default.fileExists(atPath: path) { return try load(from: path) }
        let key = SigningKey.generate()
        try create(key, at: path)
        return key
    }

    /// Loads the identity at `path`.
    public static func load(from path: String) throws(StoreError) -> SigningKey {
        var status = stat()
        guard stat(path, &status) == 0 else { throw .file(path: path, reason: String(cString: strerror(errno))) }
        guard status.st_mode & 0o077 == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw .file(path: path, reason: "the identity key has mode 0\(mode); others may read it (chmod 600 \(path))")
        }
        guard let data = FileManager.default.contents(atPath: path),
            let text = String(data: data, encoding: .utf8),
            let seed = Hex.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)),
            let key = SigningKey(seed: seed)
        else { throw .file(path: path, reason: "not a dongne identity key (expected 64 hex digits)") }
        return key
    }

    /// Writes `key` to a new file at `path`, readable and writable by its owner only.
    public static func create(_ key: SigningKey, at path: String) throws(StoreError) {
        let temporary = path + ".new"
        unlink(temporary)
        // Created 0600 from the start (O_EXCL: never an existing file), so the seed is never readable by others.
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .file(path: temporary, reason: String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data((Hex.encode(key.seedBytes) + "\n").utf8))
            try handle.synchronize()
            try handle.close()
        } catch {
            unlink(temporary)
            throw .file(path: path, reason: "cannot write the identity key: \(error.localizedDescription)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .file(path: path, reason: "cannot write the identity key: \(reason)")
        }
    }
}
