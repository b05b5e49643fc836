public import DongneCore
import Foundation
import DongneSystem

/// The node's Ed25519 identity on disk: the 32-byte seed as hex in one line, in a file only its owner can read.
///
/// A new key is written to a uniquely named temporary file created with mode 0600, synced, then linked into
/// place with `link(2)`, which never replaces an existing file: if two processes start at once, one key wins
/// and both use it. The directory is synced afterwards, so the key cannot vanish in a power cut after
/// documents were signed with it. A key file that others can read, or that belongs to another user, is
/// refused rather than used, as ssh refuses one: a key that leaked is not an identity any more, and silently
/// fixing the mode would hide that.
public enum IdentityFile {
    /// The file name inside the data directory.
    public static let fileName = "identity.key"

    /// Loads the identity at `path`, or makes a new one there if there is none.
    public static func loadOrCreate(at path: String) throws(StoreError) -> SigningKey {
        if let key = try loadIfPresent(from: path) { return key }
        let key = SigningKey.generate()
        guard try create(key, at: path) else { return try load(from: path) }  // another process won the race
        return key
    }

    /// Loads the identity at `path`.
    public static func load(from path: String) throws(StoreError) -> SigningKey {
        guard let key = try loadIfPresent(from: path) else { throw .file(path: path, reason: "no identity key") }
        return key
    }

    /// Writes `key` to a new file at `path`; false (and nothing written) if a file is there already.
    @discardableResult
    public static func create(_ key: SigningKey, at path: String) throws(StoreError) -> Bool {
        let temporary = path + ".\(getpid()).\(String(UInt64.random(in: .min ... .max), radix: 36)).new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .file(path: temporary, reason: SystemError.last(function: "open").explanation)
        }
        defer { unlink(temporary) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data((Hex.encode(key.seedBytes) + "\n").utf8))
            try handle.synchronize()
            try handle.close()
        } catch {
            throw .file(path: path, reason: "cannot write the identity key: \(error.localizedDescription)")
        }
        guard link(temporary, path) == 0 else {
            let error = SystemError.last(function: "link")
            if error.code == EEXIST { return false }
            throw .file(path: path, reason: "cannot write the identity key: \(error.explanation)")
        }
        PrivateFile.syncDirectory(of: path)
        return true
    }

    private static func loadIfPresent(from path: String) throws(StoreError) -> SigningKey? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let error = SystemError.last(function: "stat")
            if error.code == ENOENT { return nil }
            throw .file(path: path, reason: error.explanation)
        }
        guard status.st_uid == geteuid() else {
            throw .file(path: path, reason: "the identity key belongs to another user (uid \(status.st_uid))")
        }
        guard status.st_mode & 0o077 == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw .file(
                path: path, reason: "the identity key has mode 0\(mode); others may read it (chmod 600 \(path))")
        }
        guard let data = FileManager.default.contents(atPath: path),
            let text = String(data: data, encoding: .utf8),
            let seed = Hex.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)),
            let key = SigningKey(seed: seed)
        else { throw .file(path: path, reason: "not a dongne identity key (expected 64 hex digits)") }
        return key
    }
}
