import DongneVectors
import Foundation

// Writes Protocol/vectors/documents.json and Protocol/vectors/session.json.
do {
    try DocumentVectors.render().write(to: URL(fileURLWithPath: DocumentVectors.relativePath))
    try SessionVectors.render().write(to: URL(fileURLWithPath: SessionVectors.relativePath))
    print("wrote \(DocumentVectors.relativePath) and \(SessionVectors.relativePath)")
} catch {
    FileHandle.standardError.write(Data("dongne-vectors: \(error)\n".utf8))
    exit(1)
}
