import DongneVectors
import Foundation

// Writes Protocol/vectors/documents.json (or the file named as the first argument).
let path = CommandLine.arguments.dropFirst().first ?? DocumentVectors.relativePath
do {
    try DocumentVectors.render().write(to: URL(fileURLWithPath: path))
    print("wrote \(path)")
} catch {
    FileHandle.standardError.write(Data("dongne-vectors: \(error)\n".utf8))
    exit(1)
}
