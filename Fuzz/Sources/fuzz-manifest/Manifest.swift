import DongneCore
import FuzzSupport

/// Blob manifests (`BlobManifest(parsing:)`), as peers will send them for the photos their messages name.
///
/// Beyond not crashing: whatever the parser accepts, making a manifest of the same fields gives the same bytes
/// and hash (the encoding is canonical, so a manifest has one form), and that manifest reads back equal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifest(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    let bytes = input.rest()
    let manifest: BlobManifest
    do { manifest = try BlobManifest(parsing: bytes) } catch {
        _ = error.description
        return 0
    }
    do {
        let made = try BlobManifest(
            mediaType: manifest.mediaType, size: manifest.size, chunks: manifest.chunks, width: manifest.width,
            height: manifest.height, thumbnail: manifest.thumbnail)
        expect(made.bytes == bytes && made.hash == manifest.hash, "the same fields encode differently")
        expect((try? BlobManifest(parsing: made.bytes)) == made, "a manifest made here does not read back")
    } catch {
        expect(false, "the parser accepted fields the maker refuses: \(error)")
    }
    return 0
}
