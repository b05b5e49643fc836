import CVips
import DongneCore
import Foundation

/// A photo made ready to leave the machine: read with libvips (JPEG, PNG, WebP, HEIC), turned upright by its
/// EXIF orientation, written again with no metadata at all (phones put where a photo was taken in its EXIF),
/// and a thumbnail made for its manifest. What a messaging app does before it uploads a photo.
public struct PreparedPhoto: Sendable {
    /// The prepared file (in the folder the caller gave): the bytes that travel.
    public let path: String
    /// Its media type: `image/jpeg` (for JPEG and HEIC), `image/png` or `image/webp`.
    public let mediaType: String
    /// Its size in bytes.
    public let size: Int
    /// Pixels, after turning upright.
    public let width: Int
    public let height: Int
    /// A JPEG of at most ``BlobLimits/maximumThumbnailBytes``.
    public let thumbnail: [UInt8]

    /// Prepares the photo at `source`, writing the prepared file into `folder`. Throws ``PhotoError``: a file
    /// that is not an image, one that cannot be read, or a photo still too large once prepared.
    public static func prepare(_ source: String, into folder: String) throws(PhotoError) -> PreparedPhoto {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source, isDirectory: &isFolder) else {
            throw .unreadable(path: source, reason: "no such file")
        }
        guard !isFolder.boolValue else { throw .unreadable(path: source, reason: "a folder, not a file") }
        guard FileManager.default.isReadableFile(atPath: source) else {
            throw .unreadable(path: source, reason: "not readable")
        }
        guard Vips.start() else { throw .imageFailed(path: source, reason: "libvips did not start") }
        let format = dongne_vips_photo_format(source)
        guard format != 0 else { throw .notAnImage(path: source) }
        let (suffix, mediaType) = Self.output(for: format)
        let output = folder + "/prepared-\(UUID().uuidString).\(suffix)"
        var (width, height): (Int32, Int32) = (0, 0)
        let savedAs: Int32 = format == 4 ? 1 : format
        guard dongne_vips_prepare(source, output, savedAs, &width, &height) == 0 else {
            try? FileManager.default.removeItem(atPath: output)
            throw .imageFailed(path: source, reason: Vips.takeError())
        }
        do throws(PhotoError) {
            let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
            guard size <= BlobLimits.maximumBlobBytes else {
                throw PhotoError.tooLarge(bytes: size, limit: BlobLimits.maximumBlobBytes)
            }
            guard size > 0, width > 0, height > 0, Int(width) <= BlobLimits.maximumImageSide,
                Int(height) <= BlobLimits.maximumImageSide
            else { throw PhotoError.imageFailed(path: source, reason: "\(width)×\(height) pixels, \(size) bytes") }
            return PreparedPhoto(
                path: output, mediaType: mediaType, size: size, width: Int(width), height: Int(height),
                thumbnail: try thumbnail(of: output))
        } catch {
            try? FileManager.default.removeItem(atPath: output)
            throw error
        }
    }

    private static func output(for format: Int32) -> (suffix: String, mediaType: String) {
        switch format {
        case 2: ("png", "image/png")
        case 3: ("webp", "image/webp")
        default: ("jpg", "image/jpeg")
        }
    }

    /// The largest thumbnail that fits the manifest's limit, trying smaller sides and qualities in turn.
    private static func thumbnail(of path: String) throws(PhotoError) -> [UInt8] {
        for (side, quality) in [(192, 70), (160, 60), (128, 50), (96, 40), (64, 30)] {
            var bytes: UnsafeMutableRawPointer?
            var length = 0
            guard dongne_vips_thumbnail(path, Int32(side), Int32(quality), &bytes, &length) == 0, let bytes else {
                throw .imageFailed(path: path, reason: Vips.takeError())
            }
            defer { dongne_vips_free(bytes) }
            if length <= BlobLimits.maximumThumbnailBytes {
                return Array(UnsafeRawBufferPointer(start: bytes, count: length))
            }
        }
        throw .imageFailed(path: path, reason: "no thumbnail fits \(BlobLimits.maximumThumbnailBytes) bytes")
    }
}
