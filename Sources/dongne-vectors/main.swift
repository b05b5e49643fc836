import DongneVectors
import Foundation

// Writes Protocol/vectors/documents.json, session.json and blobs.json.
do {
    try DocumentVectors.render().write(to: URL(fileURLWithPath: DocumentVectors.relativePath))
    try SessionVectors.render().write(to: URL(fileURLWithPath: SessionVectors.relativePath))
    try BlobVectors.render().write(to: URL(fileURLWithPath: BlobVectors.relativePath))
    print("wrote \(DocumentVectors.relativePath), \(SessionVectors.relativePath) and \(BlobVectors.relativePath)")
} catch {
    FileHandle.standardError.write(Data("dongne-vectors: \(error)\n".utf8))
    exit(1)
}
