import Foundation

/// Why a photo could not be prepared or drawn.
public enum PhotoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file is not a JPEG, PNG, WebP or HEIC image.
    case notAnImage(path: String)
    /// The file cannot be read (missing, a folder, no permission).
    case unreadable(path: String, reason: String)
    /// The prepared photo is larger than a blob may be.
    case tooLarge(bytes: Int, limit: Int)
    /// libvips failed on it (a broken image, say).
    case imageFailed(path: String, reason: String)

    /// One line for people.
    public var description: String {
        switch self {
        case .notAnImage(let path): "\(path): not a photo (dongne takes JPEG, PNG, WebP and HEIC)"
        case .unreadable(let path, let reason): "\(path): \(reason)"
        case .tooLarge(let bytes, let limit):
            "the photo is \(Self.mebibytes(bytes)) once prepared (turned upright and saved again without its "
                + "metadata); the most it may be is \(Self.mebibytes(limit)): send a smaller or scaled-down copy"
        case .imageFailed(let path, let reason): "\(path): the image could not be read: \(reason)"
        }
    }

    /// `8.4 MiB`, one decimal.
    private static func mebibytes(_ bytes: Int) -> String {
        let value = Double(bytes) / Double(1 << 20)
        return value == value.rounded() ? "\(Int(value)) MiB" : String(format: "%.1f MiB", value)
    }
}
